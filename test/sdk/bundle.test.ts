// @vitest-environment happy-dom
// The built files (sdk/build.mjs): the script bundle's size budget, its CSP hygiene, window.Canopy,
// and the ES module imported by plain Node (server-side rendering).
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { SDK_VERSION } from '../../sdk/src/version.js'
import { fixture, json, record, SECRET, SESSION_ID, settled, stubFetch } from './helpers.js'
import type { Canopy } from '../../sdk/src/canopy.js'

/** The budget of issue 14: the script bundle with its English strings, gzipped. */
const BUDGET_GZIP_BYTES = 20_000

let outdir: string
let script: Buffer

beforeAll(() => {
  outdir = mkdtempSync(join(tmpdir(), 'canopy-sdk-'))
  execFileSync(process.execPath, [join(import.meta.dirname, '../../sdk/build.mjs'), '--outdir', outdir, '--no-types'], { stdio: 'pipe' })
  script = readFileSync(join(outdir, 'canopy.js'))
}, 60_000)
afterAll(() => {
  rmSync(outdir, { recursive: true, force: true })
  vi.unstubAllGlobals()
})

describe('canopy.js (the script bundle)', () => {
  it(`is at most ${BUDGET_GZIP_BYTES} bytes gzipped, English strings included`, () => {
    const gzip = gzipSync(script, { level: 9 }).length
    console.info(`canopy.js: ${script.length} B, ${gzip} B gzip`)
    expect(script.toString()).toContain('Offset it for')
    expect(gzip).toBeLessThanOrEqual(BUDGET_GZIP_BYTES)
  })

  it('parses no markup, sets no inline style and evaluates no strings', () => {
    const code = script.toString()
    for (const forbidden of [
      'innerHTML',
      'outerHTML',
      'insertAdjacentHTML',
      'document.write',
      'eval(',
      'new Function',
      '.style.',
      'cssText',
    ]) {
      expect(code, forbidden).not.toContain(forbidden)
    }
    expect(code).toContain('adoptedStyleSheets')
  })

  it('defines window.Canopy, which renders a session', async () => {
    stubFetch(() => json(fixture('carbon-en-GB')))
    new Function(script.toString())()
    const CanopyClass = (window as unknown as { Canopy: typeof Canopy }).Canopy
    expect(CanopyClass.version).toBe(SDK_VERSION)
    const container = document.createElement('div')
    document.body.append(container)
    const element = new CanopyClass({ apiBase: 'https://canopy.example.com' })
      .elements({ sessionId: SESSION_ID, clientSecret: SECRET })
      .create('embedded', { contributionAmounts: ['1.00'] })
    const events = record(element)
    element.mount(container)
    await settled(events)
    expect(events.ready).toHaveLength(1)
    container.querySelector('canopy-impact')?.shadowRoot?.querySelector<HTMLElement>('[part="switch"]')?.click()
    expect(events.change[0]).toMatchObject({ amount: '0.28', amountMinor: 28 })
  })
})

describe('manifest.json and package.json', () => {
  it('records the version, the evergreen and versioned paths and the SRI integrity of each file', () => {
    const manifest = JSON.parse(readFileSync(join(outdir, 'manifest.json'), 'utf8'))
    const major = SDK_VERSION.split('.')[0]
    expect(manifest.version).toBe(SDK_VERSION)
    expect(manifest.paths).toEqual({ evergreen: `/js/v${major}/canopy.js`, versioned: `/js/v${SDK_VERSION}/canopy.js` })
    expect(manifest.files['canopy.js']).toEqual({
      bytes: script.length,
      gzipBytes: gzipSync(script, { level: 9 }).length,
      integrity: `sha384-${createHash('sha384').update(script).digest('base64')}`,
    })
    const pkg = JSON.parse(readFileSync(join(outdir, 'package.json'), 'utf8'))
    expect(pkg).toMatchObject({ version: SDK_VERSION, type: 'module', sideEffects: false, module: './canopy.mjs' })
  })
})

describe('canopy.mjs (the ES module)', () => {
  it('imports in plain Node without a DOM; loadCanopy() resolves null there', () => {
    const url = pathToFileURL(join(outdir, 'canopy.mjs')).href
    const program = `
      const sdk = await import(${JSON.stringify(url)})
      const loaded = await sdk.loadCanopy({ apiBase: 'https://canopy.example.com' })
      console.log(JSON.stringify({ loaded, version: sdk.SDK_VERSION, exports: Object.keys(sdk).sort(), hasWindow: typeof window }))`
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', program], { encoding: 'utf8' })
    expect(JSON.parse(out)).toEqual({
      loaded: null,
      version: SDK_VERSION,
      exports: ['Canopy', 'SDK_VERSION', 'defineCanopyElement', 'loadCanopy'],
      hasWindow: 'undefined',
    })
  })
})
