import { Decimal } from 'decimal.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_PARTNER_IDS } from '../../src/domain/data/demo-catalogue.js'
import { findQuoteById } from '../../src/db/repositories/quotes.js'
import { FLORIST_EXAMPLE } from '../../src/http/schemas/quotes.js'
import { demoCatalogue, importCatalogue } from '../../src/services/catalogue.js'
import { client, createTestApp, type TestApp } from '../helpers/app.js'
import { createOrg, floristQuote, importDemoCatalogue, type OrgFixture } from '../helpers/factories.js'

let t: TestApp
let merchant: OrgFixture
let bank: OrgFixture
let child: OrgFixture
let stranger: OrgFixture

beforeAll(async () => {
  // No catalogue caching, so tests that change the catalogue see it at once; no quote cache, so every
  // read of a quote goes to the database (its row and its snapshot).
  t = await createTestApp({ CATALOGUE_CACHE_TTL_MS: '0', QUOTE_CACHE_SIZE: '0' })
  await importDemoCatalogue(t.db)
  merchant = await createOrg(t.db, { mcc: '5992' })
  bank = await createOrg(t.db, { mcc: null, tradingName: 'Acme Bank' })
  child = await createOrg(t.db, { mcc: null, parentId: bank.organisationId })
  stranger = await createOrg(t.db)
})
afterAll(() => t.close())

const post = (key: string, path: string, body: unknown) => client(t.app, key).post(path, body)
const sum = (...values: number[]) => values.reduce((acc, v) => acc.plus(String(v)), new Decimal(0)).toString()
const rateSum = (r: Record<string, number>) => sum(r.impact ?? 0, r.impactTax ?? 0, r.serviceFee ?? 0, r.serviceFeeTax ?? 0)

describe('POST /quotes/carbon', () => {
  it('prices the florist purchase, field by field (hand-worked from the cited figures)', async () => {
    const res = await post(merchant.apiKey, '/quotes/carbon', floristQuote(merchant.organisationId))
    expect(res.statusCode).toBe(201)
    const quote = res.json()
    expect(Object.keys(quote).sort()).toEqual(['contribution', 'createdAt', 'credits', 'currencyCode', 'footprint', 'quoteId'])
    expect(quote.quoteId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
    expect(quote.currencyCode).toBe('GBP')
    expect(quote.createdAt).toBe(t.clock.now().toISOString())
    // EXIOBASE GB retail 0.196 kg CO2e/€; £47.97 / 0.86790 £/€ = €55.2713 → 10.8332 kg.
    expect(quote.footprint.co2eGrams).toBe(10833.2)
    expect(quote.footprint.co2eOunces).toBe(382.13) // 10833.2 / 28.349523125
    expect(quote.footprint.equivalents).toEqual([
      { key: 'car', value: 28, description: expect.stringMatching(/petrol car for 28 miles/) }, // 10833.2 g / 393 g per mile
      { key: 'phone', value: 874, description: expect.stringMatching(/874/) }, // / 12.4 g per charge
      { key: 'tree', value: 659, description: expect.stringMatching(/659 days/) }, // / (60 kg / 3652.5 days)
    ])
    // Global portfolio (no location filter): the three highest-priority projects, USD 25, 18, 30 →
    // mean USD 24.333 × 0.735883 £/$ = £17.91/t. GB consumer: VAT 20% on credits and on the fee: D = 1.44.
    // T = 0.0108332 t × 17.91 × 1.44 = 0.2794 → £0.28, split by [1, 0.2, 0.2, 0.04]: 19 + 4 + 4 + 1 pence.
    expect(quote.credits).toEqual({
      amounts: { total: 0.28, impact: 0.19, impactTax: 0.04, serviceFee: 0.04, serviceFeeTax: 0.01 },
      effectiveRates: { impact: 0.6944444444, impactTax: 0.1388888889, serviceFee: 0.1388888889, serviceFeeTax: 0.0277777778 },
      unit: { description: 'tCO2e', price: 17.91 },
      consumerLocationMatchAccuracy: 'global',
    })
    // Contributions carry no impact tax; the fee carries 20% VAT: D = 1 + 0.2 × 1.2 = 1.24.
    expect(quote.contribution).toEqual({
      effectiveRates: { impact: 0.8064516129, impactTax: 0, serviceFee: 0.1612903226, serviceFeeTax: 0.0322580645 },
    })
    const { amounts } = quote.credits
    expect(sum(amounts.impact, amounts.impactTax, amounts.serviceFee, amounts.serviceFeeTax)).toBe(String(amounts.total))
    expect(rateSum(quote.credits.effectiveRates)).toBe('1')
    expect(rateSum(quote.contribution.effectiveRates)).toBe('1')
  })

  it('prices USD 100 at a US restaurant for a Californian consumer (state-level project, no sales tax)', async () => {
    const res = await post(
      merchant.apiKey,
      '/v3/quotes/carbon',
      floristQuote(merchant.organisationId, {
        locale: 'en-US',
        consumer: { reference: 'c-us', countryCode: 'USA', state: 'CA' },
        merchant: { name: 'Diner', mcc: '5812', address: { countryCode: 'USA', state: 'CA' } },
        transaction: { amount: 100, currencyCode: 'USD' },
        projectFilters: { credits: { matchConsumerLocation: true } },
      }),
    )
    expect(res.statusCode).toBe(201)
    const quote = res.json()
    // USEEIO 5812 0.194 kg/USD2022; $100 × CPI 292.655/313.689 = $93.29 → 18.0992 kg.
    expect(quote.footprint.co2eGrams).toBe(18099.2)
    expect(quote.footprint.equivalents[0].description).toMatch(/gas-powered car/)
    // California family forest, $18/t; D = 1.2: 0.0180992 × 18 × 1.2 = 0.3909 → $0.39 = 33 + 6 cents.
    expect(quote.credits.amounts).toEqual({ total: 0.39, impact: 0.33, impactTax: 0, serviceFee: 0.06, serviceFeeTax: 0 })
    expect(quote.credits.consumerLocationMatchAccuracy).toBe('state')
    const projects = (await client(t.app, merchant.apiKey).get(`/quotes/${quote.quoteId}/projects`)).json()
    expect(projects.map((p: { name: string }) => p.name)).toEqual(['Family forest management, California (demo)'])
  })

  it.each([
    [{ countryCode: 'USA', state: 'Texas' }, 'country', 3],
    [{ countryCode: 'KEN' }, 'country', 1],
    [{ countryCode: 'DEU' }, 'country', 1],
    [{ countryCode: 'JPN' }, 'global', 3],
  ])('matches consumer location %j at %s level', async (consumer, accuracy, count) => {
    const res = await post(
      merchant.apiKey,
      '/quotes/carbon',
      floristQuote(merchant.organisationId, {
        consumer: { reference: 'c', ...consumer },
        projectFilters: { credits: { matchConsumerLocation: true } },
      }),
    )
    expect(res.statusCode).toBe(201)
    expect(res.json().credits.consumerLocationMatchAccuracy).toBe(accuracy)
    const projects = (await client(t.app, merchant.apiKey).get(`/quotes/${res.json().quoteId}/projects`)).json()
    expect(projects).toHaveLength(count)
    if (accuracy === 'country') for (const p of projects) expect(p.location.countryCode).toBe(consumer.countryCode)
  })

  it('is global when matchConsumerLocation is false or absent', async () => {
    for (const projectFilters of [undefined, null, { credits: null }, { credits: { matchConsumerLocation: false } }]) {
      const body = floristQuote(merchant.organisationId, { consumer: { reference: 'c', countryCode: 'USA', state: 'CA' } })
      const res = await post(merchant.apiKey, '/quotes/carbon', projectFilters === undefined ? body : { ...body, projectFilters })
      expect(res.statusCode).toBe(201)
      expect(res.json().credits.consumerLocationMatchAccuracy).toBe('global')
    }
  })

  it('includes impact partner details and partner rates only when asked', async () => {
    const res = await post(
      merchant.apiKey,
      '/quotes/carbon',
      floristQuote(merchant.organisationId, {
        responseOptions: { includeImpactPartnerDetails: true, includeImpactPartnerRates: true },
      }),
    )
    const quote = res.json()
    const creditPartnerIds = quote.credits.impactPartners.map((p: { id: string }) => p.id)
    expect(creditPartnerIds).toEqual([DEMO_PARTNER_IDS.verdantRemovals, DEMO_PARTNER_IDS.forestGuardians])
    expect(quote.credits.impactPartners[0]).toEqual({
      id: DEMO_PARTNER_IDS.verdantRemovals,
      name: 'Verdant Removals (demo)',
      shortDescription: expect.any(String),
      images: {
        logos: [{ path: expect.any(String), type: 'default', width: 256, height: 256 }],
        thumbnails: [expect.objectContaining({ type: 'default' })],
        backgrounds: [expect.objectContaining({ type: 'default' })],
      },
    })
    const ocean = quote.contribution.impactPartners.find((p: { id: string }) => p.id === DEMO_PARTNER_IDS.oceanCommons)
    expect(Object.keys(ocean.images)).toEqual(['logos'])
    expect(quote.partnerRates.credits.map((r: { partnerId: string }) => r.partnerId)).toEqual(creditPartnerIds)
    for (const entry of quote.partnerRates.credits) expect(entry.rates).toEqual(quote.credits.effectiveRates)
    expect(quote.partnerRates.contribution.map((r: { partnerId: string }) => r.partnerId)).toEqual([
      DEMO_PARTNER_IDS.rewildTrust,
      DEMO_PARTNER_IDS.oceanCommons,
    ])

    const off = (
      await post(
        merchant.apiKey,
        '/quotes/carbon',
        floristQuote(merchant.organisationId, {
          responseOptions: { includeImpactPartnerDetails: false, includeImpactPartnerRates: false },
        }),
      )
    ).json()
    expect('impactPartners' in off.credits).toBe(false)
    expect('impactPartners' in off.contribution).toBe(false)
    expect('partnerRates' in off).toBe(false)
  })

  it.each([
    ['xx-XX', /petrol car for 28 miles/],
    ['en-GB', /petrol car for 28 miles/],
    ['en-US', /gas-powered car for 28 miles/],
    ['de', /Fahrt von 44\skm mit einem durchschnittlichen Benzinauto/], // 10833.2 g / 244.2 g per km
    ['fr-FR', /44\skm parcourus/],
    ['sv-SE', /köra ungefär 44\skm/],
  ])('localises equivalents for %s (unsupported locales fall back to en-GB)', async (locale, car) => {
    const res = await post(merchant.apiKey, '/quotes/carbon', floristQuote(merchant.organisationId, { locale }))
    expect(res.statusCode).toBe(201)
    expect(res.json().footprint.equivalents[0].description).toMatch(car)
  })

  it('prices JPY in whole yen and KWD with three decimals', async () => {
    const jpy = (
      await post(
        merchant.apiKey,
        '/quotes/carbon',
        floristQuote(merchant.organisationId, {
          consumer: { reference: 'c', countryCode: 'JPN' },
          transaction: { amount: 12000, currencyCode: 'JPY' },
        }),
      )
    ).json()
    for (const value of Object.values(jpy.credits.amounts) as number[]) expect(Number.isInteger(value)).toBe(true)
    const { amounts } = jpy.credits
    expect(sum(amounts.impact, amounts.impactTax, amounts.serviceFee, amounts.serviceFeeTax)).toBe(String(amounts.total))

    const kwd = (
      await post(
        merchant.apiKey,
        '/quotes/carbon',
        floristQuote(merchant.organisationId, {
          consumer: { reference: 'c', countryCode: 'KWT' },
          transaction: { amount: 25.125, currencyCode: 'KWD' },
        }),
      )
    ).json()
    expect(kwd.currencyCode).toBe('KWD')
    for (const value of Object.values(kwd.credits.amounts) as number[])
      expect(new Decimal(String(value)).decimalPlaces()).toBeLessThanOrEqual(3)
  })

  it("uses the organisation's MCC and location when merchant is omitted", async () => {
    const res = await post(merchant.apiKey, '/quotes/carbon', { ...floristQuote(merchant.organisationId), merchant: undefined })
    expect(res.statusCode).toBe(201)
    expect(res.json().footprint.co2eGrams).toBe(10833.2)
    const explicitNull = await post(merchant.apiKey, '/quotes/carbon', { ...floristQuote(merchant.organisationId), merchant: null })
    expect(explicitNull.statusCode).toBe(201)
  })

  it('requires merchant when the organisation has no MCC (400)', async () => {
    const res = await post(bank.apiKey, '/quotes/carbon', { ...floristQuote(bank.organisationId), merchant: undefined })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ code: 'MCC_REQUIRED', details: [{ path: '/merchant' }] })
    expect((await post(bank.apiKey, '/quotes/carbon', floristQuote(bank.organisationId))).statusCode).toBe(201)
  })

  it.each([
    ['an unknown consumer country', { consumer: { reference: 'c', countryCode: 'XXX' } }, 'UNKNOWN_COUNTRY', '/consumer/countryCode'],
    ['a lower-case country', { consumer: { reference: 'c', countryCode: 'gbr' } }, 'BAD_REQUEST', '/consumer/countryCode'],
    ['a two-letter country', { consumer: { reference: 'c', countryCode: 'GB' } }, 'BAD_REQUEST', '/consumer/countryCode'],
    [
      'an unknown merchant country',
      { merchant: { name: 'x', mcc: '5992', address: { countryCode: 'ZZZ' } } },
      'UNKNOWN_COUNTRY',
      '/merchant/address/countryCode',
    ],
    [
      'a currency that is not ISO 4217',
      { transaction: { amount: 10, currencyCode: 'XYZ' } },
      'UNSUPPORTED_CURRENCY',
      '/transaction/currencyCode',
    ],
    [
      'an ISO currency we cannot price',
      { transaction: { amount: 10, currencyCode: 'BRL' } },
      'UNSUPPORTED_CURRENCY',
      '/transaction/currencyCode',
    ],
    ['a 3-digit MCC', { merchant: { name: 'x', mcc: '599', address: { countryCode: 'GBR' } } }, 'BAD_REQUEST', '/merchant/mcc'],
    ['a zero amount', { transaction: { amount: 0, currencyCode: 'GBP' } }, 'BAD_REQUEST', '/transaction/amount'],
    ['a negative amount', { transaction: { amount: -5, currencyCode: 'GBP' } }, 'BAD_REQUEST', '/transaction/amount'],
    ['too many decimals for GBP', { transaction: { amount: 47.975, currencyCode: 'GBP' } }, 'AMOUNT_PRECISION', '/transaction/amount'],
    ['decimals for JPY', { transaction: { amount: 100.5, currencyCode: 'JPY' } }, 'AMOUNT_PRECISION', '/transaction/amount'],
    ['an amount above AMOUNT_MAX', { transaction: { amount: 1_000_000.01, currencyCode: 'GBP' } }, 'BAD_REQUEST', '/transaction/amount'],
    ['an amount as a string', { transaction: { amount: '47.97', currencyCode: 'GBP' } }, 'BAD_REQUEST', '/transaction/amount'],
    ['an unknown property', { discount: 5 }, 'BAD_REQUEST', '/discount'],
    ['an unknown nested property', { consumer: { reference: 'c', countryCode: 'GBR', email: 'a@b.c' } }, 'BAD_REQUEST', '/consumer/email'],
    ['a missing consumer reference', { consumer: { countryCode: 'GBR' } }, 'BAD_REQUEST', '/consumer/reference'],
    [
      'an over-long consumer reference',
      { consumer: { reference: 'x'.repeat(201), countryCode: 'GBR' } },
      'BAD_REQUEST',
      '/consumer/reference',
    ],
    ['an empty locale', { locale: '' }, 'BAD_REQUEST', '/locale'],
    ['a non-uuid organisation', { organisationId: '42' }, 'BAD_REQUEST', '/organisationId'],
    ['an unknown order item field', { orderItems: [{ sku: 'A', colour: 'red' }] }, 'BAD_REQUEST', '/orderItems/0/colour'],
    ['a fractional quantity', { orderItems: [{ sku: 'A', quantity: 1.5 }] }, 'BAD_REQUEST', '/orderItems/0/quantity'],
    [
      'an order item in an unknown currency',
      { orderItems: [{ sku: 'A', unitPrice: { value: 1, currencyCode: 'QQQ' } }] },
      'UNSUPPORTED_CURRENCY',
      '/orderItems/0/unitPrice/currencyCode',
    ],
    [
      'an order item price with too many decimals',
      { orderItems: [{ sku: 'A', unitPrice: { value: 15.999, currencyCode: 'GBP' } }] },
      'AMOUNT_PRECISION',
      '/orderItems/0/unitPrice/value',
    ],
    ['more than 500 order items', { orderItems: Array.from({ length: 501 }, () => ({ sku: 'A' })) }, 'BAD_REQUEST', '/orderItems'],
  ])('answers 400 for %s', async (_label, extra, code, path) => {
    const res = await post(merchant.apiKey, '/quotes/carbon', floristQuote(merchant.organisationId, extra))
    expect(res.statusCode).toBe(400)
    expect(res.json().code).toBe(code)
    expect(res.json().details.map((d: { path: string }) => d.path)).toContain(path)
  })

  it('accepts order items in the shape of the session request, and nulls for optional objects', async () => {
    const res = await post(
      merchant.apiKey,
      '/quotes/carbon',
      floristQuote(merchant.organisationId, {
        orderItems: FLORIST_EXAMPLE.orderItems,
        responseOptions: null,
      }),
    )
    expect(res.statusCode).toBe(201)
    const row = await t.db.selectFrom('quotes').select(['request']).where('id', '=', res.json().quoteId).executeTakeFirstOrThrow()
    expect(row.request.orderItems).toHaveLength(1)
  })

  it('answers 422 when no credit project is available to the organisation', async () => {
    const limited = await createOrg(t.db)
    const catalogue = demoCatalogue()
    await importCatalogue(
      t.db,
      {
        ...catalogue,
        organisationPartners: [{ organisationId: limited.organisationId, impactPartnerIds: [DEMO_PARTNER_IDS.rewildTrust] }],
      },
      t.clock.now(),
    )
    const res = await post(limited.apiKey, '/quotes/carbon', floristQuote(limited.organisationId))
    expect(res.statusCode).toBe(422)
    expect(res.json().code).toBe('NO_CREDIT_PROJECTS')
    const nature = await post(
      limited.apiKey,
      '/quotes/nature',
      floristQuote(limited.organisationId, { responseOptions: { includeImpactPartnerDetails: true } }),
    )
    expect(nature.statusCode).toBe(201)
    expect(nature.json().contribution.impactPartners.map((p: { id: string }) => p.id)).toEqual([DEMO_PARTNER_IDS.rewildTrust])
  })
})

describe('organisation tree', () => {
  it('lets a parent key quote for its child, and both read it', async () => {
    const res = await post(bank.apiKey, '/quotes/carbon', floristQuote(child.organisationId))
    expect(res.statusCode).toBe(201)
    const id = res.json().quoteId
    expect((await client(t.app, bank.apiKey).get(`/quotes/${id}`)).statusCode).toBe(200)
    expect((await client(t.app, child.apiKey).get(`/quotes/${id}`)).statusCode).toBe(200)
    const row = await t.db.selectFrom('quotes').select('organisation_id').where('id', '=', id).executeTakeFirstOrThrow()
    expect(row.organisation_id).toBe(child.organisationId)
  })

  it("refuses an organisationId outside the key's tree (403) and hides other organisations' quotes (404)", async () => {
    expect((await post(child.apiKey, '/quotes/carbon', floristQuote(bank.organisationId))).statusCode).toBe(403)
    expect((await post(merchant.apiKey, '/quotes/carbon', floristQuote(stranger.organisationId))).statusCode).toBe(403)
    const id = (await post(merchant.apiKey, '/quotes/carbon', floristQuote(merchant.organisationId))).json().quoteId
    for (const path of [`/quotes/${id}`, `/quotes/${id}/projects`, `/v3/quotes/${id}/projects`]) {
      const res = await client(t.app, stranger.apiKey).get(path)
      expect(res.statusCode).toBe(404)
      expect(res.json()).toMatchObject({ code: 'NOT_FOUND', error: 'quote not found' })
    }
    expect((await client(t.app, merchant.apiKey).get('/quotes/6f1c2b8e-0000-4000-8000-000000000000')).statusCode).toBe(404)
    expect((await client(t.app, merchant.apiKey).get('/quotes/nope/projects')).statusCode).toBe(400)
  })
})

describe('stored quotes', () => {
  it('GET /quotes/:id returns the creation response byte for byte', async () => {
    const created = await post(
      merchant.apiKey,
      '/quotes/carbon',
      floristQuote(merchant.organisationId, {
        responseOptions: { includeImpactPartnerDetails: true, includeImpactPartnerRates: true },
      }),
    )
    const id = created.json().quoteId
    const read = await client(t.app, merchant.apiKey).get(`/quotes/${id}`)
    expect(read.statusCode).toBe(200)
    expect(read.body).toBe(created.body)
  })

  it('never changes when the catalogue or rates change afterwards', async () => {
    const before = await post(merchant.apiKey, '/quotes/carbon', floristQuote(merchant.organisationId))
    const id = before.json().quoteId
    const projectsBefore = (await client(t.app, merchant.apiKey).get(`/quotes/${id}/projects`)).body
    const catalogue = demoCatalogue()
    await importCatalogue(
      t.db,
      {
        ...catalogue,
        projects: catalogue.projects.map((p) => ({ ...p, price: '99.00', name: `${p.name} (renamed)` })),
      },
      t.clock.now(),
    )
    await t.db.updateTable('organisations').set({ service_fee_rate: '0.5' }).where('id', '=', merchant.organisationId).execute()
    try {
      t.app.log.info('catalogue and fee changed')
      const after = await client(t.app, merchant.apiKey).get(`/quotes/${id}`)
      expect(after.body).toBe(before.body)
      expect((await client(t.app, merchant.apiKey).get(`/quotes/${id}/projects`)).body).toBe(projectsBefore)
      // The same request now prices with the new data.
      const fresh = (await post(merchant.apiKey, '/quotes/carbon', floristQuote(merchant.organisationId))).json()
      expect(fresh.credits.unit.price).not.toBe(before.json().credits.unit.price)
      expect(fresh.credits.effectiveRates.serviceFee).not.toBe(before.json().credits.effectiveRates.serviceFee)
    } finally {
      await importCatalogue(t.db, catalogue, t.clock.now())
      await t.db.updateTable('organisations').set({ service_fee_rate: '0.2' }).where('id', '=', merchant.organisationId).execute()
    }
  })

  it('stores the locked quote with its provenance', async () => {
    const id = (await post(merchant.apiKey, '/quotes/carbon', floristQuote(merchant.organisationId))).json().quoteId
    const row = await t.db.selectFrom('quotes').selectAll().where('id', '=', id).executeTakeFirstOrThrow()
    expect(row).toMatchObject({
      organisation_id: merchant.organisationId,
      impact_type: 'carbon',
      currency_code: 'GBP',
      tax_liability: 'platform',
    })
    // The shared part (partners, priced projects, provenance, rates, partner ids, the equivalents' sentences) is stored
    // once per distinct content; the row keeps this quote's figures only (CompactLockedQuote).
    const { footprint, credits } = (await findQuoteById(t.db, id))?.locked ?? {}
    expect(row.locked).toEqual([
      footprint?.kind === 'carbon' ? [footprint.co2eGrams, footprint.co2eOunces] : null,
      credits
        ? [
            credits.amounts.total,
            credits.amounts.impact,
            credits.amounts.impactTax,
            credits.amounts.serviceFee,
            credits.amounts.serviceFeeTax,
          ]
        : null,
      [expect.any(Number), expect.any(Number), expect.any(Number)],
    ])
    const snapshot = await t.db
      .selectFrom('quote_snapshots')
      .selectAll()
      .where('id', '=', row.snapshot_id ?? '')
      .executeTakeFirstOrThrow()
    expect(snapshot.body.provenance?.factor).toMatchObject({ mcc: '5992', region: 'GBR', baseCurrency: 'EUR' })
    expect(snapshot.body.provenance?.fx).toMatchObject({ from: 'GBP', to: 'EUR', date: expect.any(String) })
    expect(snapshot.body.provenance?.tax).toMatchObject({ ruleSetVersion: expect.any(String), jurisdiction: { country: 'GB' } })
    expect(snapshot.body.projects.map((p) => p.id)).toHaveLength(3)
    expect(snapshot.body.partners.length).toBeGreaterThan(0)
    expect(snapshot.body.shared).toMatchObject({ locale: 'en-GB', currencyCode: 'GBP', credits: { unit: { description: 'tCO2e' } } })
    expect(snapshot.body.shared?.equivalents.map((e) => e[0])).toEqual(['car', 'phone', 'tree'])
    const second = (
      await post(
        merchant.apiKey,
        '/quotes/carbon',
        floristQuote(merchant.organisationId, { transaction: { amount: 12.5, currencyCode: 'GBP' } }),
      )
    ).json().quoteId
    const secondRow = await t.db.selectFrom('quotes').select('snapshot_id').where('id', '=', second).executeTakeFirstOrThrow()
    expect(secondRow.snapshot_id).toBe(row.snapshot_id)
  })
})

describe('GET /quotes/:id/projects', () => {
  it('lists the priced projects with their locked weights (spec shape + weight)', async () => {
    const id = (await post(merchant.apiKey, '/quotes/carbon', floristQuote(merchant.organisationId))).json().quoteId
    const res = await client(t.app, merchant.apiKey).get(`/v3/quotes/${id}/projects`)
    expect(res.statusCode).toBe(200)
    const projects = res.json()
    expect(projects).toHaveLength(3)
    expect(projects[0]).toEqual({
      id: '1bac135c-c299-4e11-9883-d3be61f1e0de',
      impactPartnerId: DEMO_PARTNER_IDS.verdantRemovals,
      name: 'Agroforestry restoration, Rwanda (demo)',
      shortDescription: expect.any(String),
      type: 'carbonCredits',
      location: { countryCode: 'RWA', state: null },
      unit: { description: 'tCO2e', price: 18.4, currencyCode: 'GBP' }, // $25 × 0.735883
      weight: 0.3333333333,
    })
    expect(sum(...projects.map((p: { weight: number }) => p.weight))).toBe('0.9999999999')
  })
})

describe('POST /quotes/nature', () => {
  it('returns the nature footprint and contribution rates, with no credits section', async () => {
    const res = await post(
      merchant.apiKey,
      '/v3/quotes/nature',
      floristQuote(merchant.organisationId, {
        locale: 'de-DE',
        consumer: { reference: 'c', countryCode: 'DEU' },
        transaction: { amount: 100, currencyCode: 'EUR' },
        responseOptions: { includeImpactPartnerRates: true },
      }),
    )
    expect(res.statusCode).toBe(201)
    const quote = res.json()
    expect(Object.keys(quote).sort()).toEqual(['contribution', 'createdAt', 'currencyCode', 'footprint', 'partnerRates', 'quoteId'])
    expect(quote.footprint.areaSquareMetres).toBeGreaterThan(0)
    expect(quote.footprint.areaSquareFeet).toBeCloseTo(quote.footprint.areaSquareMetres * 10.7639104167, 1)
    expect(quote.footprint.equivalents.length).toBeGreaterThan(0)
    // German consumer: 19% VAT on the fee: D = 1 + 0.2 × 1.19 = 1.238. Shares of 10^10: 8077544426.49,
    // 1615508885.30, 306946688.21 → floors leave 1 unit, which goes to the largest remainder (.49).
    expect(quote.contribution.effectiveRates).toEqual({
      impact: 0.8077544427,
      impactTax: 0,
      serviceFee: 0.1615508885,
      serviceFeeTax: 0.0306946688,
    })
    expect(quote.partnerRates.credits).toEqual([])
    const projects = await client(t.app, merchant.apiKey).get(`/quotes/${quote.quoteId}/projects`)
    expect(projects.json()).toEqual([])
    expect((await client(t.app, merchant.apiKey).get(`/quotes/${quote.quoteId}`)).body).toBe(res.body)
  })
})
