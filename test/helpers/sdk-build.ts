// The browser SDK built into a temporary folder by its own build script (sdk/build.mjs), so that tests serve
// and load exactly what `npm run build` writes, from a fresh clone where dist/ does not exist.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { repoRoot } from './process.js'

export interface BuiltSdk {
  dir: string
  manifest: {
    version: string
    paths: { evergreen: string; versioned: string }
    files: Record<string, { bytes: number; gzipBytes: number; integrity: string }>
  }
  remove(): void
}

export function buildSdkForTest(): BuiltSdk {
  const dir = mkdtempSync(join(tmpdir(), 'canopy-sdk-'))
  execFileSync(process.execPath, [join(repoRoot, 'sdk/build.mjs'), '--outdir', dir, '--no-types'], { stdio: 'pipe' })
  return {
    dir,
    manifest: JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  }
}
