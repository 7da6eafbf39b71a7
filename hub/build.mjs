// Builds the Hub's browser code with esbuild (run by `npm run build`): Preact pages bundled into one entry ES module,
// the dashboard's chart library (uPlot) split into a chunk the entry imports when a chart is first drawn, and one
// stylesheet, with hashed names in dist/hub/assets; dist/hub/manifest.json names the entry, its stylesheet and their
// sizes (the API serves /hub/assets/<name> as immutable and writes the names into the page).
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
    splitting: true,
    entryNames: '[name]-[hash]',
    chunkNames: '[name]-[hash]',
    outdir: join(outdir, 'assets'),
    metafile: true,
  })
  const outputs = Object.entries(result.metafile.outputs)
  const entry = outputs.find(([path, output]) => output.entryPoint?.endsWith('src/main.tsx') && path.endsWith('.js'))
  const script = entry && basename(entry[0])
  const stylesheet = entry?.[1].cssBundle && basename(entry[1].cssBundle)
  if (!script || !stylesheet) throw new Error('the hub build wrote no script or no stylesheet')
  const gzip = (name) => gzipSync(readFileSync(join(outdir, 'assets', name)), { level: 9 }).length
  const chunks = outputs
    .filter(([path]) => path.endsWith('.js') && path !== entry[0])
    .map(([path]) => basename(path))
    .sort()
  const manifest = {
    script,
    stylesheet,
    scriptGzipBytes: gzip(script),
    stylesheetGzipBytes: gzip(stylesheet),
    chunks: chunks.map((name) => ({ name, gzipBytes: gzip(name) })),
  }
  writeFileSync(join(outdir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`)
  return manifest
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2)
  const at = args.indexOf('--outdir')
  const outdir = at >= 0 ? resolve(args[at + 1] ?? '') : undefined
  const manifest = await buildHub(outdir ? { outdir } : {})
  const where = relative(process.cwd(), outdir ?? join(here, '..', 'dist', 'hub')) || '.'
  const chunks = manifest.chunks.map((c) => `, ${c.name} (${c.gzipBytes} B gzip)`).join('')
  console.log(
    `hub → ${where}: ${manifest.script} (${manifest.scriptGzipBytes} B gzip), ${manifest.stylesheet} (${manifest.stylesheetGzipBytes} B gzip)${chunks}`,
  )
}
