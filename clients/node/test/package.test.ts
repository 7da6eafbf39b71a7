// The package as a merchant backend installs it: `npm run build` makes ES module and CommonJS builds with their
// .d.ts, and both load through the package's exports, with the same classes and helpers.
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { onPostgres } from '../../../test/helpers/db.js'

const packageDir = fileURLToPath(new URL('..', import.meta.url))
const repoRoot = fileURLToPath(new URL('../../..', import.meta.url))

const probe = `
  const { Canopy, CanopyError, CanopyApiError, toMinorUnits, VERSION } = lib
  const canopy = new Canopy({ apiKey: 'ck_test_x', baseUrl: 'http://127.0.0.1:1' })
  console.log(JSON.stringify({
    resources: Object.keys(canopy).filter((k) => typeof canopy[k] === 'object'),
    hierarchy: Object.getPrototypeOf(CanopyApiError) === CanopyError,
    minor: toMinorUnits('47.97', 'GBP'),
    version: VERSION,
  }))`

const run = (args: string[]) => JSON.parse(execFileSync(process.execPath, args, { cwd: repoRoot, encoding: 'utf8' }))

describe('@canopy-climate/node as built', () => {
  // No database involved: run once, on the embedded run.
  it.skipIf(onPostgres())(
    'builds ES modules and CommonJS with types, and both load through the exports',
    () => {
      execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: packageDir, stdio: 'pipe' })
      for (const file of [
        'dist/esm/index.js',
        'dist/esm/index.d.ts',
        'dist/cjs/index.js',
        'dist/cjs/index.d.ts',
        'dist/cjs/package.json',
      ]) {
        expect(existsSync(`${packageDir}/${file}`), file).toBe(true)
      }
      const fromRequire = run(['-e', `const lib = require('@canopy-climate/node');${probe}`])
      const fromImport = run(['--input-type=module', '-e', `import * as lib from '@canopy-climate/node';${probe}`])
      expect(fromRequire).toEqual(fromImport)
      expect(fromImport).toMatchObject({ hierarchy: true, minor: 4797, version: '0.1.0' })
      expect(fromImport.resources).toEqual(
        expect.arrayContaining([
          'quotes',
          'sessions',
          'allocations',
          'impactRecords',
          'organisations',
          'apiKeys',
          'webhookEndpoints',
          'webhooks',
          'summaries',
          'profitShare',
          'statements',
          'impactPartners',
          'auditEvents',
        ]),
      )
    },
    120_000,
  )
})
