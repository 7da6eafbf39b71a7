// Metrics recorded in-process (server.ts serves the same registry on METRICS_PORT): business counters, request
// durations labelled by route pattern (bounded, whatever URLs are requested), scrape-time gauges, no secrets; and
// the rate limit failing open, counted, when Redis is unreachable.
import { randomBytes, randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { client, createTestApp, type TestApp } from '../helpers/app.js'
import { onPostgres } from '../helpers/db.js'
import { createOrg, floristQuote, importDemoCatalogue, type OrgFixture } from '../helpers/factories.js'
import { freePort } from '../helpers/process.js'

/** Every sample of a scrape: `name{labels}` → value. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>()
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const at = line.lastIndexOf(' ')
    out.set(line.slice(0, at), Number(line.slice(at + 1)))
  }
  return out
}

/** The label sets of one metric's samples (name without suffixes), parsed. */
function labelSets(text: string, name: string): Record<string, string>[] {
  return [...samples(text).keys()]
    .filter((key) => key.startsWith(`${name}{`))
    .map((key) => Object.fromEntries([...key.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]])))
}

let t: TestApp
let merchant: OrgFixture
const scrape = async () => (await t.metrics!.scrape()) as string

beforeAll(async () => {
  t = await createTestApp({}, { metrics: true })
  await importDemoCatalogue(t.db)
  merchant = await createOrg(t.db)
})
afterAll(() => t.close())

describe('metrics', () => {
  it('counts quotes, sessions, and allocations created, replayed and reversed, by currency', async () => {
    const api = client(t.app, merchant.apiKey)
    const quote = (await api.post('/quotes/carbon', floristQuote(merchant.organisationId))).json()
    await api.post('/quotes/nature', floristQuote(merchant.organisationId))
    const { locale: _locale, merchant: _merchant, ...session } = floristQuote(merchant.organisationId)
    expect((await api.post('/v3/post-purchase/sessions', { ...session, sdkVariant: 'embedded' })).statusCode).toBe(200)
    const body = {
      organisationId: merchant.organisationId,
      quoteId: quote.quoteId,
      contribution: { amount: 1 },
      issueTaxReceipt: true,
      consumerEmail: 'donor@example.com',
    }
    const headers = { 'idempotency-key': 'metrics-1' }
    const created = await api.post('/funds/allocations', body, headers)
    expect(created.statusCode).toBe(201)
    expect((await api.post('/funds/allocations', body, headers)).headers['idempotent-replayed']).toBe('true')
    expect((await api.post(`/funds/allocations/${created.json().fundsAllocationId}/reverse`)).statusCode).toBe(201)

    const text = await scrape()
    const values = samples(text)
    expect(values.get('canopy_quotes_created_total{impact_type="carbon",origin="quote"}')).toBe(1)
    expect(values.get('canopy_quotes_created_total{impact_type="nature",origin="quote"}')).toBe(1)
    expect(values.get('canopy_quotes_created_total{impact_type="carbon",origin="post-purchase-session"}')).toBe(1)
    expect(values.get('canopy_sessions_created_total{kind="post-purchase"}')).toBe(1)
    expect(values.get('canopy_allocations_created_total{currency="GBP"}')).toBe(1)
    expect(values.get('canopy_allocations_replayed_total{currency="GBP"}')).toBe(1)
    expect(values.get('canopy_allocations_reversed_total{currency="GBP"}')).toBe(1)
    expect(values.get('http_request_duration_seconds_count{method="POST",route="/funds/allocations",status_class="2xx"}')).toBe(2)
    expect(values.get('http_request_duration_seconds_count{method="POST",route="/post-purchase/sessions",status_class="2xx"}')).toBe(1)
    // Never a secret, an e-mail address or a raw identifier in a label.
    expect(text).not.toContain(merchant.apiKey)
    expect(text).not.toContain('donor@example.com')
    expect(text).not.toContain(quote.quoteId)
  })

  it('reads the receipt outbox, the exchange rates in use and the process at scrape time', async () => {
    let values = samples(await scrape())
    expect(values.get('canopy_outbox_pending{outbox="tax_receipts"}')).toBe(1)
    expect(values.get('canopy_outbox_oldest_pending_age_seconds{outbox="tax_receipts"}')).toBe(0)
    t.clock.advance(90_000)
    values = samples(await scrape())
    expect(values.get('canopy_outbox_oldest_pending_age_seconds{outbox="tax_receipts"}')).toBe(90)
    // The compiled rates of 2026-02-06, seen from the test clock (2026-11-21T10:01:30Z).
    expect(values.get('canopy_fx_rates_info{date="2026-02-06",origin="embedded"}')).toBe(1)
    expect(values.get('canopy_fx_rates_age_seconds')).toBe((Date.parse('2026-11-21T10:01:30Z') - Date.parse('2026-02-06T00:00:00Z')) / 1000)
    expect(values.has('nodejs_eventloop_lag_seconds')).toBe(true)
    expect(values.has('process_cpu_seconds_total')).toBe(true)
    expect(values.has('process_resident_memory_bytes')).toBe(true)
    expect(values.get('canopy_rate_limit_store_errors_total')).toBe(0)
    if (onPostgres()) {
      expect(values.get('canopy_db_pool_max_clients')).toBe(10)
      expect(values.get('canopy_db_pool_clients')).toBeGreaterThanOrEqual(1)
      expect(values.has('canopy_db_pool_idle_clients')).toBe(true)
      // The scrape's own queries may wait for a connection being opened.
      expect(values.get('canopy_db_pool_waiting_requests')).toBeGreaterThanOrEqual(0)
    } else {
      expect(values.has('canopy_db_pool_clients')).toBe(false) // the embedded database has no pool
    }
  })

  it('labels requests by route pattern: hundreds of distinct URLs make a handful of series', async () => {
    const api = client(t.app, merchant.apiKey)
    for (let i = 0; i < 200; i++) {
      const noise = randomBytes(6).toString('hex')
      const urls = [
        `/v3/${noise}`,
        `/${noise}/${noise}?q=${noise}`,
        `/quotes/${randomUUID()}`,
        `/v3/organisations/${randomUUID()}`,
        `/quotes/${noise}/projects`,
      ]
      const url = urls[i % urls.length]!
      await (i % 2 ? api.get(url) : api.post(url, {}))
    }
    const sets = labelSets(await scrape(), 'http_request_duration_seconds_count')
    const routes = new Set(sets.map((s) => s.route))
    expect(routes).toContain('unmatched')
    expect(routes).toContain('/quotes/:id')
    for (const route of routes) expect(route === 'unmatched' || route!.startsWith('/')).toBe(true)
    for (const route of routes) expect(route).not.toMatch(/[0-9a-f]{12}/)
    expect(routes.size).toBeLessThanOrEqual(12)
    expect(sets.length).toBeLessThanOrEqual(30)
  })
})

describe('the rate limit with Redis unreachable', () => {
  it('serves every request (fail open), counts each failed check and logs rarely', async () => {
    const closedPort = await freePort()
    const app = await createTestApp(
      { REDIS_URL: `redis://127.0.0.1:${closedPort}`, RATE_LIMIT_PER_MINUTE: '3' },
      { metrics: true, captureLogs: true },
    )
    try {
      const org = await createOrg(app.db)
      const started = Date.now()
      for (let i = 0; i < 8; i++) {
        const res = await client(app.app, org.apiKey).get(`/v3/organisations/${org.organisationId}`)
        expect(res.statusCode).toBe(200)
      }
      expect(Date.now() - started).toBeLessThan(5_000)
      const values = samples((await app.metrics!.scrape()) as string)
      expect(values.get('canopy_rate_limit_store_errors_total')).toBe(8)
      const warnings = app.logs.filter((line) => line.includes('rate-limit store (Redis) is failing'))
      expect(warnings.length).toBeGreaterThanOrEqual(1)
      expect(warnings.length).toBeLessThanOrEqual(2)
    } finally {
      await app.close()
    }
  })
})
