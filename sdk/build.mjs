// Builds the browser SDK with esbuild (run by `npm run build`):
//   dist/sdk/canopy.js      the script bundle (IIFE, minified): defines window.Canopy
//   dist/sdk/canopy.mjs     the ES module for bundlers (no side effects at import)
//   dist/sdk/types/         TypeScript declarations of the ES module (tsc -p sdk/tsconfig.types.json)
//   dist/sdk/package.json   the npm manifest of the ES module (sideEffects: false)
//   dist/sdk/manifest.json  version, paths and SRI integrity, for the API to serve /js/v3/canopy.js
// Usage: node sdk/build.mjs [--outdir <dir>] [--no-types]
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { build } from 'esbuild'

const here = dirname(fileURLToPath(import.meta.url))

/** The version recorded in sdk/src/version.ts. */
export function sdkVersion() {
  const source = readFileSync(join(here, 'src/version.ts'), 'utf8')
  const version = /export const SDK_VERSION = '(\d+\.\d+\.\d+)'/.exec(source)?.[1]
  if (!version) throw new Error('sdk/src/version.ts must export SDK_VERSION as a quoted x.y.z version')
  return version
}

const describe = (file) => {
  const bytes = readFileSync(file)
  return {
    bytes: bytes.length,
    gzipBytes: gzipSync(bytes, { level: 9 }).length,
    integrity: `sha384-${createHash('sha384').update(bytes).digest('base64')}`,
  }
}

export async function buildSdk({ outdir = join(here, '..', 'dist', 'sdk'), types = true } = {}) {
  const version = sdkVersion()
  mkdirSync(outdir, { recursive: true })
  const common = {
    bundle: true,
    target: 'es2022',
    legalComments: 'none',
    logLevel: 'warning',
    sourcemap: 'linked',
    banner: { js: `/*! Canopy browser SDK v${version} | Apache-2.0 */` },
  }
  await build({ ...common, entryPoints: [join(here, 'src/script.ts')], format: 'iife', minify: true, outfile: join(outdir, 'canopy.js') })
  await build({ ...common, entryPoints: [join(here, 'src/index.ts')], format: 'esm', outfile: join(outdir, 'canopy.mjs') })
  if (types) {
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
    const typesDir = join(outdir, 'types')
    execFileSync(process.execPath, [tsc, '-p', join(here, 'tsconfig.types.json'), '--outDir', typesDir], { stdio: 'inherit' })
  }
  const major = version.split('.')[0]
  const manifest = {
    version,
    paths: { evergreen: `/js/v${major}/canopy.js`, versioned: `/js/v${version}/canopy.js` },
    files: { 'canopy.js': describe(join(outdir, 'canopy.js')), 'canopy.mjs': describe(join(outdir, 'canopy.mjs')) },
  }
  writeFileSync(join(outdir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`)
  const npmManifest = {
    name: 'canopy-js',
    version,
    description: 'Browser SDK of Canopy: carbon and nature impact widgets for post-purchase and checkout pages',
    license: 'Apache-2.0',
    type: 'module',
    sideEffects: false,
    module: './canopy.mjs',
    types: './types/index.d.ts',
    exports: { '.': { types: './types/index.d.ts', import: './canopy.mjs' }, './script': './canopy.js' },
  }
  writeFileSync(join(outdir, 'package.json'), `${JSON.stringify(npmManifest, null, 2)}\n`)
  return manifest
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2)
  const at = args.indexOf('--outdir')
  const outdir = at >= 0 ? resolve(args[at + 1] ?? '') : undefined
  const manifest = await buildSdk({ ...(outdir ? { outdir } : {}), types: !args.includes('--no-types') })
  const script = manifest.files['canopy.js']
  const where = relative(process.cwd(), outdir ?? join(here, '..', 'dist', 'sdk')) || '.'
  console.log(
    `sdk v${manifest.version} → ${where}: canopy.js ${script.bytes} B (${script.gzipBytes} B gzip), canopy.mjs ${manifest.files['canopy.mjs'].bytes} B`,
  )
}
