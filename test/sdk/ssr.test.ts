// Server-side rendering: the SDK imports in plain Node (no DOM) without throwing, and says clearly
// what needs a browser.
import { describe, expect, it } from 'vitest'
import * as sdk from '../../sdk/src/index.js'
import { apiBaseOfScript } from '../../sdk/src/canopy.js'

describe('in Node, without a DOM', () => {
  it('imports without touching the DOM', () => {
    expect(typeof window).toBe('undefined')
    expect(typeof document).toBe('undefined')
    expect(typeof HTMLElement).toBe('undefined')
    expect(sdk.SDK_VERSION).toMatch(/^3\.\d+\.\d+$/)
    expect(sdk.Canopy.version).toBe(sdk.SDK_VERSION)
  })

  it('loadCanopy() resolves null', async () => {
    await expect(sdk.loadCanopy({ apiBase: 'https://canopy.example.com' })).resolves.toBeNull()
  })

  it('validates options as in a browser; only mounting needs the DOM', () => {
    const canopy = new sdk.Canopy({ apiBase: 'https://canopy.example.com', locale: 'en-US' })
    const element = canopy
      .elements({ sessionId: '7a3d8f33-6e5b-48bc-96ee-7db90cdcb414', clientSecret: 'cs_test_A_secret_B' })
      .create('checkout', { contributionAmounts: ['1.00'] })
    expect(() => element.mount('#impact')).toThrow('Canopy: mount() needs a browser DOM')
    expect(() => sdk.defineCanopyElement()).toThrow('Canopy: elements can only be mounted in a browser')
    expect(() => new sdk.Canopy({})).toThrow('apiBase is required')
  })
})

describe('apiBaseOfScript (the script bundle’s default apiBase)', () => {
  it.each([
    ['https://canopy.example.com/js/v3/canopy.js', 'https://canopy.example.com'],
    ['https://canopy.example.com/js/v3.0.0/canopy.js', 'https://canopy.example.com'],
    ['https://shop.example/canopy/js/v3/canopy.js?x=1', 'https://shop.example/canopy'],
    ['http://127.0.0.1:3000/js/v3/canopy.js', 'http://127.0.0.1:3000'],
    ['https://cdn.example/canopy.js', undefined],
    ['https://canopy.example.com/js/v3/other.js', undefined],
  ])('%s → %s', (src, apiBase) => expect(apiBaseOfScript(src)).toBe(apiBase))
})
