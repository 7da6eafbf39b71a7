import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { findQuoteById } from '../../src/db/repositories/quotes.js'
import { DEMO_PARTNER_IDS } from '../../src/domain/data/demo-catalogue.js'
import { sdkDisclosure } from '../../src/http/presenters/sessions.js'
import { FLORIST_EXAMPLE } from '../../src/http/schemas/quotes.js'
import { createApiKey, sha256 } from '../../src/services/api-keys.js'
import { client, createTestApp, type Response, type TestApp } from '../helpers/app.js'
import { createOrg, floristQuote, importDemoCatalogue, type OrgFixture } from '../helpers/factories.js'

let t: TestApp
let merchant: OrgFixture
let bank: OrgFixture
let child: OrgFixture
let stranger: OrgFixture

beforeAll(async () => {
  // Every log line is captured (trace level) so that the test at the end can look for secrets in them.
  t = await createTestApp({ LOG_LEVEL: 'trace' }, { captureLogs: true })
  await importDemoCatalogue(t.db)
  merchant = await createOrg(t.db, { mcc: '5992' })
  bank = await createOrg(t.db, { mcc: null, tradingName: 'Acme Bank' })
  child = await createOrg(t.db, { mcc: null, parentId: bank.organisationId })
  stranger = await createOrg(t.db)
})
afterAll(() => t.close())

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const TTL_MS = 1800 * 1000

/** The florist request of the real service's session documentation, without the quote-only fields. */
const postPurchaseBody = (organisationId: string, extra: Record<string, unknown> = {}) => {
  const { locale: _locale, ...quote } = floristQuote(organisationId)
  return { ...quote, sdkVariant: 'embedded', ...extra }
}
const checkoutBody = (organisationId: string, extra: Record<string, unknown> = {}) => {
  const { sdkVariant: _variant, ...body } = postPurchaseBody(organisationId)
  return { ...body, ...extra }
}

interface Created {
  sessionId: string
  clientSecret: string
  quoteId: string
  expiresAt: string
}

const post = (key: string, path: string, body: unknown) => client(t.app, key).post(path, body)

async function createSession(
  path = '/v3/post-purchase/sessions',
  body: unknown = postPurchaseBody(merchant.organisationId),
  key = merchant.apiKey,
): Promise<Created> {
  const res = await post(key, path, body)
  expect(res.statusCode, res.body).toBe(200)
  return res.json()
}

const read = (credential: string | undefined, id: string, query = '', kind = 'post-purchase') =>
  client(t.app, credential).get(`/v3/${kind}/sessions/${id}${query}`)

const UNAUTHORIZED = { error: 'invalid or missing client secret or api key', code: 'UNAUTHORIZED', requestId: expect.any(String) }
const expectUnauthorized = (res: Response) => {
  expect(res.statusCode).toBe(401)
  expect(res.json()).toEqual(UNAUTHORIZED)
}

describe('POST /v3/post-purchase/sessions', () => {
  it('answers 200 with the session id, a one-time client secret, the quote id and the expiry (now + SESSION_TTL)', async () => {
    const res = await post(merchant.apiKey, '/v3/post-purchase/sessions', postPurchaseBody(merchant.organisationId))
    expect(res.statusCode).toBe(200)
    expect(res.headers['cache-control']).toBe('no-store')
    const body = res.json()
    expect(Object.keys(body).sort()).toEqual(['clientSecret', 'expiresAt', 'quoteId', 'sessionId'])
    expect(body.sessionId).toMatch(UUID)
    expect(body.quoteId).toMatch(UUID)
    expect(body.clientSecret).toMatch(/^cs_live_[0-9A-Za-z]{24}_secret_[0-9A-Za-z]{24}$/)
    expect(body.expiresAt).toBe(new Date(t.clock.now().getTime() + TTL_MS).toISOString())
    expect(body.expiresAt).toBe('2026-11-21T10:30:00.000Z')
  })

  it('is also served without the /v3 prefix', async () => {
    const res = await post(merchant.apiKey, '/post-purchase/sessions', postPurchaseBody(merchant.organisationId))
    expect(res.statusCode).toBe(200)
  })

  it('stores the session and its quote with the defaults made explicit (carbon, en-GB, no location filter)', async () => {
    const created = await createSession()
    const session = await t.db.selectFrom('sessions').selectAll().where('id', '=', created.sessionId).executeTakeFirstOrThrow()
    expect(session).toMatchObject({
      organisation_id: merchant.organisationId,
      quote_id: created.quoteId,
      kind: 'post-purchase',
      sdk_variant: 'embedded',
      impact_type: 'carbon',
      created_at: t.clock.now(),
      expires_at: new Date(created.expiresAt),
    })
    const quote = await t.db.selectFrom('quotes').selectAll().where('id', '=', created.quoteId).executeTakeFirstOrThrow()
    expect(quote).toMatchObject({ organisation_id: merchant.organisationId, impact_type: 'carbon', currency_code: 'GBP' })
    expect((await findQuoteById(t.db, created.quoteId))?.request).toEqual({
      organisationId: merchant.organisationId,
      locale: 'en-GB',
      consumer: { reference: 'consumer_123', countryCode: 'GBR' },
      merchant: postPurchaseBody(merchant.organisationId).merchant,
      transaction: { amount: 47.97, currencyCode: 'GBP' },
      orderItems: null,
      matchConsumerLocation: false,
      responseOptions: { includeImpactPartnerDetails: false, includeImpactPartnerRates: false },
      origin: 'post-purchase-session',
    })
    expect((await findQuoteById(t.db, created.quoteId))?.locked.credits?.consumerLocationMatchAccuracy).toBe('global')
  })

  it('stores order items for reporting and accepts the takeover variant', async () => {
    const orderItems = FLORIST_EXAMPLE.orderItems
    const created = await createSession(
      '/v3/post-purchase/sessions',
      postPurchaseBody(merchant.organisationId, { sdkVariant: 'takeover', orderItems }),
    )
    const quote = await t.db.selectFrom('quotes').select('request').where('id', '=', created.quoteId).executeTakeFirstOrThrow()
    expect(quote.request.orderItems).toEqual(orderItems)
    expect((await read(created.clientSecret, created.sessionId)).json().sdkVariant).toBe('takeover')
  })

  it('makes a cs_test_ secret for a test-mode key', async () => {
    const key = await createApiKey(t.db, merchant.organisationId, 'test', t.clock.now())
    const created = await createSession('/v3/post-purchase/sessions', postPurchaseBody(merchant.organisationId), key.apiKey)
    expect(created.clientSecret).toMatch(/^cs_test_[0-9A-Za-z]{24}_secret_[0-9A-Za-z]{24}$/)
  })

  it('gives every session its own id, quote and secret', async () => {
    const [a, b] = await Promise.all([createSession(), createSession()])
    expect(a?.sessionId).not.toBe(b?.sessionId)
    expect(a?.quoteId).not.toBe(b?.quoteId)
    expect(a?.clientSecret).not.toBe(b?.clientSecret)
  })

  it.each([
    ['a missing sdkVariant', { sdkVariant: undefined }, 'BAD_REQUEST', '/sdkVariant'],
    ['an unknown sdkVariant', { sdkVariant: 'popup' }, 'BAD_REQUEST', '/sdkVariant'],
    ['a null sdkVariant', { sdkVariant: null }, 'BAD_REQUEST', '/sdkVariant'],
    ['an upper-case sdkVariant', { sdkVariant: 'EMBEDDED' }, 'BAD_REQUEST', '/sdkVariant'],
    ['an unknown impactType', { impactType: 'ocean' }, 'BAD_REQUEST', '/impactType'],
    [
      "the quote request's nested location filter",
      { projectFilters: { credits: { matchConsumerLocation: true } } },
      'BAD_REQUEST',
      '/projectFilters/credits',
    ],
    [
      'a non-boolean location filter',
      { projectFilters: { matchConsumerLocation: 'yes' } },
      'BAD_REQUEST',
      '/projectFilters/matchConsumerLocation',
    ],
    [
      'responseOptions (not part of a session request)',
      { responseOptions: { includeImpactPartnerDetails: true } },
      'BAD_REQUEST',
      '/responseOptions',
    ],
    ['an unknown property', { clientReference: 'x' }, 'BAD_REQUEST', '/clientReference'],
    ['an empty locale', { locale: '' }, 'BAD_REQUEST', '/locale'],
    ['a missing consumer', { consumer: undefined }, 'BAD_REQUEST', '/consumer'],
    ['a missing transaction', { transaction: undefined }, 'BAD_REQUEST', '/transaction'],
    ['an unknown consumer country', { consumer: { reference: 'c', countryCode: 'XXX' } }, 'UNKNOWN_COUNTRY', '/consumer/countryCode'],
    ['too many decimals for GBP', { transaction: { amount: 47.975, currencyCode: 'GBP' } }, 'AMOUNT_PRECISION', '/transaction/amount'],
    ['an unpriceable currency', { transaction: { amount: 10, currencyCode: 'BRL' } }, 'UNSUPPORTED_CURRENCY', '/transaction/currencyCode'],
    ['an unknown order item field', { orderItems: [{ sku: 'A', colour: 'red' }] }, 'BAD_REQUEST', '/orderItems/0/colour'],
    [
      'an order item price with too many decimals',
      { orderItems: [{ sku: 'A', unitPrice: { value: 15.999, currencyCode: 'GBP' } }] },
      'AMOUNT_PRECISION',
      '/orderItems/0/unitPrice/value',
    ],
    ['a non-uuid organisation', { organisationId: 'acme' }, 'BAD_REQUEST', '/organisationId'],
  ])('answers 400 for %s', async (_label, extra, code, path) => {
    const before = await countRows()
    const res = await post(merchant.apiKey, '/v3/post-purchase/sessions', postPurchaseBody(merchant.organisationId, extra))
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ code, requestId: expect.any(String) })
    expect(res.json().details.map((d: { path: string }) => d.path)).toContain(path)
    expect(await countRows()).toEqual(before)
  })

  it('names the sdkVariant problem plainly', async () => {
    const missing = await post(
      merchant.apiKey,
      '/v3/post-purchase/sessions',
      postPurchaseBody(merchant.organisationId, { sdkVariant: undefined }),
    )
    expect(missing.json()).toMatchObject({ error: 'sdkVariant is required', details: [{ path: '/sdkVariant', message: 'is required' }] })
    const unknown = await post(
      merchant.apiKey,
      '/v3/post-purchase/sessions',
      postPurchaseBody(merchant.organisationId, { sdkVariant: 'popup' }),
    )
    expect(unknown.json().details).toEqual([{ path: '/sdkVariant', message: 'must be equal to one of the allowed values' }])
  })

  it('needs merchant only when the organisation has no MCC', async () => {
    const res = await post(bank.apiKey, '/v3/post-purchase/sessions', postPurchaseBody(bank.organisationId, { merchant: undefined }))
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ code: 'MCC_REQUIRED', details: [{ path: '/merchant' }] })
    expect(
      (await post(merchant.apiKey, '/v3/post-purchase/sessions', postPurchaseBody(merchant.organisationId, { merchant: undefined })))
        .statusCode,
    ).toBe(200)
    expect(
      (await post(merchant.apiKey, '/v3/post-purchase/sessions', postPurchaseBody(merchant.organisationId, { merchant: null }))).statusCode,
    ).toBe(200)
  })

  it("acts for a child organisation with the parent's key; refuses organisations outside the tree (403)", async () => {
    const created = await createSession('/v3/post-purchase/sessions', postPurchaseBody(child.organisationId), bank.apiKey)
    const row = await t.db.selectFrom('sessions').select('organisation_id').where('id', '=', created.sessionId).executeTakeFirstOrThrow()
    expect(row.organisation_id).toBe(child.organisationId)
    const res = await post(merchant.apiKey, '/v3/post-purchase/sessions', postPurchaseBody(stranger.organisationId))
    expect(res.statusCode).toBe(403)
    expect(res.json().code).toBe('FORBIDDEN')
  })

  it('needs an API key: no key, a bad key or a client secret → 401', async () => {
    const { clientSecret, quoteId } = await createSession()
    expect((await client(t.app, clientSecret).get(`/quotes/${quoteId}`)).statusCode).toBe(401)
    for (const credential of [undefined, 'ck_live_0000000000000000000000000000000000000000', clientSecret]) {
      const res = await client(t.app, credential).post('/v3/post-purchase/sessions', postPurchaseBody(merchant.organisationId))
      expect(res.statusCode).toBe(401)
      expect(res.json().code).toBe('UNAUTHORIZED')
    }
  })
})

async function countRows(): Promise<{ quotes: number; sessions: number }> {
  const count = async (table: 'quotes' | 'sessions') =>
    Number(
      (
        await t.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    )
  return { quotes: await count('quotes'), sessions: await count('sessions') }
}

describe('concurrent quotes and sessions', () => {
  it('are stored together (one coalesced statement) and each session opens with its own secret only', async () => {
    const before = await countRows()
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        i % 3 === 0
          ? post(merchant.apiKey, '/quotes/carbon', floristQuote(merchant.organisationId))
          : post(
              merchant.apiKey,
              i % 3 === 1 ? '/v3/post-purchase/sessions' : '/v3/checkout/sessions',
              i % 3 === 1 ? postPurchaseBody(merchant.organisationId) : checkoutBody(merchant.organisationId),
            ),
      ),
    )
    expect(results.map((r) => r.statusCode)).toEqual(Array.from({ length: 12 }, (_, i) => (i % 3 === 0 ? 201 : 200)))
    expect(await countRows()).toEqual({ quotes: before.quotes + 12, sessions: before.sessions + 8 })
    const sessions = results.filter((_, i) => i % 3 !== 0).map((r) => r.json() as Created)
    for (const [i, created] of sessions.entries()) {
      const kind = i % 2 === 0 ? 'post-purchase' : 'checkout'
      const res = await read(created.clientSecret, created.sessionId, '', kind)
      expect(res.statusCode).toBe(200)
      expect(res.json().quoteId).toBe(created.quoteId)
      const other = sessions[(i + 1) % sessions.length] as Created
      expect((await read(other.clientSecret, created.sessionId, '', kind)).statusCode).toBe(401)
    }
  })
})

describe('POST /v3/checkout/sessions', () => {
  it('answers 200 with the same shape, for a pre-purchase flow (no sdkVariant, optional locale)', async () => {
    const res = await post(merchant.apiKey, '/v3/checkout/sessions', checkoutBody(merchant.organisationId, { locale: 'en-US' }))
    expect(res.statusCode).toBe(200)
    expect(res.headers['cache-control']).toBe('no-store')
    const created = res.json()
    expect(Object.keys(created).sort()).toEqual(['clientSecret', 'expiresAt', 'quoteId', 'sessionId'])
    expect(created.clientSecret).toMatch(/^cs_live_[0-9A-Za-z]{24}_secret_[0-9A-Za-z]{24}$/)
    expect(created.expiresAt).toBe(new Date(t.clock.now().getTime() + TTL_MS).toISOString())
    const session = await t.db.selectFrom('sessions').selectAll().where('id', '=', created.sessionId).executeTakeFirstOrThrow()
    expect(session).toMatchObject({ kind: 'checkout', sdk_variant: null, impact_type: 'carbon', quote_id: created.quoteId })
    const quote = await t.db.selectFrom('quotes').select('request').where('id', '=', created.quoteId).executeTakeFirstOrThrow()
    expect(quote.request).toMatchObject({ origin: 'checkout-session', locale: 'en-US' })

    const sdk = await read(created.clientSecret, created.sessionId, '', 'checkout')
    expect(sdk.statusCode).toBe(200)
    expect(sdk.json()).toMatchObject({ sessionId: created.sessionId, kind: 'checkout', sdkVariant: null, locale: 'en-US' })
    expect(sdk.json().footprint.equivalents[0].description).toMatch(/gas-powered car/)
  })

  it('is also served without the /v3 prefix', async () => {
    expect((await post(merchant.apiKey, '/checkout/sessions', checkoutBody(merchant.organisationId))).statusCode).toBe(200)
  })

  it('refuses sdkVariant (a post-purchase field) and other unknown properties', async () => {
    const res = await post(merchant.apiKey, '/v3/checkout/sessions', checkoutBody(merchant.organisationId, { sdkVariant: 'embedded' }))
    expect(res.statusCode).toBe(400)
    expect(res.json().details).toContainEqual({ path: '/sdkVariant', message: 'is not a known property' })
  })

  it('keeps the kinds apart: a checkout session is not found at the post-purchase path, and vice versa', async () => {
    const checkout = await createSession('/v3/checkout/sessions', checkoutBody(merchant.organisationId))
    const postPurchase = await createSession()
    for (const [credential, id, kind] of [
      [checkout.clientSecret, checkout.sessionId, 'post-purchase'],
      [postPurchase.clientSecret, postPurchase.sessionId, 'checkout'],
    ] as const) {
      const res = await read(credential, id, '', kind)
      expect(res.statusCode).toBe(404)
      expect(res.json()).toMatchObject({ code: 'NOT_FOUND', error: 'session not found' })
    }
  })
})

describe('nature sessions', () => {
  it('are backed by a nature quote: area footprint, contribution rates and partners, no credits', async () => {
    const created = await createSession('/v3/post-purchase/sessions', postPurchaseBody(merchant.organisationId, { impactType: 'nature' }))
    const row = await t.db.selectFrom('sessions').select('impact_type').where('id', '=', created.sessionId).executeTakeFirstOrThrow()
    expect(row.impact_type).toBe('nature')
    const sdk = (await read(created.clientSecret, created.sessionId)).json()
    expect(Object.keys(sdk)).toEqual([
      'sessionId',
      'kind',
      'sdkVariant',
      'impactType',
      'expiresAt',
      'quoteId',
      'currencyCode',
      'locale',
      'disclosure',
      'footprint',
      'contribution',
    ])
    expect(sdk.impactType).toBe('nature')
    const quote = (await client(t.app, merchant.apiKey).get(`/quotes/${created.quoteId}`)).json()
    expect('credits' in quote).toBe(false)
    expect(sdk.footprint).toEqual(quote.footprint)
    expect(Object.keys(sdk.footprint).sort()).toEqual(['areaSquareFeet', 'areaSquareMetres', 'equivalents'])
    expect(sdk.footprint.equivalents.map((e: { key: string }) => e.key)).toEqual(['parkingSpace', 'tennisCourt'])
    expect(sdk.contribution.effectiveRates).toEqual(quote.contribution.effectiveRates)
    expect(sdk.contribution.impactPartners.map((p: { id: string }) => p.id)).toEqual([
      DEMO_PARTNER_IDS.rewildTrust,
      DEMO_PARTNER_IDS.oceanCommons,
    ])
    expect((await client(t.app, merchant.apiKey).get(`/quotes/${created.quoteId}/projects`)).json()).toEqual([])
  })

  it('work for checkout too', async () => {
    const created = await createSession('/v3/checkout/sessions', checkoutBody(merchant.organisationId, { impactType: 'nature' }))
    const sdk = (await read(created.clientSecret, created.sessionId, '', 'checkout')).json()
    expect(sdk).toMatchObject({ kind: 'checkout', impactType: 'nature' })
    expect(sdk.footprint.areaSquareMetres).toBeGreaterThan(0)
  })
})

describe('projectFilters.matchConsumerLocation', () => {
  it("prices projects in the consumer's state when true, globally when false or absent", async () => {
    const consumer = { reference: 'c-us', countryCode: 'USA', state: 'CA' }
    const transaction = { amount: 100, currencyCode: 'USD' }
    const local = await createSession(
      '/v3/post-purchase/sessions',
      postPurchaseBody(merchant.organisationId, {
        consumer,
        transaction,
        projectFilters: { matchConsumerLocation: true },
      }),
    )
    expect((await read(local.clientSecret, local.sessionId)).json().credits.consumerLocationMatchAccuracy).toBe('state')
    const projects = (await client(t.app, merchant.apiKey).get(`/quotes/${local.quoteId}/projects`)).json()
    expect(projects.map((p: { name: string }) => p.name)).toEqual(['Family forest management, California (demo)'])
    const quote = await t.db.selectFrom('quotes').select('request').where('id', '=', local.quoteId).executeTakeFirstOrThrow()
    expect(quote.request.matchConsumerLocation).toBe(true)

    for (const projectFilters of [{ matchConsumerLocation: false }, {}, null]) {
      const global = await createSession(
        '/v3/checkout/sessions',
        checkoutBody(merchant.organisationId, { consumer, transaction, projectFilters }),
      )
      expect((await read(global.clientSecret, global.sessionId, '', 'checkout')).json().credits.consumerLocationMatchAccuracy).toBe(
        'global',
      )
    }
  })
})

describe('the quote behind a session', () => {
  it('is an ordinary quote: GET /quotes/:id and its projects answer, with the figures the SDK read shows', async () => {
    const created = await createSession()
    const quoteRes = await client(t.app, merchant.apiKey).get(`/v3/quotes/${created.quoteId}`)
    expect(quoteRes.statusCode).toBe(200)
    const quote = quoteRes.json()
    expect(quote.quoteId).toBe(created.quoteId)
    expect(quote.createdAt).toBe(t.clock.now().toISOString())
    // The florist figures of the quote tests: a session prices exactly like a quote.
    expect(quote.footprint.co2eGrams).toBe(10833.2)
    expect(quote.credits.amounts).toEqual({ total: 0.28, impact: 0.19, impactTax: 0.04, serviceFee: 0.04, serviceFeeTax: 0.01 })
    // Sessions have no responseOptions: the quote itself carries no partner details or partner rates.
    expect('impactPartners' in quote.credits).toBe(false)
    expect('partnerRates' in quote).toBe(false)

    const sdk = (await read(created.clientSecret, created.sessionId)).json()
    expect(sdk.footprint).toEqual(quote.footprint)
    const { impactPartners: creditPartners, projects: sdkProjects, ...credits } = sdk.credits
    expect(credits).toEqual(quote.credits)
    expect(creditPartners.map((p: { id: string }) => p.id)).toEqual([DEMO_PARTNER_IDS.verdantRemovals, DEMO_PARTNER_IDS.forestGuardians])
    expect(sdk.contribution.effectiveRates).toEqual(quote.contribution.effectiveRates)

    const projects = await client(t.app, merchant.apiKey).get(`/quotes/${created.quoteId}/projects`)
    expect(projects.statusCode).toBe(200)
    expect(projects.json()).toHaveLength(3)
    // The SDK read lists the same projects, in the same order, with their country names.
    expect(sdkProjects).toEqual(
      projects.json().map((p: Record<string, { countryCode: string; state: string | null }>) => ({
        id: p.id,
        impactPartnerId: p.impactPartnerId,
        name: p.name,
        shortDescription: p.shortDescription,
        location: { ...p.location, countryName: expect.any(String) },
      })),
    )
  })

  it('is stored in the same statement as the session: one new quote per session, nothing on failure', async () => {
    const before = await countRows()
    await createSession()
    expect(await countRows()).toEqual({ quotes: before.quotes + 1, sessions: before.sessions + 1 })
    const failed = await post(bank.apiKey, '/v3/post-purchase/sessions', postPurchaseBody(bank.organisationId, { merchant: undefined }))
    expect(failed.statusCode).toBe(400)
    expect(await countRows()).toEqual({ quotes: before.quotes + 1, sessions: before.sessions + 1 })
  })

  it('is hidden from other organisations like any quote (404)', async () => {
    const created = await createSession()
    expect((await client(t.app, stranger.apiKey).get(`/quotes/${created.quoteId}`)).statusCode).toBe(404)
  })
})

describe('GET /v3/post-purchase/sessions/:id (frontend SDK)', () => {
  it("returns what the SDK renders, with the session's client secret", async () => {
    const created = await createSession()
    const res = await read(created.clientSecret, created.sessionId)
    expect(res.statusCode).toBe(200)
    expect(res.headers['cache-control']).toBe('no-store')
    const sdk = res.json()
    expect(Object.keys(sdk)).toEqual([
      'sessionId',
      'kind',
      'sdkVariant',
      'impactType',
      'expiresAt',
      'quoteId',
      'currencyCode',
      'locale',
      'disclosure',
      'footprint',
      'credits',
      'contribution',
    ])
    expect(sdk).toMatchObject({
      sessionId: created.sessionId,
      kind: 'post-purchase',
      sdkVariant: 'embedded',
      impactType: 'carbon',
      expiresAt: created.expiresAt,
      quoteId: created.quoteId,
      currencyCode: 'GBP',
      locale: 'en-GB',
    })
    expect(sdk.footprint).toEqual({
      co2eGrams: 10833.2,
      co2eOunces: 382.13,
      equivalents: [
        { key: 'car', value: 28, description: "That's about the same as driving an average petrol car for 28 miles." },
        { key: 'phone', value: 874, description: "That's about the same as charging a smartphone 874 times." },
        { key: 'tree', value: 659, description: "That's about as much CO₂ as a tree seedling absorbs in 659 days." },
      ],
    })
    expect(sdk.credits).toEqual({
      amounts: { total: 0.28, impact: 0.19, impactTax: 0.04, serviceFee: 0.04, serviceFeeTax: 0.01 },
      effectiveRates: { impact: 0.6944444444, impactTax: 0.1388888889, serviceFee: 0.1388888889, serviceFeeTax: 0.0277777778 },
      unit: { description: 'tCO2e', price: 17.91 },
      consumerLocationMatchAccuracy: 'global',
      impactPartners: [
        {
          id: DEMO_PARTNER_IDS.verdantRemovals,
          name: 'Verdant Removals (demo)',
          shortDescription: 'Illustrative partner for nature-based carbon removal projects.',
          images: {
            logos: [{ path: '/demo/images/verdant-removals-logos.png', type: 'default', width: 256, height: 256 }],
            thumbnails: [{ path: '/demo/images/verdant-removals-thumbnails.png', type: 'default', width: 400, height: 300 }],
            backgrounds: [{ path: '/demo/images/verdant-removals-backgrounds.png', type: 'default', width: 1600, height: 900 }],
          },
        },
        expect.objectContaining({ id: DEMO_PARTNER_IDS.forestGuardians, name: 'Forest Guardians (demo)' }),
      ],
      projects: expect.any(Array),
    })
    expect(sdk.contribution).toEqual({
      effectiveRates: { impact: 0.8064516129, impactTax: 0, serviceFee: 0.1612903226, serviceFeeTax: 0.0322580645 },
      impactPartners: [
        expect.objectContaining({
          id: DEMO_PARTNER_IDS.rewildTrust,
          images: { logos: [expect.any(Object)], thumbnails: [expect.any(Object)] },
        }),
        expect.objectContaining({ id: DEMO_PARTNER_IDS.oceanCommons, images: { logos: [expect.any(Object)] } }),
      ],
    })
    expect((await client(t.app, created.clientSecret).get(`/post-purchase/sessions/${created.sessionId}`)).body).toBe(res.body)
  })

  it("lists the credit projects in the quote's order, with country names in the response's locale", async () => {
    const created = await createSession()
    const names = async (query: string) =>
      (await read(created.clientSecret, created.sessionId, query))
        .json()
        .credits.projects.map((p: { name: string; location: object }) => [p.name, p.location])
    expect(await names('')).toEqual([
      ['Agroforestry restoration, Rwanda (demo)', { countryCode: 'RWA', countryName: 'Rwanda', state: null }],
      ['Family forest management, California (demo)', { countryCode: 'USA', countryName: 'United States', state: 'CA' }],
      ['Mangrove restoration, Sri Lanka (demo)', { countryCode: 'LKA', countryName: 'Sri Lanka', state: null }],
    ])
    expect((await names('?locale=de-DE')).map(([, location]: [string, { countryName: string }]) => location.countryName)).toEqual([
      'Ruanda',
      'Vereinigte Staaten',
      'Sri Lanka',
    ])
    expect((await names('?locale=fr-FR'))[0][1].countryName).toBe('Rwanda')
  })

  it('states what the US disclosure needs: the collecting party (OPERATOR_LEGAL_NAME) and the payout days', async () => {
    const created = await createSession()
    expect((await read(created.clientSecret, created.sessionId)).json().disclosure).toEqual({
      collectingParty: null,
      payoutDays: { min: 30, max: 60 },
    })
    expect(sdkDisclosure('Canopy Operator Ltd', '45')).toEqual({ collectingParty: 'Canopy Operator Ltd', payoutDays: { min: 45, max: 45 } })
    expect(sdkDisclosure(undefined, '60-30')).toEqual({ collectingParty: null, payoutDays: { min: 30, max: 60 } })
  })

  it.each([
    ['de', 'de-DE', /Fahrt von 44\skm/],
    ['fr-FR', 'fr-FR', /44\skm parcourus/],
    ['en-US', 'en-US', /gas-powered car for 28 miles/],
    ['xx-XX', 'en-GB', /petrol car for 28 miles/],
  ])('re-localises the equivalents for ?locale=%s (→ %s)', async (locale, resolved, car) => {
    const created = await createSession()
    const sdk = (await read(created.clientSecret, created.sessionId, `?locale=${locale}`)).json()
    expect(sdk.locale).toBe(resolved)
    expect(sdk.footprint.equivalents.map((e: { key: string }) => e.key)).toEqual(['car', 'phone', 'tree'])
    expect(sdk.footprint.equivalents[0].description).toMatch(car)
    expect(sdk.footprint.co2eGrams).toBe(10833.2)
  })

  it('defaults to the locale the session was created with', async () => {
    const created = await createSession('/v3/post-purchase/sessions', postPurchaseBody(merchant.organisationId, { locale: 'sv-SE' }))
    const sdk = (await read(created.clientSecret, created.sessionId)).json()
    expect(sdk.locale).toBe('sv-SE')
    expect(sdk.footprint.equivalents[0].description).toMatch(/köra ungefär 44\skm/)
  })

  it.each([
    ['an empty locale', '?locale=', '/querystring/locale'],
    ['an over-long locale', `?locale=${'x'.repeat(36)}`, '/querystring/locale'],
    ['an unknown query parameter', '?colour=red', '/querystring/colour'],
  ])('answers 400 for %s', async (_label, query, path) => {
    const created = await createSession()
    const res = await read(created.clientSecret, created.sessionId, query)
    expect(res.statusCode).toBe(400)
    expect(res.json().details.map((d: { path: string }) => d.path)).toContain(path)
  })

  it('answers 400 for a non-uuid id (after authentication)', async () => {
    const created = await createSession()
    expect((await read(created.clientSecret, 'not-a-uuid')).statusCode).toBe(400)
    expectUnauthorized(await read(undefined, 'not-a-uuid'))
  })

  it('answers 401, with one body, for a missing, malformed, wrong or unknown-session secret', async () => {
    const created = await createSession()
    const forged = `cs_live_${'A'.repeat(24)}_secret_${'B'.repeat(24)}`
    const wrongHalf = created.clientSecret.replace(/_secret_.*/, `_secret_${'C'.repeat(24)}`)
    for (const credential of [undefined, 'hello', created.clientSecret.slice(0, -1), `${created.clientSecret}x`, forged, wrongHalf]) {
      expectUnauthorized(await read(credential, created.sessionId))
    }
    expectUnauthorized(await read(created.clientSecret, '6f1c2b8e-0000-4000-8000-000000000000'))
    const basic = await t.app.inject({
      url: `/v3/post-purchase/sessions/${created.sessionId}`,
      headers: { authorization: `Basic ${created.clientSecret}` },
    })
    expectUnauthorized(basic)
  })

  it("binds a secret to its own session: another session's secret → 401", async () => {
    const first = await createSession()
    const second = await createSession()
    expectUnauthorized(await read(second.clientSecret, first.sessionId))
    expectUnauthorized(await read(first.clientSecret, second.sessionId))
    expect((await read(first.clientSecret, first.sessionId)).statusCode).toBe(200)
  })

  it("also answers a merchant API key of the owning tree; other organisations' keys get 404", async () => {
    const created = await createSession('/v3/post-purchase/sessions', postPurchaseBody(child.organisationId), bank.apiKey)
    const bySecret = await read(created.clientSecret, created.sessionId)
    for (const key of [bank.apiKey, child.apiKey]) {
      const res = await read(key, created.sessionId)
      expect(res.statusCode).toBe(200)
      expect(res.body).toBe(bySecret.body)
    }
    for (const key of [stranger.apiKey, merchant.apiKey]) {
      const res = await read(key, created.sessionId)
      expect(res.statusCode).toBe(404)
      expect(res.json()).toMatchObject({ code: 'NOT_FOUND', error: 'session not found' })
    }
    expect((await read(bank.apiKey, '6f1c2b8e-0000-4000-8000-000000000000')).statusCode).toBe(404)
    expectUnauthorized(await read('ck_live_0000000000000000000000000000000000000000', created.sessionId))
  })

  it('never accepts a secret in the query string (400, with or without the header)', async () => {
    const created = await createSession()
    for (const query of [
      `?clientSecret=${created.clientSecret}`,
      `?client_secret=${created.clientSecret}`,
      `?secret=${created.clientSecret}`,
      `?token=${created.clientSecret}`,
    ]) {
      for (const credential of [undefined, created.clientSecret]) {
        const res = await read(credential, created.sessionId, query)
        expect(res.statusCode).toBe(400)
        expect(res.json()).toEqual({
          error: 'a client secret is accepted only in the authorization header, never in the query string',
          code: 'SECRET_IN_QUERY',
          details: [{ path: '/querystring', message: 'must not contain a client secret' }],
          requestId: expect.any(String),
        })
        expect(res.body).not.toContain(created.clientSecret)
      }
    }
  })
})

describe('expiry', () => {
  it('answers until just before expiresAt, then 410 SESSION_EXPIRED (checked after authentication)', async () => {
    const created = await createSession()
    const other = await createSession()
    t.clock.advance(TTL_MS - 1)
    expect((await read(created.clientSecret, created.sessionId)).statusCode).toBe(200)
    t.clock.advance(1)
    const expired = await read(created.clientSecret, created.sessionId)
    expect(expired.statusCode).toBe(410)
    expect(expired.json()).toEqual({
      error: 'session has expired; a new session must be created',
      code: 'SESSION_EXPIRED',
      requestId: expect.any(String),
    })
    expect((await read(merchant.apiKey, created.sessionId)).statusCode).toBe(410)
    // Without the right secret the caller learns nothing, not even that the session expired.
    expectUnauthorized(await read(other.clientSecret, created.sessionId))
    expectUnauthorized(await read(undefined, created.sessionId))
    // The quote behind it lives on (allocations use it); a new session works again.
    expect((await client(t.app, merchant.apiKey).get(`/quotes/${created.quoteId}`)).statusCode).toBe(200)
    const fresh = await createSession()
    expect(fresh.expiresAt).toBe(new Date(t.clock.now().getTime() + TTL_MS).toISOString())
    expect((await read(fresh.clientSecret, fresh.sessionId)).statusCode).toBe(200)
  })
})

describe('secrets at rest and in logs', () => {
  it('stores only the SHA-256 of the client secret; no column holds its text', async () => {
    const created = await createSession()
    const row = await t.db.selectFrom('sessions').select('client_secret_hash').where('id', '=', created.sessionId).executeTakeFirstOrThrow()
    expect(Buffer.from(row.client_secret_hash)).toHaveLength(32)
    expect(Buffer.from(row.client_secret_hash).equals(sha256(created.clientSecret))).toBe(true)
    const [, first, second] = /^cs_live_(\w{24})_secret_(\w{24})$/.exec(created.clientSecret) ?? []
    const { rows } = await sql<{ session: string; quote: string }>`
      SELECT s::text AS session, q::text AS quote FROM sessions s JOIN quotes q ON q.id = s.quote_id WHERE s.id = ${created.sessionId}`.execute(
      t.db,
    )
    const text = `${rows[0]?.session}${rows[0]?.quote}`
    expect(text).toContain(created.sessionId)
    for (const part of [created.clientSecret, first, second]) expect(text).not.toContain(part)
  })

  it('never writes a client secret or API key to the logs', async () => {
    const created = await createSession()
    await read(created.clientSecret, created.sessionId)
    await read(created.clientSecret, created.sessionId, `?clientSecret=${created.clientSecret}`)
    await read(`${created.clientSecret}x`, created.sessionId)
    await client(t.app, merchant.apiKey).post('/v3/post-purchase/sessions', {
      ...postPurchaseBody(merchant.organisationId),
      clientSecret: created.clientSecret,
    })
    t.app.log.info({ body: { clientSecret: created.clientSecret } }, 'redaction check')
    const all = t.logs.join('\n')
    expect(all).toContain('redaction check')
    expect(all).toContain(`/v3/post-purchase/sessions/${created.sessionId}`)
    expect(all).not.toContain(created.clientSecret)
    expect(all).not.toContain(created.clientSecret.slice(8, 32))
    expect(all).not.toContain(merchant.apiKey)
  })
})

describe('OpenAPI', () => {
  it('documents the /v3 session routes once', async () => {
    const doc = (await t.app.inject({ url: '/openapi.json' })).json()
    const paths = Object.keys(doc.paths)
    for (const path of [
      '/v3/post-purchase/sessions',
      '/v3/checkout/sessions',
      '/v3/post-purchase/sessions/{id}',
      '/v3/checkout/sessions/{id}',
    ]) {
      expect(paths).toContain(path)
    }
    expect(paths).not.toContain('/post-purchase/sessions')
    expect(doc.paths['/v3/post-purchase/sessions'].post.responses).toHaveProperty('200')
    expect(doc.paths['/v3/post-purchase/sessions/{id}'].get.responses).toHaveProperty('410')
  })
})
