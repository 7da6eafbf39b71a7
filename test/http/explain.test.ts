// GET /quotes/:id/explain (docs/pricing.md, "Explaining a quote"): every figure of a stored quote from what it locked.
// The test recomputes each quote's footprint, unit price, total and amounts from the explanation alone (decimal.js
// here, none of Canopy's code) and gets the same minor units; a quote stored before explanations still explains,
// saying what it lacks.
import { randomUUID } from 'node:crypto'
import { Decimal } from 'decimal.js'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { client, createTestApp, type TestApp } from '../helpers/app.js'
import { createOrg, floristQuote, importDemoCatalogue, type OrgFixture } from '../helpers/factories.js'

const D = Decimal.clone({ precision: 60, rounding: Decimal.ROUND_HALF_UP })

let t: TestApp
let merchant: OrgFixture
let stranger: OrgFixture

beforeAll(async () => {
  t = await createTestApp()
  await importDemoCatalogue(t.db)
  merchant = await createOrg(t.db)
  stranger = await createOrg(t.db)
})
afterAll(() => t.close())

/** Largest remainder of `total` minor units by `weights` (ties to the first), as docs/pricing.md states it. */
function split(total: bigint, weights: string[]): bigint[] {
  const scale = Math.max(...weights.map((w) => new D(w).decimalPlaces()))
  const scaled = weights.map((w) => BigInt(new D(w).times(new D(10).pow(scale)).toFixed(0)))
  const sum = scaled.reduce((a, b) => a + b, 0n)
  const parts = scaled.map((w) => (total * w) / sum)
  const order = scaled.map((w, i) => ({ r: (total * w) % sum, i })).sort((a, b) => (a.r === b.r ? a.i - b.i : a.r > b.r ? -1 : 1))
  let left = total - parts.reduce((a, b) => a + b, 0n)
  for (const { i } of order) {
    if (left === 0n) break
    parts[i] = (parts[i] ?? 0n) + 1n
    left -= 1n
  }
  return parts
}

interface Explanation {
  minorUnits: number
  missing: string[]
  transaction: { amount: string }
  footprint: {
    factor: { value: string; tailpipeValue: string | null }
    fx: { rate: string }
    deflator: { value: string }
    result: { kind: string; co2eGrams?: string; areaSquareMetres?: string }
  }
  credits: {
    projects: { catalogue: { price: string }; fx: { rate: string } | null; weight: string; unitPrice: string }[]
    unitPrice: string
    section: { grossFactor: string; splitWeights: string[] }
  } | null
}

/** The amounts recomputed from the explanation alone, in minor units. */
function recompute(e: Explanation) {
  const f = e.footprint
  const spend = new D(e.transaction.amount).times(f.fx.rate).times(f.deflator.value)
  if (f.result.kind === 'nature') return { areaSquareMetres: spend.times(f.factor.value).toFixed(2) }
  const grams = spend
    .times(new D(f.factor.value).plus(f.factor.tailpipeValue ?? '0'))
    .times(1000)
    .toFixed(1)
  const c = e.credits!
  const digits = e.minorUnits
  const weights = c.projects.reduce((sum, p) => sum.plus(p.weight), new D(0))
  const unitPrice = c.projects.every((p) => p.fx !== null)
    ? c.projects
        .reduce((sum, p) => sum.plus(new D(p.weight).times(p.catalogue.price).times(p.fx!.rate)), new D(0))
        .div(weights)
        .toFixed(digits)
    : c.unitPrice
  const projectPrices = c.projects.map((p) => (p.fx === null ? p.unitPrice : new D(p.catalogue.price).times(p.fx.rate).toFixed(digits)))
  const minor = BigInt(new D(grams).div(1_000_000).times(unitPrice).times(c.section.grossFactor).times(new D(10).pow(digits)).toFixed(0))
  const total = minor < 1n ? 1n : minor
  const [impact, impactTax, serviceFee, serviceFeeTax] = split(total, c.section.splitWeights).map((m) =>
    new D(m.toString()).div(new D(10).pow(digits)).toNumber(),
  )
  return {
    co2eGrams: Number(grams),
    unitPrice: Number(unitPrice),
    projectPrices: projectPrices.map(Number),
    amounts: { total: new D(total.toString()).div(new D(10).pow(digits)).toNumber(), impact, impactTax, serviceFee, serviceFeeTax },
  }
}

const QUOTES: [string, Record<string, unknown>][] = [
  ['the florist in GBP (UK VAT on credits and the fee)', {}],
  [
    'a US consumer in USD (a USD factor: CPI deflator; state tax rules)',
    {
      consumer: { reference: 'c_us', countryCode: 'USA', state: 'CA' },
      merchant: {
        name: 'Shop',
        mcc: '5812',
        address: { line1: '1 Main St', city: 'LA', postalCode: '90001', countryCode: 'USA', state: 'CA' },
      },
      transaction: { amount: 83.5, currencyCode: 'USD' },
    },
  ],
  [
    'a Japanese consumer in JPY (0 decimals)',
    {
      consumer: { reference: 'c_jp', countryCode: 'JPN' },
      merchant: { name: 'Hanaya', mcc: '5992', address: { line1: '1-1', city: 'Tokyo', postalCode: '100-0001', countryCode: 'JPN' } },
      transaction: { amount: 12345, currencyCode: 'JPY' },
    },
  ],
  [
    'a Kuwaiti consumer in KWD (3 decimals)',
    { consumer: { reference: 'c_kw', countryCode: 'KWT' }, transaction: { amount: 19.875, currencyCode: 'KWD' } },
  ],
]

describe('GET /quotes/:id/explain', () => {
  it.each(QUOTES)('%s: the amounts recomputed from the explanation alone are the quote’s, to the minor unit', async (_label, extra) => {
    const created = await client(t.app, merchant.apiKey).post('/quotes/carbon', floristQuote(merchant.organisationId, extra))
    expect(created.statusCode).toBe(201)
    const quote = created.json()
    const res = await client(t.app, merchant.apiKey).get(`/v3/quotes/${quote.quoteId}/explain`)
    expect(res.statusCode).toBe(200)
    const explanation = res.json() as Explanation & Record<string, unknown>
    expect(explanation.missing).toEqual([])
    const again = recompute(explanation)
    expect(again.co2eGrams).toBe(quote.footprint.co2eGrams)
    expect(again.unitPrice).toBe(quote.credits.unit.price)
    expect(again.amounts).toEqual(quote.credits.amounts)
    const projects = (await client(t.app, merchant.apiKey).get(`/quotes/${quote.quoteId}/projects`)).json()
    expect(again.projectPrices).toEqual(projects.map((p: { unit: { price: number } }) => p.unit.price))
    expect(explanation).toMatchObject({
      quoteId: quote.quoteId,
      tax: {
        creditImpact: { rule: expect.any(String) },
        serviceFee: { rule: expect.any(String) },
        rateSource: expect.stringContaining('sales-tax'),
      },
    })
  })

  it('names where each figure came from: factor, FX, tax rules, and each rounding', async () => {
    const quote = (await client(t.app, merchant.apiKey).post('/quotes/carbon', floristQuote(merchant.organisationId))).json()
    const e = (await client(t.app, merchant.apiKey).get(`/quotes/${quote.quoteId}/explain`)).json()
    expect(e.footprint).toMatchObject({
      mcc: '5992',
      merchantCountryCode: 'GBR',
      factor: {
        source: expect.any(String),
        version: expect.any(String),
        unit: expect.stringMatching(/^kg CO2e per [A-Z]{3} of spend at \d{4} prices$/),
      },
      fx: { from: 'GBP', date: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/), source: expect.stringContaining('ECB') },
    })
    expect(e.tax).toMatchObject({ jurisdiction: { country: 'GB', state: null, basis: 'consumer' }, creditImpact: { rate: '0.2' } })
    expect(e.tax.creditImpact.rule).toMatch(/standard rate of GB/)
    expect(e.tax.contributionImpact).toEqual({ rate: '0', rule: expect.stringContaining('outside the scope') })
    expect(e.contribution.effectiveRates).toEqual(
      Object.fromEntries(Object.entries(quote.contribution.effectiveRates).map(([k, v]) => [k, String(v)])),
    )
    expect(e.rounding.map((r: { figure: string }) => r.figure)).toEqual(
      expect.arrayContaining(['footprint.co2eGrams', 'credits.unitPrice', 'credits.amounts.total', 'credits.amounts']),
    )
  })

  it('as readable text with Accept: text/plain', async () => {
    const quote = (await client(t.app, merchant.apiKey).post('/quotes/carbon', floristQuote(merchant.organisationId))).json()
    const res = await client(t.app, merchant.apiKey).get(`/quotes/${quote.quoteId}/explain`, { accept: 'text/plain' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8')
    expect(res.body).toContain(`Quote ${quote.quoteId} (carbon, GBP, 2 decimals)`)
    expect(res.body).toMatch(/spend = 47\.97 × [\d.]+ × [\d.]+ = [\d.]+ EUR/)
    expect(res.body).toContain(`→ ${quote.credits.amounts.total.toFixed(2)} GBP`)
    expect(res.body).not.toContain('Not locked by this quote')
  })

  it('a nature quote: the area from the explanation, no credits', async () => {
    const quote = (await client(t.app, merchant.apiKey).post('/quotes/nature', floristQuote(merchant.organisationId))).json()
    const e = (await client(t.app, merchant.apiKey).get(`/quotes/${quote.quoteId}/explain`)).json()
    expect(e.credits).toBeNull()
    expect(Number(recompute(e).areaSquareMetres)).toBe(quote.footprint.areaSquareMetres)
  })

  it('a quote stored before explanations still explains, from what it locked, and says what it lacks', async () => {
    const quote = (await client(t.app, merchant.apiKey).post('/quotes/carbon', floristQuote(merchant.organisationId))).json()
    // The same quote as a row written before this release: its snapshot without what is locked since.
    const oldId = randomUUID()
    await sql`
      WITH old AS (
        SELECT s.id, s.body::jsonb AS body FROM quotes q JOIN quote_snapshots s ON s.id = q.snapshot_id WHERE q.id = ${quote.quoteId}::uuid
      ), stripped AS (
        SELECT jsonb_set(
                 (body #- '{provenance,deflatorBasis}' #- '{provenance,merchantCountryCode}' #- '{provenance,tax,lines}' #- '{provenance,tax,rateSource}'),
                 '{projects}', (SELECT jsonb_agg(p - 'fx') FROM jsonb_array_elements(body->'projects') p)) AS body
        FROM old
      ), snapshot AS (
        INSERT INTO quote_snapshots (id, body) SELECT md5(body::text) || md5(body::text), body FROM stripped RETURNING id
      )
      INSERT INTO quotes (id, organisation_id, impact_type, currency_code, tax_liability, request, locked, snapshot_id, created_at)
      SELECT ${oldId}::uuid, organisation_id, impact_type, currency_code, tax_liability, request, locked, (SELECT id FROM snapshot), created_at
      FROM quotes WHERE id = ${quote.quoteId}::uuid`.execute(t.db)
    const e = (await client(t.app, merchant.apiKey).get(`/quotes/${oldId}/explain`)).json()
    expect(e.missing).toEqual([
      expect.stringMatching(/^tax rules/),
      expect.stringMatching(/^deflator basis/),
      expect.stringMatching(/^project exchange rates/),
    ])
    expect(e.tax.creditImpact).toEqual({ rate: '0.2', rule: null })
    expect(e.credits.projects.every((p: { fx: unknown }) => p.fx === null)).toBe(true)
    expect(e.credits.unitPriceExact).toBeNull()
    // Its amounts still follow from its locked unit price.
    expect(recompute(e).amounts).toEqual(quote.credits.amounts)
    const text = (await client(t.app, merchant.apiKey).get(`/quotes/${oldId}/explain`, { accept: 'text/plain' })).body
    expect(text).toContain('Not locked by this quote')
  })

  it("another tree's quote is not found, an unknown one too; no key → 401; a bad id → 400", async () => {
    const quote = (await client(t.app, merchant.apiKey).post('/quotes/carbon', floristQuote(merchant.organisationId))).json()
    expect((await client(t.app, stranger.apiKey).get(`/quotes/${quote.quoteId}/explain`)).statusCode).toBe(404)
    expect((await client(t.app, merchant.apiKey).get(`/quotes/${randomUUID()}/explain`)).json().code).toBe('NOT_FOUND')
    expect((await client(t.app).get(`/quotes/${quote.quoteId}/explain`)).statusCode).toBe(401)
    expect((await client(t.app, merchant.apiKey).get('/quotes/nope/explain')).json().code).toBe('BAD_REQUEST')
  })
})
