// The SDK script and the demo images, served by the API (issue 14, item 2): paths, caching, content types, CORS
// for crossorigin="anonymous", and the README's Subresource Integrity hash, which must equal the built file's.
import { createHash } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_IMPACT_PARTNERS } from '../../src/domain/data/demo-catalogue.js'
import { defaultPublicFileDirs } from '../../src/services/public-files.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { repoRoot } from '../helpers/process.js'
import { buildSdkForTest, type BuiltSdk } from '../helpers/sdk-build.js'

let t: TestApp
let sdk: BuiltSdk

beforeAll(async () => {
  sdk = buildSdkForTest()
  t = await createTestApp({}, { publicFiles: { sdk: sdk.dir, demoImages: defaultPublicFileDirs().demoImages } })
}, 120_000)
afterAll(async () => {
  await t.close()
  sdk.remove()
})

const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, headers })
const sri = (body: Buffer) => `sha384-${createHash('sha384').update(body).digest('base64')}`

describe('GET /js/v3/canopy.js and /js/v<version>/canopy.js', () => {
  it('serves the built bundle evergreen within v3 with a short cache', async () => {
    expect(sdk.manifest.paths.evergreen).toBe('/js/v3/canopy.js')
    const res = await get('/js/v3/canopy.js')
    expect(res.statusCode).toBe(200)
    expect(res.rawPayload.equals(readFileSync(join(sdk.dir, 'canopy.js')))).toBe(true)
    expect(res.headers).toMatchObject({
      'content-type': 'text/javascript; charset=utf-8',
      'cache-control': 'public, max-age=300',
      'x-content-type-options': 'nosniff',
      'access-control-allow-origin': '*',
      'cross-origin-resource-policy': 'cross-origin',
    })
    expect(res.headers['access-control-allow-credentials']).toBeUndefined()
  })

  it('serves the same file at the immutable versioned path, matching the manifest integrity (SRI)', async () => {
    const res = await get(sdk.manifest.paths.versioned)
    expect(res.statusCode).toBe(200)
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable')
    expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8')
    expect(sri(res.rawPayload)).toBe(sdk.manifest.files['canopy.js']?.integrity)
  })

  it('serves the source map beside it, and answers a matching If-None-Match with 304', async () => {
    const map = await get('/js/v3/canopy.js.map')
    expect(map.statusCode).toBe(200)
    expect(map.headers['content-type']).toBe('application/json; charset=utf-8')
    const first = await get('/js/v3/canopy.js')
    const again = await get('/js/v3/canopy.js', { 'if-none-match': String(first.headers.etag) })
    expect(again.statusCode).toBe(304)
    expect(again.body).toBe('')
    expect((await get('/js/v3/canopy.js', { 'if-none-match': '"other"' })).statusCode).toBe(200)
  })

  it.each([
    '/js/v2/canopy.js',
    '/js/v3.0.1/canopy.js',
    '/js/v3/canopy.mjs',
    '/js/v3/manifest.json',
    '/js/v3/../canopy.js',
    '/js/latest/canopy.js',
  ])('answers 404 NOT_FOUND in the error shape for %s', async (url) => {
    const res = await get(url)
    expect(res.statusCode).toBe(404)
    expect(res.json()).toMatchObject({ code: 'NOT_FOUND', requestId: expect.any(String) })
  })

  it('says so when the SDK is not built on the deployment (404)', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'canopy-nosdk-'))
    const bare = await createTestApp({}, { publicFiles: { sdk: empty, demoImages: empty } })
    try {
      const res = await bare.app.inject({ url: '/js/v3/canopy.js' })
      expect(res.statusCode).toBe(404)
      expect(res.json()).toMatchObject({ code: 'NOT_FOUND', error: 'the browser sdk is not built on this deployment: run npm run build' })
    } finally {
      await bare.close()
      rmSync(empty, { recursive: true, force: true })
    }
  })

  it("README's script tag names the versioned path and the built file's SRI hash", () => {
    const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8')
    const tag = /<script src="[^"]*(\/js\/v[\d.]+\/canopy\.js)" integrity="([^"]+)" crossorigin="anonymous"><\/script>/.exec(readme)
    expect(tag, 'README has a versioned script tag with integrity and crossorigin').not.toBeNull()
    expect(tag?.[1]).toBe(sdk.manifest.paths.versioned)
    expect(tag?.[2], 'README SRI hash: copy files["canopy.js"].integrity from the build (npm run build:sdk)').toBe(
      sdk.manifest.files['canopy.js']?.integrity,
    )
  })
})

describe('GET /demo/images/*.png', () => {
  const images = DEMO_IMPACT_PARTNERS.flatMap((partner) => Object.values(partner.images).flat())

  it('serves every image the demo catalogue names, as a PNG of the size it declares', async () => {
    expect(images.length).toBeGreaterThan(5)
    for (const image of images) {
      const res = await get(image.path)
      expect(res.statusCode, image.path).toBe(200)
      expect(res.headers).toMatchObject({
        'content-type': 'image/png',
        'cache-control': 'public, max-age=86400',
        'x-content-type-options': 'nosniff',
      })
      const png = res.rawPayload
      expect(png.subarray(1, 4).toString('ascii')).toBe('PNG')
      expect([png.readUInt32BE(16), png.readUInt32BE(20)], image.path).toEqual([image.width, image.height])
      expect(png.length).toBeLessThan(10_000)
    }
  })

  it.each(['/demo/images/unknown.png', '/demo/images/..%2Fpackage.json', '/demo/images/verdant-removals-logos.svg'])(
    'answers 404 for %s',
    async (url) => {
      expect((await get(url)).statusCode).toBe(404)
    },
  )
})
