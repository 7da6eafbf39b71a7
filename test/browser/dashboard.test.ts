// The Hub's dashboard and allocations browser in Chromium (issue 20): three weeks of allocations and reversals in two
// currencies across a tree, then the pages by keyboard — the headline figures equal the summary API's, the chart draws
// (its table alternative lists every day), breakdowns link to the records; the records page filters and pages forwards
// and back, a record's detail shows its lines, reversal and webhook deliveries; axe WCAG 2.2 AA on each page, no CSP
// violation, and the screenshots of docs/hub/.
/* eslint-disable @typescript-eslint/no-explicit-any -- API bodies are untyped here */
import { execFileSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { HubAssets } from '../../src/services/hub-assets.js'
import { resetRollups } from '../../src/services/summary-rollups.js'
import { client, createTestApp, type TestApp } from '../helpers/app.js'
import { createOrg, floristQuote, importDemoCatalogue, type OrgFixture } from '../helpers/factories.js'
import { createHubUser, PASSWORD } from '../helpers/hub.js'
import { repoRoot } from '../helpers/process.js'
import { startReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js'
import { describeInBrowser, expectAccessible, expectCellsLabelled, launchChromium, recordCspViolations } from './harness.js'

const LONG = 180_000
const DAY = 86_400_000
const SHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? join(repoRoot, 'docs', 'hub') : mkdtempSync(join(tmpdir(), 'canopy-dash-shots-'))
// Entry and chart chunk, gzip: the entry grew by the two pages; uPlot (about 24 KB) loads only with a chart.
const ENTRY_BUDGET_BYTES = 24_000
const CHART_BUDGET_BYTES = 26_000

let hubDir: string
let t: TestApp
let base: string
let shop: OrgFixture
let branch: OrgFixture
let receiver: WebhookReceiver
let browser: Browser
let admin: { email: string; password: string }
const allocationIds: string[] = []

async function openContext(locale = 'en-GB', width = 1280): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({
    viewport: { width, height: 900 },
    locale,
    reducedMotion: 'reduce',
    timezoneId: 'Europe/London',
  })
  const page = await context.newPage()
  page.setDefaultTimeout(30_000)
  await recordCspViolations(page)
  await page.goto(`${base}/hub/sign-in`)
  await page.getByLabel('Email').fill(admin.email)
  await page.getByLabel('Password').fill(admin.password)
  await page.getByLabel('Password').press('Enter')
  await page.getByRole('navigation', { name: 'Hub' }).waitFor()
  return { context, page }
}

const shot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true })

/** The dashboard's window as the page computes it: the last 30 local days (Europe/London) up to today. */
function last30Days(): { from: string; to: string } {
  const parts = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/London', year: 'numeric', month: '2-digit', day: '2-digit' }).format(
    new Date(),
  )
  const [y, m, d] = parts.split('-').map(Number) as [number, number, number]
  const london = (year: number, month: number, day: number) => {
    // Midnight in London of a date: the UTC instant whose London wall time is 00:00.
    const guess = Date.UTC(year, month - 1, day)
    const offset =
      Number(new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/London', hour: 'numeric', hour12: false }).format(new Date(guess))) % 24
    return new Date(guess - offset * 3_600_000).toISOString()
  }
  return { from: london(y, m, d - 29), to: london(y, m, d + 1) }
}

async function allocate(org: OrgFixture, currencyCode: string, spent: number, contribution?: number): Promise<string> {
  const quote = await client(t.app, org.apiKey).post(
    '/quotes/carbon',
    floristQuote(org.organisationId, {
      transaction: { amount: spent, currencyCode },
      consumer: { reference: `consumer_${allocationIds.length % 7}`, countryCode: 'GBR' },
    }),
  )
  expect(quote.statusCode).toBe(201)
  const res = await client(t.app, org.apiKey).post(
    '/funds/allocations',
    {
      organisationId: org.organisationId,
      quoteId: quote.json().quoteId,
      credits: { amount: quote.json().credits.amounts.total },
      ...(contribution ? { contribution: { amount: contribution } } : {}),
    },
    { 'idempotency-key': randomUUID() },
  )
  expect(res.statusCode, res.body).toBe(201)
  return res.json().fundsAllocationId
}

describeInBrowser('the Hub dashboard and allocations browser in Chromium', () => {
  beforeAll(async () => {
    hubDir = mkdtempSync(join(tmpdir(), 'canopy-hub-'))
    execFileSync(process.execPath, [join(repoRoot, 'hub/build.mjs'), '--outdir', hubDir], { stdio: 'pipe' })
    t = await createTestApp(
      { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8', WEBHOOK_POLL_INTERVAL_MS: '100' },
      { hubAssets: new HubAssets(hubDir) },
    )
    // Three weeks ago, then a day at a time up to now: the browser judges "the last 30 days" by its own clock.
    t.clock.advance(Date.now() - 21 * DAY - t.clock.now().getTime())
    base = (await t.app.listen({ port: 0, host: '127.0.0.1' })).replace('localhost', '127.0.0.1')
    await importDemoCatalogue(t.db)
    shop = await createOrg(t.db, { tradingName: 'Blossom & Bloom (demo)' }, t.clock.now())
    branch = await createOrg(
      t.db,
      { parentId: shop.organisationId, tradingName: 'Blossom & Bloom Zweigniederlassung Nordrhein-Westfalen' },
      t.clock.now(),
    )
    receiver = await startReceiver()
    expect(
      (
        await client(t.app, shop.apiKey).post('/v3/webhook-endpoints', {
          url: `${receiver.url}/hooks`,
          organisationId: shop.organisationId,
        })
      ).statusCode,
    ).toBe(201)
    for (let day = 0; day < 21; day++) {
      allocationIds.push(await allocate(shop, 'GBP', 47.97 + (day % 5) * 31.5, day % 2 === 0 ? 1 : undefined))
      if (day % 3 === 0) allocationIds.push(await allocate(branch, 'EUR', 89.9, 2.5))
      if (day % 7 === 3) {
        const id = allocationIds.at(-1) as string
        t.clock.advance(3_600_000)
        expect((await client(t.app, shop.apiKey).post(`/funds/allocations/${id}/reverse`)).statusCode).toBe(201)
      }
      t.clock.advance(DAY - (day % 7 === 3 ? 3_600_000 : 0))
    }
    t.clock.advance(Date.now() - 60_000 - t.clock.now().getTime())
    // Records written with past times, as the demo's are: the rollups start again from them (the worker catches up).
    await resetRollups(t.db, t.clock.now())
    const user = await createHubUser(t.db, shop.organisationId, 'admin', { now: t.clock.now() })
    admin = { email: user.email, password: PASSWORD }
    browser = await launchChromium()
  }, LONG)

  afterAll(async () => {
    await browser?.close()
    await receiver?.close()
    await t?.close()
    rmSync(hubDir, { recursive: true, force: true })
  }, LONG)

  it('keeps the entry bundle and the chart chunk within their budgets', () => {
    const manifest = JSON.parse(readFileSync(join(hubDir, 'manifest.json'), 'utf8'))
    expect(manifest.scriptGzipBytes).toBeLessThan(ENTRY_BUDGET_BYTES)
    expect(manifest.chunks.map((c: { name: string }) => c.name.replace(/-\w+\.js$/, ''))).toEqual(['chart'])
    expect(manifest.chunks[0].gzipBytes).toBeLessThan(CHART_BUDGET_BYTES)
  })

  it(
    'shows the summary API’s figures, a chart with its table alternative, and breakdowns that link to the records',
    async () => {
      const { context, page } = await openContext()
      try {
        const window = last30Days()
        const api = (groupBy: string) =>
          client(t.app, shop.apiKey)
            .get(
              `/v3/funds/allocations/summary?dateTimeFrom=${window.from}&dateTimeTo=${window.to}&groupBy=${groupBy}&timeZone=Europe/London`,
            )
            .then((r) => r.json())
        const summary = await api('day')
        expect(summary.totals.map((x: any) => x.currencyCode)).toEqual(['EUR', 'GBP'])

        await page.getByRole('navigation', { name: 'Hub' }).getByRole('link', { name: 'Dashboard', exact: true }).press('Enter')
        await page.locator('[data-figure="allocated"]').first().waitFor()
        const money = (amount: number, currency: string) => new Intl.NumberFormat('en-GB', { style: 'currency', currency }).format(amount)
        for (const totals of summary.totals) {
          const figures = page.locator(`dl[aria-label="Figures in ${totals.currencyCode}"]`)
          const minor = (x: number) => Math.round(x * 100)
          expect(await figures.locator('[data-figure="allocated"]').textContent()).toBe(
            money((minor(totals.credits.total) + minor(totals.contributions.total)) / 100, totals.currencyCode),
          )
          expect(await figures.locator('[data-figure="credits"]').textContent()).toBe(money(totals.credits.total, totals.currencyCode))
          expect(await figures.locator('[data-figure="contributions"]').textContent()).toBe(
            money(totals.contributions.total, totals.currencyCode),
          )
          expect(await figures.locator('[data-figure="allocations"]').textContent()).toBe(String(totals.allocations))
          expect(await figures.locator('[data-figure="reversals"]').textContent()).toBe(String(totals.reversals))
        }
        await page.locator('.chart[data-drawn="true"] canvas').first().waitFor()
        await expect.poll(() => page.locator('.equivalents li').count()).toBe(3)
        await expectAccessible(page, 'dashboard')
        // Wide, the thead names the columns: no cell repeats its name.
        expect(await expectCellsLabelled(page, false, 'dashboard, wide')).toBeGreaterThan(0)
        await shot(page, 'dashboard')

        // The table alternative, by keyboard: one row per day of the window, the same amounts as the API's days.
        const toggle = page.getByRole('button', { name: 'Show as table' }).last()
        await toggle.focus()
        await page.keyboard.press('Enter')
        const table = page.getByRole('table', { name: 'Allocated per day in GBP' })
        await table.waitFor()
        expect(await table.locator('tbody tr').count()).toBe(summary.groups.length)
        const credits = summary.groups.map((g: any) =>
          money(g.totals.find((x: any) => x.currencyCode === 'GBP')?.credits.total ?? 0, 'GBP'),
        )
        expect(await table.locator('tbody tr td:nth-of-type(1)').allTextContents()).toEqual(credits)
        await expectAccessible(page, 'dashboard as tables')
        await shot(page, 'dashboard-table')

        // A day's link opens the records of that day.
        const busy = summary.groups.findIndex((g: any) => g.totals.some((x: any) => x.currencyCode === 'GBP' && x.allocations > 0))
        await table.locator('tbody tr').nth(busy).getByRole('link').press('Enter')
        await page.getByRole('heading', { level: 1, name: 'Allocations' }).waitFor()
        const day = summary.groups[busy]
        const records = (
          await client(t.app, shop.apiKey).get(
            `/v3/funds/allocations/impact?dateTimeFrom=${day.dateTimeFrom}&dateTimeTo=${day.dateTimeTo}&limit=100`,
          )
        ).json().data
        await expect.poll(() => page.locator('tbody tr').count()).toBe(records.length)
      } finally {
        await context.close()
      }
    },
    LONG,
  )

  it(
    'filters and pages the records by keyboard, downloads them as CSV, and shows a record with its reversal and deliveries',
    async () => {
      const { context, page } = await openContext()
      try {
        await page.goto(`${base}/hub/allocations`)
        const rows = page.locator('table tbody tr')
        await rows.first().waitFor()
        const all = (
          await client(t.app, shop.apiKey).get(
            `/v3/funds/allocations/impact?dateTimeFrom=${last30Days().from}&dateTimeTo=${last30Days().to}&limit=100`,
          )
        ).json().data
        expect(all.length).toBeGreaterThan(20)
        expect(await rows.count()).toBe(20)
        const firstPage = await rows.allTextContents()
        await page.getByRole('button', { name: 'Next page' }).focus()
        await page.keyboard.press('Enter')
        await expect.poll(() => rows.count()).toBe(all.length - 20)
        expect(page.url()).toContain('after=')
        await page.getByRole('button', { name: 'Previous page' }).focus()
        await page.keyboard.press('Enter')
        await expect.poll(() => rows.allTextContents()).toEqual(firstPage)
        await expectAccessible(page, 'allocations')
        await shot(page, 'allocations')

        // A filter, typed and submitted by keyboard, is kept in the URL.
        await page.getByLabel('Consumer reference').fill('consumer_3')
        await page.getByLabel('Consumer reference').press('Enter')
        const expected = all.filter((r: any) => r.consumerReference === 'consumer_3')
        await expect.poll(() => rows.count()).toBe(expected.length)
        expect(new URL(page.url()).searchParams.get('consumerReference')).toBe('consumer_3')

        const csvHref = await page.getByRole('link', { name: 'Download CSV' }).getAttribute('href')
        const csv = await page.evaluate(async (href) => (await fetch(href as string)).text(), csvHref)
        expect(csv.split('\n')[0]).toContain('fundsAllocationId')
        expect(
          new Set(
            csv
              .trim()
              .split('\n')
              .slice(1)
              .map((line) => line.split(',')[0]),
          ).size,
        ).toBe(new Set(expected.map((r: any) => r.fundsAllocationId)).size)

        // A reversed allocation's detail.
        const reversed = all.find((r: any) => r.reversal)
        await page.goto(`${base}/hub/allocations?record=${reversed.fundsAllocationId}`)
        await page.getByRole('heading', { name: 'Reversal' }).waitFor()
        await page.getByRole('table', { name: 'Credits per project' }).waitFor()
        await expect.poll(() => page.getByRole('table', { name: 'Webhook deliveries' }).locator('tbody tr').count()).toBe(2)
        expect(await page.locator('dl.facts').last().textContent()).toContain(reversed.reversalId)
        await expectAccessible(page, 'allocation detail')
        await shot(page, 'allocation-detail')
      } finally {
        await context.close()
      }
    },
    LONG,
  )

  it(
    'reads narrow and in German (each value of a table beside its column’s name), and says so when a window has nothing',
    async () => {
      const { context, page } = await openContext('de-DE', 390)
      try {
        await page.goto(`${base}/hub/dashboard?window=last-month`)
        await page
          .locator('[data-figure="allocated"]')
          .first()
          .or(page.getByText('No allocations or reversals in this window.'))
          .first()
          .waitFor()
        await page.goto(`${base}/hub/dashboard?window=30d`)
        const figure = page.locator('dl[aria-label="Figures in GBP"] [data-figure="credits"]')
        await figure.waitFor()
        expect(await figure.textContent()).toMatch(/^[\d.]+,\d{2}\s£$/)
        await page.locator('.chart[data-drawn="true"] canvas').first().waitFor()
        // The thead is hidden at this width: each breakdown's value shows its column's name before it.
        const credits = page.getByRole('table', { name: 'By impact partner' }).locator('tbody td').first()
        expect(await credits.evaluate((td) => getComputedStyle(td, '::before').content)).toBe('"Credits" / ""')
        expect(await expectCellsLabelled(page, true, 'dashboard, narrow')).toBeGreaterThan(0)
        await expectAccessible(page, 'dashboard narrow de-DE')
        await shot(page, 'dashboard-narrow-de')
        // A chart's table alternative too.
        await page.getByRole('button', { name: 'Show as table' }).last().press('Enter')
        await page.getByRole('table', { name: 'Allocated per day in GBP' }).waitFor()
        expect(await expectCellsLabelled(page, true, 'dashboard as a table, narrow')).toBeGreaterThan(0)
        await expectAccessible(page, 'dashboard as a table, narrow de-DE')
        await page.goto(`${base}/hub/dashboard?window=custom&from=2020-01-01&to=2020-01-31`)
        await page.getByText('No allocations or reversals in this window.').waitFor()
        await expectAccessible(page, 'dashboard empty')

        // The records and a reversed record's detail (its lines and deliveries), narrow.
        await page.goto(`${base}/hub/allocations?consumerReference=consumer_3`)
        await page.locator('table tbody tr').first().waitFor()
        expect(await expectCellsLabelled(page, true, 'allocations, narrow')).toBeGreaterThan(0)
        await expectAccessible(page, 'allocations narrow de-DE')
        await shot(page, 'allocations-narrow-de')
        const all = (
          await client(t.app, shop.apiKey).get(
            `/v3/funds/allocations/impact?dateTimeFrom=${last30Days().from}&dateTimeTo=${last30Days().to}&limit=100`,
          )
        ).json().data
        const reversed = all.find((r: any) => r.reversal && r.contributions.length > 0)
        await page.goto(`${base}/hub/allocations?record=${reversed.fundsAllocationId}`)
        await page.getByRole('table', { name: 'Contributions per partner' }).waitFor()
        await expect.poll(() => page.getByRole('table', { name: 'Webhook deliveries' }).locator('tbody tr').count()).toBe(2)
        expect(await expectCellsLabelled(page, true, 'allocation detail, narrow')).toBeGreaterThan(0)
        await expectAccessible(page, 'allocation detail narrow de-DE')
        await shot(page, 'allocation-detail-narrow-de')
      } finally {
        await context.close()
      }
    },
    LONG,
  )
})
