// Exchange rates without a release: imported ECB rates price the next quote (after the reference-data cache's
// TTL), while a stored quote keeps the rate and date it locked; currency checks follow the table in use.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { importFxRates } from '../../src/services/fx.js'
import { client, createTestApp, type TestApp } from '../helpers/app.js'
import { createOrg, floristQuote, importDemoCatalogue, type OrgFixture } from '../helpers/factories.js'
import { DAILY, HISTORY } from '../helpers/fx-files.js'
import { findQuoteById } from '../../src/db/repositories/quotes.js'

let t: TestApp
let merchant: OrgFixture

beforeAll(async () => {
  t = await createTestApp({}, { metrics: true })
  await importDemoCatalogue(t.db)
  merchant = await createOrg(t.db)
})
afterAll(() => t.close())

const lockedFx = async (quoteId: string) => {
  const quote = await findQuoteById(t.db, quoteId)
  if (!quote) throw new Error(`quote ${quoteId} is not stored`)
  return quote.locked.provenance.fx
}
const inCurrency = (currencyCode: string) => floristQuote(merchant.organisationId, { transaction: { amount: 47.97, currencyCode } })
const fxInfo = async () => ((await t.metrics!.scrape()) as string).split('\n').find((line) => line.startsWith('canopy_fx_rates_info{'))

describe('exchange rates imported with fx import', () => {
  let before: { quoteId: string; body: string }

  it('before any import, quotes use the compiled rates of 2026-02-06, and PLN cannot be quoted', async () => {
    const res = await client(t.app, merchant.apiKey).post('/quotes/carbon', floristQuote(merchant.organisationId))
    expect(res.statusCode).toBe(201)
    before = { quoteId: res.json().quoteId, body: res.body }
    const fx = await lockedFx(before.quoteId)
    expect(fx).toMatchObject({ from: 'GBP', to: 'EUR', date: '2026-02-06' })
    expect(Number(fx.rate)).toBeCloseTo(1 / 0.8679, 12)
    const pln = await client(t.app, merchant.apiKey).post('/quotes/carbon', inCurrency('PLN'))
    expect(pln.statusCode).toBe(400)
    expect(pln.json()).toMatchObject({ code: 'UNSUPPORTED_CURRENCY' })
    expect(await fxInfo()).toBe('canopy_fx_rates_info{date="2026-02-06",origin="embedded"} 1')
  })

  it('after an import, the next quote uses the latest date; the stored quote is unchanged, byte for byte', async () => {
    const imported = await importFxRates(t.db, { csv: HISTORY, fileName: '/tmp/eurofxref-hist.csv' }, t.clock.now())
    expect(imported).toEqual({
      file: 'eurofxref-hist.csv',
      dates: 3,
      rates: 15,
      changed: 15,
      firstDate: '2007-12-31',
      latestDate: '2026-11-19',
    })
    expect(await importFxRates(t.db, { csv: HISTORY, fileName: 'eurofxref-hist.csv' }, t.clock.now())).toMatchObject({ changed: 0 })
    expect((await importFxRates(t.db, { csv: DAILY, fileName: 'eurofxref.csv' }, t.clock.now())).latestDate).toBe('2026-11-20')
    t.clock.advance(t.config.CATALOGUE_CACHE_TTL_MS + 1)

    const again = await client(t.app, merchant.apiKey).get(`/quotes/${before.quoteId}`)
    expect(again.body).toBe(before.body)
    expect((await lockedFx(before.quoteId)).date).toBe('2026-02-06')

    const next = await client(t.app, merchant.apiKey).post('/quotes/carbon', floristQuote(merchant.organisationId))
    expect(next.statusCode).toBe(201)
    const fx = await lockedFx(next.json().quoteId)
    expect(fx).toMatchObject({ from: 'GBP', to: 'EUR', date: '2026-11-20' })
    expect(fx.source).toMatch(/^ECB euro foreign exchange reference rates 2026-11-20 \(imported .*\); BHD, SAR, AED via USD pegs/)
    // 1 / 0.88120 EUR per GBP: a different footprint and price than with 0.86790.
    expect(Number(fx.rate)).toBeCloseTo(1 / 0.8812, 12)
    expect(next.json().footprint.co2eGrams).not.toBe(JSON.parse(before.body).footprint.co2eGrams)
    expect(await fxInfo()).toBe('canopy_fx_rates_info{date="2026-11-20",origin="stored"} 1')
  })

  it('currencies are checked against the rates in use: PLN quotes and organisations now work, pegged AED still does', async () => {
    const pln = await client(t.app, merchant.apiKey).post('/quotes/carbon', inCurrency('PLN'))
    expect(pln.statusCode).toBe(201)
    expect(pln.json().currencyCode).toBe('PLN')
    const aed = await client(t.app, merchant.apiKey).post('/quotes/carbon', inCurrency('AED'))
    expect(aed.statusCode).toBe(201)
    expect((await lockedFx(aed.json().quoteId)).date).toBe('2026-11-20')
    const org = await client(t.app, merchant.apiKey).post('/v3/organisations', {
      parentOrganisationId: merchant.organisationId,
      tradingName: 'Kwiaciarnia',
      legalName: 'Kwiaciarnia sp. z o.o.',
      address: { line1: 'ul. Kwiatowa 1', city: 'Warszawa', postalCode: '00-001', countryCode: 'POL' },
      currencyCode: 'PLN',
    })
    expect(org.statusCode, org.body).toBe(201)
  })
})
