import { randomUUID } from 'node:crypto'
import { Decimal } from 'decimal.js'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_PARTNER_IDS } from '../../src/domain/data/demo-catalogue.js'
import { findUnbalancedAllocations } from '../../src/db/repositories/allocations.js'
import { client, createTestApp, type TestApp } from '../helpers/app.js'
import { createOrg, floristQuote, importDemoCatalogue, type OrgFixture } from '../helpers/factories.js'

let t: TestApp
let merchant: OrgFixture
let bank: OrgFixture
let child: OrgFixture
let stranger: OrgFixture
let gbpQuote: string
let natureQuote: string

const RWANDA = '1bac135c-c299-4e11-9883-d3be61f1e0de'
const CALIFORNIA = '0b6f3e0a-5c1d-4b8e-9a57-2f4c1d9e6a11'
const SRI_LANKA = '3293bbcf-7f71-471c-bd6c-b4bb57602af1'

beforeAll(async () => {
  t = await createTestApp({}, { captureLogs: true })
  await importDemoCatalogue(t.db)
  merchant = await createOrg(t.db)
  bank = await createOrg(t.db, { mcc: null, taxLiability: 'organisation' })
  child = await createOrg(t.db, { parentId: bank.organisationId })
  stranger = await createOrg(t.db)
  gbpQuote = (await client(t.app, merchant.apiKey).post('/quotes/carbon', floristQuote(merchant.organisationId))).json().quoteId
  natureQuote = (await client(t.app, merchant.apiKey).post('/quotes/nature', floristQuote(merchant.organisationId))).json().quoteId
})
afterAll(() => t.close())

/** `idempotencyKey: null` sends no header. */
const allocate = (key: string, body: Record<string, unknown>, idempotencyKey: string | null = randomUUID()) =>
  client(t.app, key).post('/funds/allocations', body, idempotencyKey === null ? {} : { 'idempotency-key': idempotencyKey })

const entrySum = (entries: Record<string, number>[]) =>
  entries
    .reduce(
      (acc, e) =>
        acc
          .plus(String(e.impactAmount))
          .plus(String(e.impactSalesTaxAmount))
          .plus(String(e.serviceFeeAmount))
          .plus(String(e.serviceFeeSalesTaxAmount)),
      new Decimal(0),
    )
    .toString()

const rates = { impactSalesTaxRate: 0.2, serviceFeeSalesTaxRate: 0.2 }
const contributionRates = { impactSalesTaxRate: 0, serviceFeeSalesTaxRate: 0.2 }

describe('POST /funds/allocations', () => {
  it("allocates exactly the quote's credits total: the quote's amounts, split across its projects by weight", async () => {
    const quote = (await client(t.app, merchant.apiKey).get(`/quotes/${gbpQuote}`)).json()
    expect(quote.credits.amounts).toEqual({ total: 0.28, impact: 0.19, impactTax: 0.04, serviceFee: 0.04, serviceFeeTax: 0.01 })
    const res = await allocate(merchant.apiKey, { organisationId: merchant.organisationId, quoteId: gbpQuote, credits: { amount: 0.28 } })
    expect(res.statusCode).toBe(201)
    const body = res.json()
    expect(Object.keys(body)).toEqual([
      'fundsAllocationId',
      'quoteId',
      'currencyCode',
      'credits',
      'contributions',
      'taxLiability',
      'createdAt',
    ])
    expect(body).toMatchObject({
      quoteId: gbpQuote,
      currencyCode: 'GBP',
      contributions: [],
      taxLiability: 'platform',
      createdAt: t.clock.now().toISOString(),
    })
    // 19, 4, 4, 1 pence, each split three ways (ties to the first project): 7/6/6, 2/1/1, 2/1/1, 1/0/0.
    expect(body.credits).toEqual([
      {
        projectId: RWANDA,
        impactPartnerId: DEMO_PARTNER_IDS.verdantRemovals,
        impactAmount: 0.07,
        impactSalesTaxAmount: 0.02,
        serviceFeeAmount: 0.02,
        serviceFeeSalesTaxAmount: 0.01,
        ...rates,
      },
      {
        projectId: CALIFORNIA,
        impactPartnerId: DEMO_PARTNER_IDS.forestGuardians,
        impactAmount: 0.06,
        impactSalesTaxAmount: 0.01,
        serviceFeeAmount: 0.01,
        serviceFeeSalesTaxAmount: 0,
        ...rates,
      },
      {
        projectId: SRI_LANKA,
        impactPartnerId: DEMO_PARTNER_IDS.verdantRemovals,
        impactAmount: 0.06,
        impactSalesTaxAmount: 0.01,
        serviceFeeAmount: 0.01,
        serviceFeeSalesTaxAmount: 0,
        ...rates,
      },
    ])
    const totals = (field: string) =>
      body.credits.reduce((acc: Decimal, e: Record<string, number>) => acc.plus(String(e[field])), new Decimal(0)).toString()
    expect([
      totals('impactAmount'),
      totals('impactSalesTaxAmount'),
      totals('serviceFeeAmount'),
      totals('serviceFeeSalesTaxAmount'),
    ]).toEqual(['0.19', '0.04', '0.04', '0.01'])
    // Quantities follow the amount paid: 0.07 / £18.40, 0.06 / £13.25 and 0.06 / £22.08 per tonne.
    const rows = await t.db
      .selectFrom('allocation_entries')
      .selectAll()
      .where('allocation_id', '=', body.fundsAllocationId)
      .orderBy('position')
      .execute()
    expect(rows.map((r) => new Decimal(r.quantity_tonnes ?? 'NaN').toString())).toEqual(['0.003804', '0.004528', '0.002717'])
  })

  it('splits an amount different from the quote by the same locked rates, and records more credits for it', async () => {
    const res = await allocate(merchant.apiKey, { organisationId: merchant.organisationId, quoteId: gbpQuote, credits: { amount: 5 } })
    expect(res.statusCode).toBe(201)
    const { credits } = res.json()
    // 500p by [1, .2, .2, .04]: 347, 70, 69, 14; then three ways: 116/116/115, 24/23/23, 23/23/23, 5/5/4.
    expect(
      credits.map((e: Record<string, number>) => [e.impactAmount, e.impactSalesTaxAmount, e.serviceFeeAmount, e.serviceFeeSalesTaxAmount]),
    ).toEqual([
      [1.16, 0.24, 0.23, 0.05],
      [1.16, 0.23, 0.23, 0.05],
      [1.15, 0.23, 0.23, 0.04],
    ])
    expect(entrySum(credits)).toBe('5')
    const rows = await t.db
      .selectFrom('allocation_entries')
      .select('quantity_tonnes')
      .where('allocation_id', '=', res.json().fundsAllocationId)
      .orderBy('position')
      .execute()
    expect(new Decimal(rows[0]?.quantity_tonnes ?? 'NaN').toString()).toBe('0.063043') // 1.16 / 18.40
  })

  it("splits a contribution equally across the quote's contribution partners (no impact tax)", async () => {
    const res = await allocate(merchant.apiKey, { organisationId: merchant.organisationId, quoteId: gbpQuote, contribution: { amount: 1 } })
    expect(res.statusCode).toBe(201)
    // 100p by [1, 0, .2, .04] (D = 1.24): 81, 0, 16, 3; then two ways: 41/40, 0/0, 8/8, 2/1.
    expect(res.json()).toMatchObject({
      credits: [],
      contributions: [
        {
          impactPartnerId: DEMO_PARTNER_IDS.rewildTrust,
          impactAmount: 0.41,
          impactSalesTaxAmount: 0,
          serviceFeeAmount: 0.08,
          serviceFeeSalesTaxAmount: 0.02,
          ...contributionRates,
        },
        {
          impactPartnerId: DEMO_PARTNER_IDS.oceanCommons,
          impactAmount: 0.4,
          impactSalesTaxAmount: 0,
          serviceFeeAmount: 0.08,
          serviceFeeSalesTaxAmount: 0.01,
          ...contributionRates,
        },
      ],
    })
  })

  it('allocates credits and a contribution together, each summing to its own amount', async () => {
    const res = await allocate(merchant.apiKey, {
      organisationId: merchant.organisationId,
      quoteId: gbpQuote,
      currencyCode: 'GBP',
      credits: { amount: 0.28 },
      contribution: { amount: 2.5, impactPartnerIds: [DEMO_PARTNER_IDS.oceanCommons] },
    })
    expect(res.statusCode).toBe(201)
    const body = res.json()
    expect(entrySum(body.credits)).toBe('0.28')
    expect(entrySum(body.contributions)).toBe('2.5')
    expect(body.contributions.map((e: { impactPartnerId: string }) => e.impactPartnerId)).toEqual([DEMO_PARTNER_IDS.oceanCommons])
    expect(await findUnbalancedAllocations(t.db)).toEqual([])
  })

  it('prices a JPY quote in whole yen', async () => {
    const quote = (
      await client(t.app, merchant.apiKey).post(
        '/quotes/carbon',
        floristQuote(merchant.organisationId, {
          consumer: { reference: 'c', countryCode: 'JPN' },
          transaction: { amount: 12000, currencyCode: 'JPY' },
        }),
      )
    ).json()
    const res = await allocate(merchant.apiKey, {
      organisationId: merchant.organisationId,
      quoteId: quote.quoteId,
      credits: { amount: 1001 },
      contribution: { amount: 7 },
    })
    expect(res.statusCode).toBe(201)
    const body = res.json()
    expect(body.currencyCode).toBe('JPY')
    for (const entry of [...body.credits, ...body.contributions]) {
      for (const field of ['impactAmount', 'impactSalesTaxAmount', 'serviceFeeAmount', 'serviceFeeSalesTaxAmount'])
        expect(Number.isInteger(entry[field])).toBe(true)
    }
    expect(entrySum(body.credits)).toBe('1001')
    expect(entrySum(body.contributions)).toBe('7')
    const decimals = await allocate(merchant.apiKey, {
      organisationId: merchant.organisationId,
      quoteId: quote.quoteId,
      credits: { amount: 10.5 },
    })
    expect(decimals.statusCode).toBe(400)
    expect(decimals.json()).toMatchObject({ code: 'AMOUNT_PRECISION', details: [{ path: '/credits/amount' }] })
  })

  it("answers the spec's 400 for a partner that is not among the quote's contribution partners", async () => {
    for (const id of [randomUUID(), DEMO_PARTNER_IDS.verdantRemovals]) {
      const res = await allocate(merchant.apiKey, {
        organisationId: merchant.organisationId,
        quoteId: gbpQuote,
        contribution: { amount: 1, impactPartnerIds: [DEMO_PARTNER_IDS.rewildTrust, id] },
      })
      expect(res.statusCode).toBe(400)
      expect(res.json()).toEqual({
        error: 'impact partner not found in quote',
        code: 'IMPACT_PARTNER_NOT_FOUND',
        details: [{ path: '/contribution/impactPartnerIds/1', message: 'impact partner not found in quote' }],
        requestId: expect.any(String),
      })
    }
  })

  it.each([
    ['neither credits nor contribution', {}, 'CREDITS_OR_CONTRIBUTION_REQUIRED', '/credits'],
    ['null credits and contribution', { credits: null, contribution: null }, 'CREDITS_OR_CONTRIBUTION_REQUIRED', '/credits'],
    ['a zero amount', { credits: { amount: 0 } }, 'BAD_REQUEST', '/credits/amount'],
    ['a negative amount', { contribution: { amount: -1 } }, 'BAD_REQUEST', '/contribution/amount'],
    ['too many decimals', { credits: { amount: 0.281 } }, 'AMOUNT_PRECISION', '/credits/amount'],
    ['an amount above AMOUNT_MAX', { credits: { amount: 2_000_000 } }, 'BAD_REQUEST', '/credits/amount'],
    ['an amount as a string', { credits: { amount: '0.28' } }, 'BAD_REQUEST', '/credits/amount'],
    ["another currency than the quote's", { currencyCode: 'EUR', credits: { amount: 1 } }, 'CURRENCY_MISMATCH', '/currencyCode'],
    [
      'a non-uuid partner id',
      { contribution: { amount: 1, impactPartnerIds: ['tusk'] } },
      'BAD_REQUEST',
      '/contribution/impactPartnerIds/0',
    ],
    ['an unknown property', { credits: { amount: 1 }, projectIds: [RWANDA] }, 'BAD_REQUEST', '/projectIds'],
    ['a receipt without an e-mail', { contribution: { amount: 1 }, issueTaxReceipt: true }, 'CONSUMER_EMAIL_REQUIRED', '/consumerEmail'],
    [
      'a receipt without a contribution',
      { credits: { amount: 1 }, issueTaxReceipt: true, consumerEmail: 'a@example.com' },
      'TAX_RECEIPT_REQUIRES_CONTRIBUTION',
      '/issueTaxReceipt',
    ],
    [
      'an invalid e-mail',
      { contribution: { amount: 1 }, issueTaxReceipt: true, consumerEmail: 'not-an-email' },
      'BAD_REQUEST',
      '/consumerEmail',
    ],
  ])('answers 400 for %s and stores nothing', async (_label, extra, code, path) => {
    const before = await t.db
      .selectFrom('allocations')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow()
    const res = await allocate(merchant.apiKey, { organisationId: merchant.organisationId, quoteId: gbpQuote, ...extra })
    expect(res.statusCode).toBe(400)
    expect(res.json().code).toBe(code)
    expect(res.json().details.map((d: { path: string }) => d.path)).toContain(path)
    const after = await t.db
      .selectFrom('allocations')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow()
    expect(after.n).toBe(before.n)
  })

  it('refuses credits on a nature quote (400) but allocates its contribution', async () => {
    const credits = await allocate(merchant.apiKey, {
      organisationId: merchant.organisationId,
      quoteId: natureQuote,
      credits: { amount: 1 },
    })
    expect(credits.statusCode).toBe(400)
    expect(credits.json().code).toBe('NO_CREDITS_IN_QUOTE')
    const contribution = await allocate(merchant.apiKey, {
      organisationId: merchant.organisationId,
      quoteId: natureQuote,
      contribution: { amount: 3 },
    })
    expect(contribution.statusCode).toBe(201)
    expect(entrySum(contribution.json().contributions)).toBe('3')
  })

  it("keeps quotes inside the organisation tree: 404 for another organisation's quote, 403 outside the tree", async () => {
    const other = await allocate(stranger.apiKey, { organisationId: stranger.organisationId, quoteId: gbpQuote, credits: { amount: 1 } })
    expect(other.statusCode).toBe(404)
    expect(other.json()).toMatchObject({ code: 'NOT_FOUND', error: 'quote not found' })
    const unknown = await allocate(merchant.apiKey, {
      organisationId: merchant.organisationId,
      quoteId: randomUUID(),
      credits: { amount: 1 },
    })
    expect(unknown.statusCode).toBe(404)
    const outside = await allocate(stranger.apiKey, { organisationId: merchant.organisationId, quoteId: gbpQuote, credits: { amount: 1 } })
    expect(outside.statusCode).toBe(403)
  })

  it("lets a parent key allocate a child's quote, with the quote's tax liability", async () => {
    const quote = (await client(t.app, bank.apiKey).post('/quotes/carbon', floristQuote(child.organisationId))).json()
    const res = await allocate(bank.apiKey, {
      organisationId: child.organisationId,
      quoteId: quote.quoteId,
      credits: { amount: quote.credits.amounts.total },
    })
    expect(res.statusCode).toBe(201)
    expect(res.json().taxLiability).toBe('platform')
    const bankQuote = (await client(t.app, bank.apiKey).post('/quotes/carbon', floristQuote(bank.organisationId))).json()
    const bankAllocation = await allocate(bank.apiKey, {
      organisationId: bank.organisationId,
      quoteId: bankQuote.quoteId,
      credits: { amount: 1 },
    })
    expect(bankAllocation.json().taxLiability).toBe('organisation')
    // The quote belongs to the child: allocating it as the parent organisation is "not found".
    const wrongOrg = await allocate(bank.apiKey, { organisationId: bank.organisationId, quoteId: quote.quoteId, credits: { amount: 1 } })
    expect(wrongOrg.statusCode).toBe(404)
  })

  it('queues a tax receipt in the same write, and never logs the e-mail address', async () => {
    const res = await allocate(merchant.apiKey, {
      organisationId: merchant.organisationId,
      quoteId: gbpQuote,
      contribution: { amount: 10 },
      issueTaxReceipt: true,
      consumerEmail: 'donor@example.com',
    })
    expect(res.statusCode).toBe(201)
    const receipt = await t.db
      .selectFrom('tax_receipts')
      .selectAll()
      .where('allocation_id', '=', res.json().fundsAllocationId)
      .executeTakeFirstOrThrow()
    expect(receipt).toMatchObject({ status: 'pending', attempts: 0, consumer_email: 'donor@example.com' })
    expect(receipt.payload).toMatchObject({
      fundsAllocationId: res.json().fundsAllocationId,
      currencyCode: 'GBP',
      totalPaid: '10.00',
      contributions: [
        { impactPartnerName: 'Rewild Trust (demo)', impactAmount: '4.04' },
        { impactPartnerName: 'Ocean Commons (demo)', impactAmount: '4.03' },
      ],
    })
    expect(t.logs.join('\n')).not.toContain('donor@example.com')
  })
})

describe('idempotency', () => {
  const body = () => ({ organisationId: merchant.organisationId, quoteId: gbpQuote, credits: { amount: 1.5 } })

  it('replays the original 201 byte for byte for the same key and request', async () => {
    const key = randomUUID()
    const first = await allocate(merchant.apiKey, body(), key)
    t.clock.advance(60_000)
    const second = await allocate(
      merchant.apiKey,
      { credits: { amount: 1.5 }, quoteId: gbpQuote, organisationId: merchant.organisationId },
      key,
    )
    expect(first.statusCode).toBe(201)
    expect(second.statusCode).toBe(201)
    expect(second.body).toBe(first.body)
    expect(first.headers['idempotent-replayed']).toBeUndefined()
    expect(second.headers['idempotent-replayed']).toBe('true')
    const rows = await t.db.selectFrom('allocations').select('id').where('idempotency_key', '=', key).execute()
    expect(rows).toHaveLength(1)
    expect((await client(t.app, merchant.apiKey).get(`/funds/allocations/${first.json().fundsAllocationId}`)).body).toBe(first.body)
  })

  it('treats an RFC 8941 quoted key like the bare key', async () => {
    const key = randomUUID()
    const first = await allocate(merchant.apiKey, body(), key)
    const quoted = await allocate(merchant.apiKey, body(), `"${key}"`)
    expect(quoted.headers['idempotent-replayed']).toBe('true')
    expect(quoted.body).toBe(first.body)
  })

  it('answers 422 for the same key with a different request, and changes nothing', async () => {
    const key = randomUUID()
    const first = await allocate(merchant.apiKey, body(), key)
    const changed = await allocate(merchant.apiKey, { ...body(), credits: { amount: 1.51 } }, key)
    expect(changed.statusCode).toBe(422)
    expect(changed.json()).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED', details: [{ path: 'idempotency-key' }] })
    const again = await allocate(merchant.apiKey, body(), key)
    expect(again.body).toBe(first.body)
    expect(await t.db.selectFrom('allocations').select('id').where('idempotency_key', '=', key).execute()).toHaveLength(1)
  })

  it('does not remember a request rejected by validation: fix it and retry with the same key', async () => {
    const key = randomUUID()
    const bad = await allocate(merchant.apiKey, { ...body(), credits: { amount: 1.555 } }, key)
    expect(bad.statusCode).toBe(400)
    const good = await allocate(merchant.apiKey, body(), key)
    expect(good.statusCode).toBe(201)
    expect(good.headers['idempotent-replayed']).toBeUndefined()
  })

  it('scopes keys to the organisation', async () => {
    const key = randomUUID()
    const strangerQuote = (await client(t.app, stranger.apiKey).post('/quotes/carbon', floristQuote(stranger.organisationId))).json()
      .quoteId
    const mine = await allocate(merchant.apiKey, body(), key)
    const theirs = await allocate(
      stranger.apiKey,
      { organisationId: stranger.organisationId, quoteId: strangerQuote, credits: { amount: 1.5 } },
      key,
    )
    expect(mine.statusCode).toBe(201)
    expect(theirs.statusCode).toBe(201)
    expect(theirs.json().fundsAllocationId).not.toBe(mine.json().fundsAllocationId)
  })

  it.each([
    ['missing', null],
    ['empty', ''],
    ['longer than 255 characters', 'k'.repeat(256)],
    ['not printable ASCII', 'clé-été'],
  ])('answers 400 when the Idempotency-Key is %s', async (_label, key) => {
    const res = await allocate(merchant.apiKey, body(), key)
    expect(res.statusCode).toBe(400)
    expect(res.json().details.map((d: { path: string }) => d.path)).toContain('/headers/idempotency-key')
  })

  it('never creates a second allocation for 50 concurrent duplicates', async () => {
    const key = randomUUID()
    const responses = await Promise.all(Array.from({ length: 50 }, () => allocate(merchant.apiKey, body(), key)))
    const statuses = responses.map((r) => r.statusCode)
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true)
    const created = responses.filter((r) => r.statusCode === 201)
    expect(created.length).toBeGreaterThan(0)
    for (const r of created) expect(r.body).toBe(created[0]?.body)
    expect(await t.db.selectFrom('allocations').select('id').where('idempotency_key', '=', key).execute()).toHaveLength(1)
    const settled = await allocate(merchant.apiKey, body(), key)
    expect(settled.body).toBe(created[0]?.body)
  })
})

describe('GET /funds/allocations/:id and reversal', () => {
  it('reverses an allocation once: same entries, amounts negated, rates unchanged, no -0', async () => {
    const original = await allocate(merchant.apiKey, {
      organisationId: merchant.organisationId,
      quoteId: gbpQuote,
      credits: { amount: 0.28 },
      contribution: { amount: 1 },
    })
    const id = original.json().fundsAllocationId
    const res = await client(t.app, merchant.apiKey).post(`/v3/funds/allocations/${id}/reverse`)
    expect(res.statusCode).toBe(201)
    const reversal = res.json()
    expect(reversal).toMatchObject({
      fundsAllocationId: id,
      reversalId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      quoteId: gbpQuote,
      currencyCode: 'GBP',
      taxLiability: 'platform',
    })
    const negate = (e: Record<string, unknown>) =>
      Object.fromEntries(Object.entries(e).map(([k, v]) => [k, typeof v === 'number' && k.endsWith('Amount') && v !== 0 ? -v : v]))
    expect(reversal.credits).toEqual(original.json().credits.map(negate))
    expect(reversal.contributions).toEqual(original.json().contributions.map(negate))
    expect(res.body).not.toContain('-0,')
    expect(res.body).not.toMatch(/:-0[,}]/)
    expect(entrySum(reversal.credits)).toBe('-0.28')
    expect(entrySum(reversal.contributions)).toBe('-1')

    const again = await client(t.app, merchant.apiKey).post(`/funds/allocations/${id}/reverse`)
    expect(again.statusCode).toBe(409)
    expect(again.json().code).toBe('ALREADY_REVERSED')
    expect((await client(t.app, merchant.apiKey).get(`/funds/allocations/${id}`)).body).toBe(original.body)
  })

  it("hides other organisations' allocations (404)", async () => {
    const id = (
      await allocate(merchant.apiKey, { organisationId: merchant.organisationId, quoteId: gbpQuote, credits: { amount: 1 } })
    ).json().fundsAllocationId
    expect((await client(t.app, stranger.apiKey).get(`/funds/allocations/${id}`)).statusCode).toBe(404)
    expect((await client(t.app, stranger.apiKey).post(`/funds/allocations/${id}/reverse`)).statusCode).toBe(404)
    expect((await client(t.app, merchant.apiKey).get(`/funds/allocations/${randomUUID()}`)).statusCode).toBe(404)
  })

  it('keeps every allocation balanced to the minor unit', async () => {
    // Its own data: awkward amounts (odd pence, 3-way splits, partner subsets) on both sections.
    const created: string[] = []
    for (const [credits, contribution, impactPartnerIds] of [
      [0.01, 0.01, undefined],
      [0.28, 1.0, undefined],
      [9.99, 0.07, [DEMO_PARTNER_IDS.oceanCommons]],
      [123.45, 77.77, undefined],
      [0.02, 33.33, [DEMO_PARTNER_IDS.rewildTrust, DEMO_PARTNER_IDS.oceanCommons]],
    ] as const) {
      const res = await allocate(merchant.apiKey, {
        organisationId: merchant.organisationId,
        quoteId: gbpQuote,
        credits: { amount: credits },
        contribution: { amount: contribution, ...(impactPartnerIds ? { impactPartnerIds } : {}) },
      })
      expect(res.statusCode).toBe(201)
      const body = res.json()
      expect(entrySum(body.credits)).toBe(new Decimal(String(credits)).toString())
      expect(entrySum(body.contributions)).toBe(new Decimal(String(contribution)).toString())
      created.push(body.fundsAllocationId)
    }
    const stored = await t.db.selectFrom('allocations').select('id').where('id', 'in', created).execute()
    expect(stored).toHaveLength(created.length)
    expect(await findUnbalancedAllocations(t.db)).toEqual([])
  })
})

describe('quotes from sessions', () => {
  it('allocates against the quote behind a post-purchase or checkout session', async () => {
    for (const [path, extra] of [
      ['/v3/post-purchase/sessions', { sdkVariant: 'embedded' }],
      ['/v3/checkout/sessions', {}],
    ] as const) {
      const { merchant: m, locale: _l, ...base } = floristQuote(merchant.organisationId)
      const session = await client(t.app, merchant.apiKey).post(path, { ...base, merchant: m, ...extra })
      expect(session.statusCode).toBe(200)
      const { quoteId } = session.json()
      const quote = (await client(t.app, merchant.apiKey).get(`/quotes/${quoteId}`)).json()
      const res = await allocate(merchant.apiKey, {
        organisationId: merchant.organisationId,
        quoteId,
        credits: { amount: quote.credits.amounts.total },
        contribution: { amount: 2 },
      })
      expect(res.statusCode).toBe(201)
      expect(entrySum(res.json().credits)).toBe(String(quote.credits.amounts.total))
    }
  })
})

describe('the database guards the money invariant itself', () => {
  it('refuses an allocation whose entries do not sum to the amount paid, or are not of the stored shape (CHECK constraint)', async () => {
    // A line as stored (src/db/database.ts, StoredAllocationEntry): [kind, partner, project, tonnes, impact, its tax rate,
    // its tax, service fee, its tax rate, its tax].
    const entry = (impactAmount: string) => [
      'cr',
      DEMO_PARTNER_IDS.verdantRemovals,
      RWANDA,
      '0.000000',
      impactAmount,
      '0',
      '0.00',
      '0.00',
      '0',
      '0.00',
    ]
    const insert = (entries: unknown[]) =>
      sql`
      INSERT INTO allocations (id, organisation_id, quote_id, idempotency_key, request_hash, currency_code, credits_amount,
        contribution_amount, tax_liability, issue_tax_receipt, entries, created_at, root_organisation_id, collection_organisation_id)
      VALUES (${randomUUID()}, ${merchant.organisationId}, ${gbpQuote}, ${randomUUID()}, ${Buffer.alloc(32)}, 'GBP', 1.00,
        NULL, 'platform', false, ${JSON.stringify(entries)}::jsonb, now(), ${merchant.organisationId}, ${merchant.organisationId})`.execute(
        t.db,
      )
    const refused = { message: expect.stringMatching(/allocations_entries_balance/) }
    await expect(insert([entry('0.99')])).rejects.toMatchObject(refused)
    // Balanced, but not a line of ten with a known kind: its positions would be misread.
    await expect(insert([[...entry('1.00'), '0']])).rejects.toMatchObject(refused)
    await expect(insert([['credit', ...entry('1.00').slice(1)]])).rejects.toMatchObject(refused)
    // The shape before migrations/2026_11_27_002400_compact_entries.ts: balanced, refused.
    const object = {
      kind: 'credit',
      projectId: RWANDA,
      impactPartnerId: DEMO_PARTNER_IDS.verdantRemovals,
      impactAmount: '1.00',
      impactSalesTaxAmount: '0.00',
      impactSalesTaxRate: '0',
      serviceFeeAmount: '0.00',
      serviceFeeSalesTaxAmount: '0.00',
      serviceFeeSalesTaxRate: '0',
      quantityTonnes: '0.000000',
    }
    await expect(insert([object])).rejects.toMatchObject(refused)
    await expect(insert([entry('1.00')])).resolves.toBeDefined()
  })
})
