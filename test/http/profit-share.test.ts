// Profit share for an organisation tree (docs/pricing.md, "Profit share"; docs/reconciliation.md, "Profit share",
// "Statements"): platform → PSP (0.2) → merchant (0.6 of it), records hand-computed in GBP, with USD billing and in
// JPY; reversals negate exactly; who sees which lines; the statement equals the sums of the month's records; the
// webhook event of an allocation is the impact record, unchanged.
import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Decimal } from 'decimal.js'
import { standardEventBody } from '../../src/domain/webhooks.js'
import { findImpactRecordById } from '../../src/db/repositories/impact-records.js'
import { impactRecordOf } from '../../src/services/reconciliation.js'
import { impactEventBodies } from '../../src/services/webhooks/events.js'
import { setProfitShareSettings } from '../../src/services/organisations.js'
import { client, createTestApp, type TestApp } from '../helpers/app.js'
import { createOrg, floristQuote, importDemoCatalogue, type OrgFixture } from '../helpers/factories.js'

let t: TestApp
let psp: OrgFixture
let merchant: OrgFixture
/** A second merchant of the PSP with no share of its own: its allocations give the PSP the whole 0.2. */
let plainMerchant: OrgFixture
let stranger: OrgFixture
let jpPsp: OrgFixture
let jpMerchant: OrgFixture
const ids: Record<string, string> = {}

const WINDOW = 'dateTimeFrom=2026-11-01T00:00:00Z&dateTimeTo=2026-12-01T00:00:00Z'
const MINUTE = 60_000

async function keyFor(parentKey: string, organisationId: string): Promise<string> {
  const res = await client(t.app, parentKey).post('/v3/api-keys', { organisationId })
  expect(res.statusCode).toBe(201)
  return res.json().apiKey
}

async function quoteFor(org: OrgFixture, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await client(t.app, org.apiKey).post('/quotes/carbon', floristQuote(org.organisationId, extra))
  expect(res.statusCode).toBe(201)
  return res.json().quoteId
}

async function allocate(key: string, organisationId: string, quoteId: string, amount: number): Promise<string> {
  const res = await client(t.app, key).post(
    '/funds/allocations',
    { organisationId, quoteId, contribution: { amount } },
    { 'idempotency-key': randomUUID() },
  )
  expect(res.statusCode).toBe(201)
  t.clock.advance(MINUTE)
  return res.json().fundsAllocationId
}

const record = async (key: string, id: string) => client(t.app, key).get(`/v3/funds/allocations/${id}/profit-share`)
interface WireLine {
  beneficiaryOrganisationId: string
  billingCurrencyCode: string
  billingCurrencyExchangeRate: number
  fundsProfitShare: number
  amounts: { profitShare: number; profitShareTax: number; profitShareTaxRate: number }
}
const lines = (body: { profitShareAllocations: WireLine[] }) =>
  body.profitShareAllocations.map((l) => ({
    beneficiary: l.beneficiaryOrganisationId,
    currency: l.billingCurrencyCode,
    rate: l.billingCurrencyExchangeRate,
    funds: l.fundsProfitShare,
    ...l.amounts,
  }))

beforeAll(async () => {
  t = await createTestApp()
  await importDemoCatalogue(t.db)
  psp = await createOrg(t.db, { relativeProfitShare: '0.2', organisationReference: 'PSP_001' })
  // The PSP's key creates its merchant with 0.6 of the PSP's share.
  const created = await client(t.app, psp.apiKey).post('/v3/organisations', {
    parentOrganisationId: psp.organisationId,
    tradingName: 'Blossom & Bloom',
    legalName: 'BB Flowers Ltd',
    organisationReference: 'MID1234567',
    address: { line1: '45 Rosewood Avenue', city: 'London', postalCode: 'SW1A 1AA', countryCode: 'GBR' },
    currencyCode: 'GBP',
    mcc: '5992',
    relativeProfitShare: 0.6,
  })
  expect(created.statusCode).toBe(201)
  merchant = { organisationId: created.json().organisationId, apiKey: '', apiKeyPrefix: '' }
  merchant.apiKey = await keyFor(psp.apiKey, merchant.organisationId)
  plainMerchant = await createOrg(t.db, { parentId: psp.organisationId })
  stranger = await createOrg(t.db)
  jpPsp = await createOrg(t.db, { relativeProfitShare: '0.2', countryCode: 'JPN', currencyCode: 'JPY' })
  jpMerchant = await createOrg(t.db, {
    parentId: jpPsp.organisationId,
    relativeProfitShare: '0.6',
    countryCode: 'JPN',
    currencyCode: 'JPY',
  })
  // The JPY tree settles net (the operator's setting, on its root).
  await setProfitShareSettings(t.db, { organisationId: jpPsp.organisationId, settlementModel: 'net' })

  // 12.40 GBP of contribution with a 0.2 fee taxed at 20%: D = 1.24, so impact 10.00, fee 2.00, fee tax 0.40.
  const quote = await quoteFor(merchant)
  ids.gbp = await allocate(psp.apiKey, merchant.organisationId, quote, 12.4)
  ids.plain = await allocate(plainMerchant.apiKey, plainMerchant.organisationId, await quoteFor(plainMerchant), 12.4)
  ids.stranger = await allocate(stranger.apiKey, stranger.organisationId, await quoteFor(stranger), 12.4)
  // ¥1,220 with JP consumption tax 10% on the fee: D = 1.22, so impact ¥1,000, fee ¥200, fee tax ¥20.
  const jpQuote = await quoteFor(jpMerchant, {
    consumer: { reference: 'consumer_jp', countryCode: 'JPN' },
    merchant: { name: 'Hanaya', mcc: '5992', address: { line1: '1-1', city: 'Tokyo', postalCode: '100-0001', countryCode: 'JPN' } },
    transaction: { amount: 5000, currencyCode: 'JPY' },
  })
  ids.jpy = await allocate(jpPsp.apiKey, jpMerchant.organisationId, jpQuote, 1220)
})
afterAll(() => t.close())

describe('organisations with profit share', () => {
  it("a share on a share: the merchant's 0.6 of the PSP's 0.2 is 0.12; the tree's settlement model is inherited", async () => {
    const res = await client(t.app, psp.apiKey).get(`/v3/organisations/${merchant.organisationId}`)
    expect(res.json()).toMatchObject({
      relativeProfitShare: 0.6,
      proportionalProfitShare: 0.12,
      settlementModel: 'gross',
      billing: null,
      serviceFeePercentage: 0.2,
    })
    const jp = await client(t.app, jpPsp.apiKey).get(`/v3/organisations/${jpMerchant.organisationId}`)
    expect(jp.json()).toMatchObject({ proportionalProfitShare: 0.12, settlementModel: 'net' })
  })

  it.each([
    ['a share above 1', { relativeProfitShare: 1.5 }, 'INVALID_PROFIT_SHARE', '/relativeProfitShare'],
    ['a negative share', { relativeProfitShare: -0.1 }, 'INVALID_PROFIT_SHARE', '/relativeProfitShare'],
    ['a share with 7 decimals', { relativeProfitShare: 0.1234567 }, 'INVALID_PROFIT_SHARE', '/relativeProfitShare'],
    [
      'a billing currency Canopy cannot price',
      { billing: { currencyCode: 'XAU' } },
      'UNSUPPORTED_BILLING_CURRENCY',
      '/billing/currencyCode',
    ],
    ['an unknown billing country', { billing: { currencyCode: 'USD', countryCode: 'XXX' } }, 'UNKNOWN_COUNTRY', '/billing/countryCode'],
    [
      'an unknown billing state',
      { billing: { currencyCode: 'USD', countryCode: 'USA', state: 'ZZ' } },
      'UNKNOWN_SUBDIVISION',
      '/billing/state',
    ],
    ['a settlement model (the operator sets it)', { settlementModel: 'net' }, 'BAD_REQUEST', '/settlementModel'],
  ])('PATCH with %s → 400 %s', async (_label, body, code, path) => {
    const res = await client(t.app, psp.apiKey).patch(`/v3/organisations/${plainMerchant.organisationId}`, body)
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ code, details: expect.arrayContaining([expect.objectContaining({ path })]) })
  })

  it("a share is set by the parent's tree: its own key → 403 PROFIT_SHARE_SET_BY_PARENT, the parent's → 200", async () => {
    for (const [key, id] of [
      [merchant.apiKey, merchant.organisationId],
      [psp.apiKey, psp.organisationId],
    ] as const) {
      const own = await client(t.app, key).patch(`/v3/organisations/${id}`, { relativeProfitShare: 1 })
      expect(own.statusCode).toBe(403)
      expect(own.json().code).toBe('PROFIT_SHARE_SET_BY_PARENT')
    }
    const other = await client(t.app, stranger.apiKey).patch(`/v3/organisations/${merchant.organisationId}`, { relativeProfitShare: 1 })
    expect(other.statusCode).toBe(404)
    const byParent = await client(t.app, psp.apiKey).patch(`/v3/organisations/${plainMerchant.organisationId}`, {
      relativeProfitShare: 0.25,
    })
    expect(byParent.statusCode).toBe(200)
    expect(byParent.json()).toMatchObject({ relativeProfitShare: 0.25, proportionalProfitShare: 0.05 })
    const back = await client(t.app, psp.apiKey).patch(`/v3/organisations/${plainMerchant.organisationId}`, { relativeProfitShare: 0 })
    expect(back.json().proportionalProfitShare).toBe(0)
  })

  it("the operator sets a root's settlement model, never a child's (SETTLEMENT_MODEL_ROOT_ONLY)", async () => {
    await expect(setProfitShareSettings(t.db, { organisationId: merchant.organisationId, settlementModel: 'net' })).rejects.toMatchObject({
      code: 'SETTLEMENT_MODEL_ROOT_ONLY',
    })
  })

  it('an organisation sets its own billing details, shown on GET', async () => {
    const res = await client(t.app, merchant.apiKey).patch(`/v3/organisations/${merchant.organisationId}`, {
      billing: { currencyCode: 'USD', email: 'billing@blossom.example', taxNumber: 'GB123456789', countryCode: 'GBR' },
    })
    expect(res.statusCode).toBe(200)
    expect(res.json().billing).toEqual({
      currencyCode: 'USD',
      email: 'billing@blossom.example',
      taxNumber: 'GB123456789',
      companyRegistrationNumber: null,
      countryCode: 'GBR',
      state: null,
    })
    // Allocations from now on bill the merchant's share in USD.
    ids.usd = await allocate(psp.apiKey, merchant.organisationId, await quoteFor(merchant), 12.4)
    ids.reversal = (await client(t.app, psp.apiKey).post(`/funds/allocations/${ids.gbp}/reverse`)).json().reversalId
    t.clock.advance(MINUTE)
  })
})

describe('profit-share records', () => {
  it('GBP: fee 2.00 → PSP 0.16 (tax 0.03 at 20%), merchant 0.24 (tax 0.05), platform 1.60; the root sees every line', async () => {
    const res = await record(psp.apiKey, ids.gbp!)
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(body).toMatchObject({
      fundsAllocationId: ids.gbp,
      fundsOrganisationId: merchant.organisationId,
      fundsOrganisationReference: 'MID1234567',
      billingOrganisationId: psp.organisationId,
      fundsCurrencyCode: 'GBP',
      reversal: false,
      settlementModel: 'gross',
      amounts: { total: 12.4, impact: 10, impactTax: 0, serviceFee: 2, serviceFeeTax: 0.4 },
      merchant: { name: 'Blossom & Bloom', mcc: '5992' },
      platformProfitShare: 1.6,
    })
    expect(body.merchant).not.toHaveProperty('address')
    expect(body).not.toHaveProperty('collectionOrganisationId')
    expect(lines(body)).toEqual([
      {
        beneficiary: psp.organisationId,
        currency: 'GBP',
        rate: 1,
        funds: 0.16,
        profitShare: 0.16,
        profitShareTax: 0.03,
        profitShareTaxRate: 0.2,
      },
      {
        beneficiary: merchant.organisationId,
        currency: 'GBP',
        rate: 1,
        funds: 0.24,
        profitShare: 0.24,
        profitShareTax: 0.05,
        profitShareTaxRate: 0.2,
      },
    ])
    expect(body.profitShareAllocations[0].beneficiaryOrganisationReference).toBe('PSP_001')
  })

  it('USD billing: the merchant line at the locked GBP→USD rate (10 significant digits), each amount rounded once', async () => {
    const body = (await record(psp.apiKey, ids.usd!)).json()
    // 0.24 × 1.358912317 = 0.3261… → 0.33 USD; × 0.2 = 0.0652… → 0.07 USD. The PSP is still billed in GBP.
    expect(lines(body)).toEqual([
      {
        beneficiary: psp.organisationId,
        currency: 'GBP',
        rate: 1,
        funds: 0.16,
        profitShare: 0.16,
        profitShareTax: 0.03,
        profitShareTaxRate: 0.2,
      },
      {
        beneficiary: merchant.organisationId,
        currency: 'USD',
        rate: 1.358912317,
        funds: 0.24,
        profitShare: 0.33,
        profitShareTax: 0.07,
        profitShareTaxRate: 0.2,
      },
    ])
  })

  it('JPY: fee ¥200 → PSP ¥16 (tax ¥2 at 10%), merchant ¥24 (tax ¥2), platform ¥160, settled net', async () => {
    const body = (await record(jpPsp.apiKey, ids.jpy!)).json()
    expect(body).toMatchObject({ settlementModel: 'net', platformProfitShare: 160, amounts: { serviceFee: 200, serviceFeeTax: 20 } })
    expect(lines(body).map((l) => [l.funds, l.profitShare, l.profitShareTax, l.profitShareTaxRate])).toEqual([
      [16, 16, 2, 0.1],
      [24, 24, 2, 0.1],
    ])
  })

  it('a reversal is a record of its own with every amount of its allocation negated exactly', async () => {
    const allocation = (await record(psp.apiKey, ids.gbp!)).json()
    const reversal = (await record(psp.apiKey, ids.reversal!)).json()
    expect(reversal).toMatchObject({ reversal: true, reversalId: ids.reversal, fundsAllocationId: ids.gbp, platformProfitShare: -1.6 })
    expect(reversal.amounts).toEqual({ total: -12.4, impact: -10, impactTax: 0, serviceFee: -2, serviceFeeTax: -0.4 })
    expect(lines(reversal)).toEqual(
      lines(allocation).map((l) => ({
        ...l,
        funds: -l.funds,
        profitShare: -(l.profitShare as number),
        profitShareTax: -(l.profitShareTax as number),
      })),
    )
  })

  it('a beneficiary sees its own lines (and those below it), not its parent’s nor the platform’s part', async () => {
    const body = (await record(merchant.apiKey, ids.gbp!)).json()
    expect(body.platformProfitShare).toBeNull()
    expect(lines(body).map((l) => l.beneficiary)).toEqual([merchant.organisationId])
    // The PSP keeps the whole 0.2 of a merchant without a share: that merchant has no line to see.
    expect((await record(psp.apiKey, ids.plain!)).json().profitShareAllocations).toHaveLength(1)
    expect((await record(plainMerchant.apiKey, ids.plain!)).statusCode).toBe(404)
  })

  it('no profit share up the chain: nothing stored, no record (404); another tree’s record is not found either', async () => {
    const { rows } = await sql<{ profit_share: unknown }>`SELECT profit_share FROM allocations WHERE id = ${ids.stranger}`.execute(t.db)
    expect(rows[0]?.profit_share).toBeNull()
    expect((await record(stranger.apiKey, ids.stranger!)).statusCode).toBe(404)
    const other = await record(stranger.apiKey, ids.gbp!)
    expect(other.statusCode).toBe(404)
    expect(other.json().code).toBe('NOT_FOUND')
  })

  it('the list: ekko’s parameters, keyset pages both ways, each reader’s records', async () => {
    const list = (key: string, query = '') => client(t.app, key).get(`/v3/funds/allocations/profit-share?${WINDOW}${query}`)
    const all = (await list(psp.apiKey)).json()
    expect(all.hasMore).toBe(false)
    expect(all.data.map((r: { reversalId?: string; fundsAllocationId: string }) => r.reversalId ?? r.fundsAllocationId)).toEqual([
      ids.gbp,
      ids.plain,
      ids.usd,
      ids.reversal,
    ])
    const first = (await list(psp.apiKey, '&limit=2')).json()
    expect(first.hasMore).toBe(true)
    const next = (await list(psp.apiKey, `&limit=2&startingAfter=${ids.plain}`)).json()
    expect(next.data.map((r: { fundsAllocationId: string }) => r.fundsAllocationId)).toEqual([ids.usd, ids.gbp])
    const back = (await list(psp.apiKey, `&limit=2&endingBefore=${ids.usd}`)).json()
    expect(back).toMatchObject({ hasMore: false, data: first.data })
    const mine = (await list(merchant.apiKey)).json()
    expect(mine.data.map((r: { fundsAllocationId: string }) => r.fundsAllocationId)).toEqual([ids.gbp, ids.usd, ids.gbp])
    expect((await list(plainMerchant.apiKey)).json().data).toEqual([])
    const one = (await list(psp.apiKey, `&fundsOrganisationId=${plainMerchant.organisationId}`)).json()
    expect(one.data.map((r: { fundsAllocationId: string }) => r.fundsAllocationId)).toEqual([ids.plain])
  })

  it.each([
    ['consumerReference (not a parameter of this list)', '&consumerReference=x', 400, 'BAD_REQUEST'],
    ['impactPartnerId (not a parameter of this list)', `&impactPartnerId=${randomUUID()}`, 400, 'BAD_REQUEST'],
    ['a window backwards', '&dateTimeFrom=2026-12-02T00:00:00Z', 400, 'INVALID_DATE_RANGE'],
    ['both cursors', `&startingAfter=${randomUUID()}&endingBefore=${randomUUID()}`, 400, 'INVALID_CURSOR'],
    ['an unknown cursor', `&startingAfter=${randomUUID()}`, 400, 'INVALID_CURSOR'],
    ['a limit of 101', '&limit=101', 400, 'BAD_REQUEST'],
  ])('the list with %s → %i %s', async (_label, query, status, code) => {
    const url = `/v3/funds/allocations/profit-share?${query.startsWith('&dateTimeFrom') ? `dateTimeTo=2026-12-01T00:00:00Z${query}` : `${WINDOW}${query}`}`
    const res = await client(t.app, psp.apiKey).get(url)
    expect(res.statusCode).toBe(status)
    expect(res.json().code).toBe(code)
  })

  it('another tree: its organisation → 403, its record as a cursor → 400 INVALID_CURSOR, no key → 401', async () => {
    const list = (query: string) => client(t.app, psp.apiKey).get(`/v3/funds/allocations/profit-share?${WINDOW}${query}`)
    expect((await list(`&fundsOrganisationId=${stranger.organisationId}`)).statusCode).toBe(403)
    expect((await list(`&startingAfter=${ids.stranger}`)).json().code).toBe('INVALID_CURSOR')
    expect((await client(t.app).get(`/v3/funds/allocations/profit-share?${WINDOW}`)).statusCode).toBe(401)
    // The export refuses the same input before streaming anything.
    const backwards = await client(t.app, psp.apiKey).get(
      '/v3/funds/allocations/profit-share/export?dateTimeFrom=2026-12-01T00:00:00Z&dateTimeTo=2026-11-01T00:00:00Z',
    )
    expect(backwards.json().code).toBe('INVALID_DATE_RANGE')
  })

  it('the CSV export: one row per line the reader sees, amounts exactly as stored', async () => {
    const res = await client(t.app, merchant.apiKey).get(`/v3/funds/allocations/profit-share/export?${WINDOW}`)
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8')
    const rows = res.body.trimEnd().split('\r\n')
    expect(rows[0]).toMatch(
      /^recordId,fundsAllocationId,reversalId,reversal,fundsDateTime,.*,profitShare,profitShareTax,profitShareTaxRate$/,
    )
    expect(rows.slice(1).map((r) => r.split(',').slice(-8))).toEqual([
      [merchant.organisationId, 'MID1234567', '0.24', 'GBP', '1', '0.24', '0.05', '0.2'],
      [merchant.organisationId, 'MID1234567', '0.24', 'USD', '1.358912317', '0.33', '0.07', '0.2'],
      [merchant.organisationId, 'MID1234567', '-0.24', 'GBP', '1', '-0.24', '-0.05', '0.2'],
    ])
  })
})

describe('the webhook event of an allocation with profit share', () => {
  it('is the impact record, byte for byte as GET …/:id/impact shows it: no profit-share field is added', async () => {
    // The body the worker renders for the allocation's event (src/services/webhooks/events.ts).
    const stored = await findImpactRecordById(t.db, ids.usd!)
    const eventId = randomUUID()
    const { standard: body } = impactEventBodies({
      id: eventId,
      type: 'allocation.created',
      record: impactRecordOf(stored!),
      quoteCo2eGrams: null,
    })
    const impact = (await client(t.app, psp.apiKey).get(`/v3/funds/allocations/${ids.usd}/impact`)).json()
    expect(body).toBe(
      standardEventBody({
        id: eventId,
        type: 'allocation.created',
        timestamp: new Date(impact.fundsDateTime),
        organisationId: merchant.organisationId,
        data: impact,
      }),
    )
    expect(body).not.toMatch(/profitShare|billing|settlementModel/)
  })
})

describe('statements', () => {
  const statement = (key: string, organisationId: string, period = '2026-11', accept?: string) =>
    client(t.app, key).get(`/v3/statements?organisationId=${organisationId}&period=${period}`, accept ? { accept } : {})

  /** Σ of the month's impact records this organisation collected, and of its profit-share lines, from the lists. */
  async function sumsOfRecords(key: string, organisationId: string) {
    const impact = (await client(t.app, key).get(`/v3/funds/allocations/impact?${WINDOW}&limit=100`)).json().data as {
      collectionOrganisationId: string
      fundsCurrencyCode: string
      amounts: Record<string, number>
    }[]
    const shares = (await client(t.app, key).get(`/v3/funds/allocations/profit-share?${WINDOW}&limit=100`)).json().data as {
      profitShareAllocations: { beneficiaryOrganisationId: string; billingCurrencyCode: string; amounts: Record<string, number> }[]
    }[]
    const sums = new Map<string, Record<string, Decimal>>()
    const add = (currency: string, field: string, value: number) => {
      const entry = sums.get(currency) ?? {}
      entry[field] = (entry[field] ?? new Decimal(0)).plus(value)
      sums.set(currency, entry)
    }
    for (const r of impact.filter((r) => r.collectionOrganisationId === organisationId)) {
      for (const field of ['total', 'impact', 'impactTax', 'serviceFee', 'serviceFeeTax'])
        add(r.fundsCurrencyCode, field, r.amounts[field]!)
    }
    for (const line of shares.flatMap((r) => r.profitShareAllocations).filter((l) => l.beneficiaryOrganisationId === organisationId)) {
      add(line.billingCurrencyCode, 'earned', line.amounts.profitShare!)
      add(line.billingCurrencyCode, 'tax', line.amounts.profitShareTax!)
    }
    return sums
  }

  it.each([
    ['the PSP', () => psp],
    ['the merchant', () => merchant],
  ])('%s: equal to the sums of the month’s impact and profit-share records, per currency', async (_label, org) => {
    const { organisationId } = org()
    const body = (await statement(psp.apiKey, organisationId)).json()
    expect(body).toMatchObject({
      organisationId,
      period: '2026-11',
      from: '2026-11-01T00:00:00.000Z',
      complete: false,
      settlementModel: 'gross',
    })
    const expected = await sumsOfRecords(psp.apiKey, organisationId)
    expect(body.currencies.map((c: { currencyCode: string }) => c.currencyCode)).toEqual([...expected.keys()].sort())
    for (const c of body.currencies) {
      const sums = expected.get(c.currencyCode)!
      const n = (field: string) => (sums[field] ?? new Decimal(0)).toNumber()
      expect(c.collected).toMatchObject({ total: n('total'), impact: n('impact'), impactTax: n('impactTax'), serviceFee: n('serviceFee') })
      expect(c.collected.serviceFeeTax).toBe(n('serviceFeeTax'))
      expect(c.profitShare).toMatchObject({ earned: n('earned'), tax: n('tax') })
      // Gross: the collector pays the platform everything; the platform pays each share and its tax.
      expect(c.settlement).toMatchObject({ payableToPlatform: n('total'), profitShareWithheld: 0 })
      expect(c.settlement.profitShareFromPlatform).toBe(new Decimal(n('earned')).plus(n('tax')).toNumber())
    }
  })

  it('the PSP by hand: collected 12.40 × 2 − 12.40 (reversal); earned 0.16 + 0.40 + 0.16 − 0.16 and tax 0.03 + 0.08 + 0.03 − 0.03', async () => {
    const gbp = (await statement(psp.apiKey, psp.organisationId)).json().currencies[0]
    expect(gbp).toMatchObject({
      currencyCode: 'GBP',
      collected: { allocations: 2, reversals: 1, total: 12.4, impact: 10, serviceFee: 2, serviceFeeTax: 0.4 },
      profitShare: { lines: 4, earned: 0.56, tax: 0.11 },
    })
  })

  it('net settlement: the collector withholds every share and pays the platform the rest', async () => {
    const [jpy] = (await statement(jpPsp.apiKey, jpPsp.organisationId)).json().currencies
    expect(jpy).toMatchObject({
      currencyCode: 'JPY',
      collected: { total: 1220, impact: 1000, serviceFee: 200, serviceFeeTax: 20 },
      profitShare: { lines: 1, earned: 16, tax: 2 },
      settlement: { payableToPlatform: 1180, profitShareWithheld: 40, profitShareFromCollector: 18, profitShareFromPlatform: 0 },
    })
  })

  it('as CSV with Accept: text/csv, one row per currency', async () => {
    const res = await statement(merchant.apiKey, merchant.organisationId, '2026-11', 'text/csv')
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8')
    const [header, ...rows] = res.body.trimEnd().split('\r\n')
    expect(header).toMatch(/^organisationId,period,complete,settlementModel,currencyCode,/)
    expect(rows.map((r) => r.split(',')[4])).toEqual(['GBP', 'USD'])
  })

  it.each([
    ['a month that has not begun', () => statement(psp.apiKey, psp.organisationId, '2026-12'), 400, 'PERIOD_IN_FUTURE'],
    ['a malformed period', () => statement(psp.apiKey, psp.organisationId, '2026-13'), 400, 'BAD_REQUEST'],
    ["another tree's organisation", () => statement(psp.apiKey, stranger.organisationId), 403, 'FORBIDDEN'],
    ['an organisation above the key', () => statement(merchant.apiKey, psp.organisationId), 403, 'FORBIDDEN'],
  ])('%s → %i %s', async (_label, request, status, code) => {
    const res = await request()
    expect(res.statusCode).toBe(status)
    expect(res.json().code).toBe(code)
  })
})
