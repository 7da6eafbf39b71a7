// The browser SDK in a real browser (issue 14, item 8): each variant in en-GB, en-US and de-DE, keyboard use,
// WCAG 2.2 AA rules (axe), zero CSP violations under the strict policy, the failures a page must see
// (disallowed origin, expired session), nothing after destroy(), and the demo shop's checkout flow ending in an
// allocation whose amounts equal the quote's. Skipped with a notice where Chromium is not installed.
/* eslint-disable @typescript-eslint/no-explicit-any -- API bodies and the SDK's objects inside the page are untyped here */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import AxeBuilder from '@axe-core/playwright'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { startShop, type Shop } from '../../examples/shop/server.js'
import { defaultPublicFileDirs } from '../../src/services/public-files.js'
import { setAllowedOrigins } from '../../src/services/organisations.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { createOrg, importDemoCatalogue, type OrgFixture } from '../helpers/factories.js'
import { repoRoot } from '../helpers/process.js'
import { buildSdkForTest, type BuiltSdk } from '../helpers/sdk-build.js'
import { describeInBrowser, launchChromium, startStrictPage, WCAG_22_AA } from './harness.js'

const LONG = 180_000
const OPERATOR = 'Canopy Test Operator Ltd'
const SCREENSHOT = join(repoRoot, 'docs', 'widget.png')

type Variant = 'embedded' | 'takeover' | 'checkout'
interface Created {
  sessionId: string
  clientSecret: string
  quoteId: string
}

let sdk: BuiltSdk
let t: TestApp
let apiBase: string
let merchant: OrgFixture
let shop: Shop
let strict: { url: string; close(): Promise<void> }
let disallowed: { url: string; close(): Promise<void> }
let browser: Browser

/** What the API sends from the merchant's backend. */
async function api(method: string, path: string, body?: unknown): Promise<Record<string, any>> {
  const response = await fetch(`${apiBase}${path}`, {
    method,
    headers: { authorization: `Bearer ${merchant.apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  })
  const json = (await response.json()) as Record<string, any>
  expect(response.ok, `${method} ${path}: ${JSON.stringify(json)}`).toBe(true)
  return json
}

/** A session like the florist's (GBP 47.97 from London), or a US one in dollars (en-US). */
function createSession(variant: Variant, locale: string): Promise<Created> {
  const us = locale === 'en-US'
  return api('POST', `/v3/${variant === 'checkout' ? 'checkout' : 'post-purchase'}/sessions`, {
    organisationId: merchant.organisationId,
    ...(variant === 'checkout' ? {} : { sdkVariant: variant }),
    locale,
    consumer: us ? { reference: 'c_us', countryCode: 'USA', state: 'CA' } : { reference: 'c_gb', countryCode: 'GBR' },
    transaction: us ? { amount: 100, currencyCode: 'USD' } : { amount: 47.97, currencyCode: 'GBP' },
  }) as Promise<Created>
}

interface Tab {
  context: BrowserContext
  page: Page
  /** Requests the page made to the API, in order. */
  apiRequests: string[]
  violations(): Promise<{ directive: string; blocked: string }[]>
}

/** A fresh page (fixed viewport, reduced motion) that records CSP violations and its requests to the API. */
async function open(url: string): Promise<Tab> {
  const context = await browser.newContext({ viewport: { width: 720, height: 1100 }, reducedMotion: 'reduce', locale: 'en-GB' })
  const page = await context.newPage()
  page.setDefaultTimeout(60_000)
  // Runs before the page's own scripts (DevTools injection, not governed by the page's CSP).
  await page.addInitScript(() => {
    const seen: { directive: string; blocked: string }[] = []
    Object.defineProperty(window, '__violations', { value: seen })
    document.addEventListener('securitypolicyviolation', (e) => seen.push({ directive: e.violatedDirective, blocked: e.blockedURI }))
  })
  const apiRequests: string[] = []
  page.on('request', (request) => {
    if (request.url().startsWith(apiBase)) apiRequests.push(`${request.method()} ${request.url().slice(apiBase.length)}`)
  })
  await page.goto(url)
  return {
    context,
    page,
    apiRequests,
    violations: () => page.evaluate(() => (window as unknown as { __violations: { directive: string; blocked: string }[] }).__violations),
  }
}

/** Mounts an element on the strict page through the SDK's public API; resolves with "ready" or the loaderror code. */
function mount(page: Page, created: Pick<Created, 'sessionId' | 'clientSecret'>, variant: Variant, locale?: string): Promise<string> {
  return page.evaluate(
    ({ sessionId, clientSecret, variant, locale }) =>
      new Promise<string>((resolve) => {
        const { Canopy } = window as unknown as { Canopy: new (o: object) => any }
        const element = new Canopy(locale ? { locale } : {})
          .elements({ sessionId, clientSecret })
          .create(variant, { contributionAmounts: ['1.00', '2.00'] })
        const events: unknown[] = []
        Object.assign(window, { element, events })
        for (const name of ['ready', 'change', 'confirm', 'close', 'loaderror']) element.on(name, (e: unknown) => events.push([name, e]))
        element.on('ready', () => resolve('ready'))
        element.on('loaderror', (e: { error: { code: string } }) => resolve(e.error.code))
        element.mount('#mount')
      }),
    { sessionId: created.sessionId, clientSecret: created.clientSecret, variant, locale },
  )
}

/** Intl puts no-break spaces between figures and units; the tests compare with plain spaces. */
const spaces = (value: string | null) => (value ?? '').replace(/[\u00a0\u202f]/g, ' ')
const text = async (page: Page, part: string) => spaces(await page.locator(`canopy-impact [part="${part}"]`).first().textContent())
const options = async (page: Page) => (await page.locator('canopy-impact [part="option"]').allTextContents()).map(spaces)
const events = (page: Page) => page.evaluate(() => (window as unknown as { events: [string, any][] }).events)
/** The focused element: inside the widget's shadow root its part, else its id. */
const focused = (page: Page) =>
  page.evaluate(() => {
    const active = document.activeElement
    const inner = active?.shadowRoot?.activeElement
    return inner ? `widget:${inner.getAttribute('part') ?? inner.id}` : (active?.id ?? active?.tagName ?? '')
  })

async function expectAccessible(page: Page, label: string): Promise<void> {
  const results = await new AxeBuilder({ page }).withTags(WCAG_22_AA).analyze()
  const violations = results.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)
  expect(violations, label).toEqual([])
}

describeInBrowser('the browser SDK in Chromium', () => {
  // Inside the suite, so that nothing starts where the suite is skipped (no Chromium).
  beforeAll(async () => {
    sdk = buildSdkForTest()
    t = await createTestApp(
      { OPERATOR_LEGAL_NAME: OPERATOR },
      { publicFiles: { sdk: sdk.dir, demoImages: defaultPublicFileDirs().demoImages } },
    )
    apiBase = (await t.app.listen({ port: 0, host: '127.0.0.1' })).replace('localhost', '127.0.0.1')
    await importDemoCatalogue(t.db)
    merchant = await createOrg(t.db, { mcc: '5992' })
    shop = await startShop({ apiBase, organisationId: merchant.organisationId, apiKey: merchant.apiKey })
    strict = await startStrictPage(apiBase)
    disallowed = await startStrictPage(apiBase)
    await setAllowedOrigins(t.db, { organisationId: merchant.organisationId, allowedOrigins: [shop.url, strict.url] }, new Date())
    browser = await launchChromium()
  }, LONG)

  afterAll(async () => {
    await browser?.close()
    await Promise.all([shop?.close(), strict?.close(), disallowed?.close()])
    await t?.close()
    sdk?.remove()
  }, LONG)

  it(
    'renders every variant in en-GB, en-US and de-DE with their formats, passes axe (WCAG 2.2 AA) and violates no CSP rule',
    async () => {
      const expected: Record<string, (page: Page) => Promise<void>> = {
        'en-GB': async (page) => {
          expect(await text(page, 'switch')).toBe('Offset it for £0.28')
          expect(await text(page, 'footprint')).toBe("This order's estimated footprint is 10.8 kg CO₂e.")
          expect(await text(page, 'equivalents')).toContain('28 miles')
          expect(await options(page)).toEqual(['✓ £1.00', '✓ £2.00'])
          expect(await text(page, 'projects')).toContain('Agroforestry restoration, Rwanda (demo) — Rwanda')
          expect(await page.locator('canopy-impact [part="disclosure"]').count()).toBe(0)
        },
        'en-US': async (page) => {
          expect(await text(page, 'switch')).toMatch(/^Offset it for \$\d+\.\d{2}$/)
          expect(await text(page, 'footprint')).toMatch(/^This order's estimated footprint is [\d.,]+ lb CO₂e\.$/)
          expect(await text(page, 'equivalents')).toMatch(/for \d+ miles/)
          expect(await options(page)).toEqual(['✓ $1.00', '✓ $2.00'])
          const disclosure = await text(page, 'disclosure')
          expect(disclosure).toContain(`${OPERATOR} collects contributions`)
          expect(disclosure).toContain('Rewild Trust (demo) and Ocean Commons (demo)')
          expect(disclosure).toContain('within 30 to 60 days')
          expect(disclosure).toMatch(/may be tax-deductible\. A service fee of [\d.]+% of each contribution/)
        },
        'de-DE': async (page) => {
          expect(await text(page, 'switch')).toBe('Für 0,28 £ ausgleichen')
          expect(await text(page, 'footprint')).toBe('Geschätzter Fußabdruck dieser Bestellung: 10,8 kg CO₂e.')
          expect(await text(page, 'equivalents')).toContain('44 km')
          expect(await options(page)).toEqual(['✓ 1,00 £', '✓ 2,00 £'])
          expect(await text(page, 'projects')).toContain('Ruanda')
        },
      }
      for (const variant of ['embedded', 'takeover', 'checkout'] as const) {
        for (const locale of ['en-GB', 'en-US', 'de-DE']) {
          const label = `${variant} ${locale}`
          const tab = await open(strict.url)
          try {
            expect(await mount(tab.page, await createSession(variant, locale), variant, locale), label).toBe('ready')
            expect(await tab.page.locator('canopy-impact').getAttribute('variant')).toBe(variant)
            await expected[locale]?.(tab.page)
            expect(await tab.page.locator('canopy-impact [part="root"]').getAttribute('lang'), label).toBe(locale)
            // Partner logos load from the API (img-src) and are shown.
            const logo = tab.page.locator('canopy-impact [part="partner-logo"]').first()
            await expect
              .poll(() => logo.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth), { timeout: 30_000 })
              .toBe(256)
            if (variant === 'takeover') expect(await tab.page.locator('canopy-impact dialog[open]').count(), label).toBe(1)
            // Interact (toggle, pick), then check accessibility and the CSP record.
            await tab.page.locator('canopy-impact [part="switch"]').click()
            await tab.page.locator('canopy-impact [part="option"]').first().click()
            await expectAccessible(tab.page, label)
            expect(await tab.violations(), label).toEqual([])
          } finally {
            await tab.context.close()
          }
        }
      }
    },
    LONG * 2,
  )

  it(
    'is usable with the keyboard: Tab reaches the switch, Space toggles it and the live region says so',
    async () => {
      const tab = await open(strict.url)
      try {
        expect(await mount(tab.page, await createSession('embedded', 'en-GB'), 'embedded')).toBe('ready')
        await tab.page.locator('#before').focus()
        await tab.page.keyboard.press('Tab')
        expect(await focused(tab.page)).toBe('widget:switch')
        const toggle = tab.page.locator('canopy-impact [part="switch"]')
        expect(await toggle.getAttribute('aria-checked')).toBe('false')
        await tab.page.keyboard.press('Space')
        expect(await toggle.getAttribute('aria-checked')).toBe('true')
        expect(await text(tab.page, 'summary')).toBe('Selected: £0.28.')
        await tab.page.keyboard.press('Tab')
        expect(await focused(tab.page)).toBe('widget:option')
        await tab.page.keyboard.press('Space')
        expect(await tab.page.locator('canopy-impact [part="option"]').first().getAttribute('aria-pressed')).toBe('true')
        expect(await text(tab.page, 'summary')).toBe('Selected: £1.28.')
        await tab.page.keyboard.press('Space')
        expect(await tab.page.locator('canopy-impact [part="option"]').first().getAttribute('aria-pressed')).toBe('false')
        expect((await events(tab.page)).filter(([name]) => name === 'change')).toHaveLength(3)
        expect(await tab.violations()).toEqual([])
      } finally {
        await tab.context.close()
      }
    },
    LONG,
  )

  it(
    'keeps Tab inside the takeover, closes it with Escape and gives focus back to the opener',
    async () => {
      const tab = await open(strict.url)
      try {
        await tab.page.locator('#before').focus()
        expect(await mount(tab.page, await createSession('takeover', 'en-GB'), 'takeover')).toBe('ready')
        expect(await tab.page.locator('canopy-impact dialog[open]').count()).toBe(1)
        expect(await focused(tab.page)).toBe('widget:title')
        const seen = new Set<string>()
        for (let i = 0; i < 12; i++) {
          await tab.page.keyboard.press('Tab')
          seen.add(await focused(tab.page))
        }
        // Every stop is inside the dialog, and the cycle covers its controls.
        expect([...seen].every((stop) => stop.startsWith('widget:'))).toBe(true)
        expect(seen).toEqual(new Set(['widget:close', 'widget:switch', 'widget:option', 'widget:confirm', 'widget:dismiss']))
        await tab.page.keyboard.press('Shift+Tab')
        expect(await focused(tab.page)).toMatch(/^widget:/)
        await tab.page.keyboard.press('Escape')
        expect(await tab.page.locator('canopy-impact dialog[open]').count()).toBe(0)
        expect((await events(tab.page)).find(([name]) => name === 'close')?.[1]).toEqual({ elementType: 'takeover', reason: 'escape' })
        expect(await focused(tab.page)).toBe('before')
        expect(await tab.violations()).toEqual([])
      } finally {
        await tab.context.close()
      }
    },
    LONG,
  )

  it(
    'gives loaderror network_or_origin on a page whose origin the organisation does not allow, and shows nothing',
    async () => {
      const tab = await open(disallowed.url)
      try {
        const messages: string[] = []
        tab.page.on('console', (message) => messages.push(message.text()))
        expect(await mount(tab.page, await createSession('embedded', 'en-GB'), 'embedded')).toBe('network_or_origin')
        const [, detail] = (await events(tab.page)).find(([name]) => name === 'loaderror') ?? []
        expect(detail.error).toMatchObject({ type: 'network_error', code: 'network_or_origin', status: null })
        expect(detail.error.message).toContain(`this page's origin (${disallowed.url})`)
        expect(await tab.page.locator('canopy-impact').isHidden()).toBe(true)
        // Chromium names the cause in the console: no Access-Control-Allow-Origin on the preflight.
        expect(messages.join('\n')).toMatch(/CORS|Access-Control-Allow-Origin/)
        expect(await tab.violations()).toEqual([])
      } finally {
        await tab.context.close()
      }
    },
    LONG,
  )

  it(
    'gives loaderror session_expired for an expired session (the page may read the 410)',
    async () => {
      const created = await createSession('embedded', 'en-GB')
      const ttl = t.config.SESSION_TTL_SECONDS * 1000
      t.clock.advance(ttl)
      const tab = await open(strict.url)
      try {
        expect(await mount(tab.page, created, 'embedded')).toBe('session_expired')
        const [, detail] = (await events(tab.page)).find(([name]) => name === 'loaderror') ?? []
        expect(detail.error).toMatchObject({ type: 'api_error', code: 'session_expired', status: 410, requestId: expect.any(String) })
        expect(await tab.page.locator('canopy-impact').isHidden()).toBe(true)
      } finally {
        t.clock.advance(-ttl)
        await tab.context.close()
      }
    },
    LONG,
  )

  it(
    'makes no request after destroy(), emits nothing more, and leaves nothing on the page',
    async () => {
      const tab = await open(strict.url)
      try {
        expect(await mount(tab.page, await createSession('takeover', 'en-GB'), 'takeover')).toBe('ready')
        await tab.page.locator('canopy-impact [part="switch"]').click()
        await tab.page.locator('#before').evaluate(() => undefined)
        const before = tab.apiRequests.length
        const eventsBefore = (await events(tab.page)).length
        const after = await tab.page.evaluate(() => {
          const { element } = window as unknown as { element: any }
          element.destroy()
          const refused = ['mount', 'update', 'on'].filter((method) => {
            try {
              element[method]('#mount', () => {})
              return false
            } catch {
              return true
            }
          })
          return { refused, left: document.querySelectorAll('canopy-impact').length }
        })
        expect(after).toEqual({ refused: ['mount', 'update', 'on'], left: 0 })
        await tab.page.keyboard.press('Escape')
        await tab.page.keyboard.press('Tab')
        await tab.page.waitForLoadState('networkidle')
        expect(tab.apiRequests.slice(before)).toEqual([])
        expect((await events(tab.page)).length).toBe(eventsBefore)

        // Destroyed while loading: the read is aborted and nothing is emitted.
        const created = await createSession('embedded', 'en-GB')
        const outcome = await tab.page.evaluate(
          ({ sessionId, clientSecret }) =>
            new Promise<string[]>((resolve) => {
              const { Canopy } = window as unknown as { Canopy: new () => any }
              const emitted: string[] = []
              const element = new Canopy().elements({ sessionId, clientSecret }).create('embedded')
              for (const name of ['ready', 'loaderror']) element.on(name, () => emitted.push(name))
              element.mount('#mount')
              element.destroy()
              setTimeout(() => resolve(emitted), 1000)
            }),
          created,
        )
        expect(outcome).toEqual([])
        expect(await tab.violations()).toEqual([])
      } finally {
        await tab.context.close()
      }
    },
    LONG,
  )

  it(
    'through the demo shop: checkout widget → total → payment → an allocation whose amounts equal the quote’s → post-purchase widget',
    async () => {
      const tab = await open(`${shop.url}/?locale=en-GB`)
      try {
        await expectAccessible(tab.page, 'product page')
        await tab.page.locator('#buy').click()
        await tab.page.waitForURL(/\/checkout\/order-/)
        const toggle = tab.page.locator('canopy-impact [part="switch"]')
        await toggle.waitFor()
        expect(await tab.page.locator('#total').textContent()).toBe('£47.97')
        await toggle.click()
        expect(await tab.page.locator('#total').textContent()).toBe('£48.25')
        await tab.page.locator('canopy-impact [part="option"]', { hasText: '£1.00' }).click()
        expect(await tab.page.locator('#total').textContent()).toBe('£49.25')
        await expectAccessible(tab.page, 'checkout page')
        await tab.page.locator('#pay').click()
        await tab.page.waitForURL(/\/orders\/order-/)

        // The allocation the shop's backend made equals the quote: credits split exactly as the quote's amounts.
        const allocationId = await tab.page.locator('main').getAttribute('data-allocation-id')
        const allocation = await api('GET', `/funds/allocations/${allocationId}`)
        const quote = await api('GET', `/quotes/${allocation.quoteId}`)
        const sum = (entries: Record<string, number>[], key: string) => Math.round(entries.reduce((s, e) => s + (e[key] ?? 0) * 100, 0))
        const credits = {
          impact: sum(allocation.credits, 'impactAmount'),
          impactTax: sum(allocation.credits, 'impactSalesTaxAmount'),
          serviceFee: sum(allocation.credits, 'serviceFeeAmount'),
          serviceFeeTax: sum(allocation.credits, 'serviceFeeSalesTaxAmount'),
        }
        const amounts = quote.credits.amounts
        expect(credits).toEqual({
          impact: Math.round(amounts.impact * 100),
          impactTax: Math.round(amounts.impactTax * 100),
          serviceFee: Math.round(amounts.serviceFee * 100),
          serviceFeeTax: Math.round(amounts.serviceFeeTax * 100),
        })
        expect(Object.values(credits).reduce((a, b) => a + b)).toBe(Math.round(amounts.total * 100))
        const contribution = ['impactAmount', 'impactSalesTaxAmount', 'serviceFeeAmount', 'serviceFeeSalesTaxAmount'].reduce(
          (total, key) => total + sum(allocation.contributions, key),
          0,
        )
        expect(contribution).toBe(100)

        // The confirmation page embeds the post-purchase widget; Confirm allocates again, through the shop.
        const embedded = tab.page.locator('canopy-impact[variant="embedded"]')
        await embedded.locator('[part="switch"]').waitFor()
        await expectAccessible(tab.page, 'confirmation page')
        if (process.env.UPDATE_SCREENSHOTS === '1') {
          mkdirSync(join(repoRoot, 'docs'), { recursive: true })
          writeFileSync(SCREENSHOT, await embedded.screenshot({ animations: 'disabled' }))
        }
        await embedded.locator('[part="switch"]').click()
        await embedded.locator('[part="confirm"]').click()
        await expect
          .poll(() => tab.page.locator('#status').getAttribute('data-allocation-id'), { timeout: 60_000 })
          .toMatch(/^[0-9a-f-]{36}$/)
        expect(await tab.violations()).toEqual([])
      } finally {
        await tab.context.close()
      }
    },
    LONG,
  )

  it(
    'through the demo shop in de-DE: German formats in the checkout widget',
    async () => {
      const tab = await open(`${shop.url}/?locale=de-DE`)
      try {
        await tab.page.locator('#buy').click()
        await tab.page.waitForURL(/\/checkout\/order-/)
        await tab.page.locator('canopy-impact [part="switch"]').waitFor()
        expect(await text(tab.page, 'switch')).toBe('Für 0,28 £ ausgleichen')
        await tab.page.locator('canopy-impact [part="switch"]').click()
        expect(spaces(await tab.page.locator('#total').textContent())).toBe('48,25 £')
        expect(await tab.violations()).toEqual([])
      } finally {
        await tab.context.close()
      }
    },
    LONG,
  )

  it('has the README screenshot of the widget (UPDATE_SCREENSHOTS=1 rewrites it)', () => {
    expect(existsSync(SCREENSHOT)).toBe(true)
  })
})
