// Sales tax by province through the API: Ontario is 13% in every accepted spelling, and a state the
// API does not recognise is a 400 UNKNOWN_SUBDIVISION, never a quote at the federal rate alone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { client, createTestApp, type TestApp } from '../helpers/app.js'
import { createOrg, importDemoCatalogue, type OrgFixture } from '../helpers/factories.js'

let t: TestApp
let org: OrgFixture

beforeAll(async () => {
  t = await createTestApp()
  await importDemoCatalogue(t.db)
  org = await createOrg(t.db, { mcc: '5992', countryCode: 'CAN' })
})
afterAll(() => t.close())

const quoteBody = (consumer: Record<string, unknown>, merchantAddress: Record<string, unknown> = { countryCode: 'CAN' }) => ({
  organisationId: org.organisationId,
  locale: 'en-GB',
  consumer: { reference: 'c-1', ...consumer },
  merchant: { name: 'Fleuriste', mcc: '5992', address: merchantAddress },
  transaction: { amount: 100, currencyCode: 'CAD' },
})

const post = (body: unknown) => client(t.app, org.apiKey).post('/quotes/carbon', body)

// Canada: no tax on credits, the organisation's fee f = 0.2 taxed at tf. The contribution section's
// effective fee-tax rate is f·tf / (1 + f·(1 + tf)), shown to 10 decimals.
const feeTaxShare = (tf: number) => Number(((0.2 * tf) / (1 + 0.2 * (1 + tf))).toFixed(10))

describe('POST /quotes/carbon for an Ontario consumer', () => {
  it.each(['ON', 'on', 'CA-ON', 'ca-on', 'Ontario', 'ontario', ' ONTARIO '])('state %j: HST 13%', async (state) => {
    const res = await post(quoteBody({ countryCode: 'CAN', state }))
    expect(res.statusCode).toBe(201)
    const quote = res.json()
    expect(quote.contribution.effectiveRates.serviceFeeTax).toBe(feeTaxShare(0.13))
    expect(quote.credits.effectiveRates.serviceFeeTax).toBe(feeTaxShare(0.13))
    expect(quote.credits.effectiveRates.serviceFeeTax).not.toBe(feeTaxShare(0.05))
  })

  it('allocations against it carry the 13% rate', async () => {
    const quote = (await post(quoteBody({ countryCode: 'CAN', state: 'CA-ON' }))).json()
    const res = await client(t.app, org.apiKey).post(
      '/funds/allocations',
      { organisationId: org.organisationId, quoteId: quote.quoteId, credits: { amount: quote.credits.amounts.total } },
      { 'idempotency-key': 'tax-subdivisions-1' },
    )
    expect(res.statusCode).toBe(201)
    for (const entry of res.json().credits) expect(entry.serviceFeeSalesTaxRate).toBe(0.13)
  })

  it('a consumer without a state and an Ontario merchant: 13% from the merchant', async () => {
    const res = await post(quoteBody({ countryCode: 'CAN' }, { countryCode: 'CAN', state: 'Ontario' }))
    expect(res.statusCode).toBe(201)
    expect(res.json().credits.effectiveRates.serviceFeeTax).toBe(feeTaxShare(0.13))
  })
})

describe('an unknown state where tax depends on it', () => {
  it.each([
    ['CAN', 'ONT', 'province or territory', '"ON" or "CA-ON"'],
    ['CAN', 'XX', 'province or territory', '"ON" or "CA-ON"'],
    ['CAN', 'US-ON', 'province or territory', '"ON" or "CA-ON"'],
    ['USA', 'ZZ', 'state', '"NY" or "US-NY"'],
    ['USA', 'US-ZZ', 'state', '"NY" or "US-NY"'],
  ])('consumer %s state %j → 400 UNKNOWN_SUBDIVISION at /consumer/state', async (countryCode, state, kind, forms) => {
    const res = await post(quoteBody({ countryCode, state }, { countryCode }))
    expect(res.statusCode).toBe(400)
    const body = res.json()
    expect(body).toEqual({
      error: expect.stringContaining(`unknown ${kind} ${JSON.stringify(state)} for ${countryCode}`),
      code: 'UNKNOWN_SUBDIVISION',
      details: [{ path: '/consumer/state', message: body.error }],
      requestId: expect.any(String),
    })
    expect(body.error).toContain(forms)
  })

  it.each([
    ['CAN', 'ONT'],
    ['USA', 'ZZ'],
  ])('merchant %s state %j, consumer without one → 400 at /merchant/address/state', async (countryCode, state) => {
    const res = await post(quoteBody({ countryCode }, { countryCode, state }))
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ code: 'UNKNOWN_SUBDIVISION', details: [{ path: '/merchant/address/state' }] })
  })

  it('also on session creation (the quote behind it)', async () => {
    const res = await client(t.app, org.apiKey).post('/v3/checkout/sessions', {
      organisationId: org.organisationId,
      consumer: { reference: 'c-1', countryCode: 'CAN', state: 'ONT' },
      transaction: { amount: 100, currencyCode: 'CAD' },
    })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ code: 'UNKNOWN_SUBDIVISION', details: [{ path: '/consumer/state' }] })
  })

  it('nothing is stored for a refused quote', async () => {
    const before = await t.db
      .selectFrom('quotes')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow()
    await post(quoteBody({ countryCode: 'CAN', state: 'ONT' }))
    const after = await t.db
      .selectFrom('quotes')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow()
    expect(Number(after.n)).toBe(Number(before.n))
  })
})

describe('a state where tax does not depend on it', () => {
  it('a US merchant with an unknown state is not checked when the Canadian consumer gives a province', async () => {
    const res = await post(quoteBody({ countryCode: 'CAN', state: 'QC' }, { countryCode: 'USA', state: 'ZZ' }))
    expect(res.statusCode).toBe(201)
  })

  it('a British consumer with any state text', async () => {
    const res = await post(quoteBody({ countryCode: 'GBR', state: 'XX' }))
    expect(res.statusCode).toBe(201)
  })
})
