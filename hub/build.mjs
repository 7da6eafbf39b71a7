// Builds the Hub's browser code with esbuild (run by `npm run build`): Preact pages bundled into one ES module and
// one stylesheet with hashed names in dist/hub/assets, and dist/hub/manifest.json naming them (the API serves
// /hub/assets/<name> as immutable and writes the names into the page).
// Usage: node hub/build.mjs [--outdir <dir>]
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { basename, dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { build } from 'esbuild'

const here = dirname(fileURLToPath(import.meta.url))

export async function buildHub({ outdir = join(here, '..', 'dist', 'hub') } = {}) {
  rmSync(join(outdir, 'assets'), { recursive: true, force: true })
  mkdirSync(join(outdir, 'assets'), { recursive: true })
  const result = await build({
    entryPoints: { app: join(here, 'src/main.tsx') },
    bundle: true,
    format: 'esm',
    target: 'es2022',
    minify: true,
    sourcemap: 'linked',
    legalComments: 'none',
    logLevel: 'warning',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    entryNames: '[name]-[hash]',
    outdir: join(outdir, 'assets'),
    metafile: true,
  })
  const outputs = Object.keys(result.metafile.outputs).map((path) => basename(path))
  const script = outputs.find((name) => name.endsWith('.js'))
  const stylesheet = outputs.find((name) => name.endsWith('.css'))
  if (!script || !stylesheet) throw new Error('the hub build wrote no script or no stylesheet')
  const gzip = (name) => gzipSync(readFileSync(join(outdir, 'assets', name)), { level: 9 }).length
  const manifest = { script, stylesheet, scriptGzipBytes: gzip(script), stylesheetGzipBytes: gzip(stylesheet) }
  writeFileSync(join(outdir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`)
  return manifest
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2)
  const at = args.indexOf('--outdir')
  const outdir = at >= 0 ? resolve(args[at + 1] ?? '') : undefined
  const manifest = await buildHub(outdir ? { outdir } : {})
  const where = relative(process.cwd(), outdir ?? join(here, '..', 'dist', 'hub')) || '.'
  console.log(
    `hub → ${where}: ${manifest.script} (${manifest.scriptGzipBytes} B gzip), ${manifest.stylesheet} (${manifest.stylesheetGzipBytes} B gzip)`,
  )
}
