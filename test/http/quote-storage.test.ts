// How a quote is stored (src/db/repositories/quotes.ts): the compact row and its snapshot give back exactly the quote
// that was priced; rows written in the shape before compact quotes still answer every reader byte for byte; and the
// row of a typical quote stays small (docs/write-costs.md, "A quote").
import { createHash, randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LegacyLockedQuote, QuoteSnapshotBody } from '../../src/db/database.js'
import { findQuoteById, quoteFromRow, quoteToRow, snapshotOf, type Quote } from '../../src/db/repositories/quotes.js'
import { planQuote, priceQuote } from '../../src/domain/pricing.js'
import type { ImpactType, LockedQuote } from '../../src/domain/types.js'
import { presentQuote } from '../../src/http/presenters/quotes.js'
import { FLORIST_EXAMPLE } from '../../src/http/schemas/quotes.js'
import { client, createTestApp, type TestApp } from '../helpers/app.js'
import { createOrg, floristQuote, importDemoCatalogue, type OrgFixture } from '../helpers/factories.js'
import { DEMO_REFERENCE as reference, quoteInput } from '../unit/domain/fixtures.js'

/**
 * The bound on a typical quote's row (pg_column_size of the whole row): 737 B measured (request 511, locked 73), 1,897 B
 * before compact quotes (request 687, locked 1,054). Growth back (a field inline again) fails it.
 */
const TYPICAL_ROW_MAX_BYTES = 800

let t: TestApp
let merchant: OrgFixture

beforeAll(async () => {
  // No quote cache: every read of a quote goes to its row and its snapshot.
  t = await createTestApp({ QUOTE_CACHE_SIZE: '0' })
  await importDemoCatalogue(t.db)
  merchant = await createOrg(t.db, { mcc: '5992' })
})
afterAll(() => t.close())

function pricedQuote(impactType: ImpactType, amount: string, currencyCode: string, locale: string, country = 'GBR'): Quote {
  const organisationId = randomUUID()
  const locked = priceQuote(
    quoteInput({
      impactType,
      amount,
      currencyCode,
      merchant: { countryCode: country },
      consumer: { countryCode: country },
      locale,
      date: '2026-11-23',
    }),
    reference,
  )
  return {
    id: randomUUID(),
    organisationId,
    impactType,
    currencyCode,
    taxLiability: 'platform',
    createdAt: new Date('2026-11-23T10:00:00.000Z'),
    request: {
      ...floristQuote(organisationId, { locale }),
      matchConsumerLocation: false,
      responseOptions: { includeImpactPartnerDetails: true, includeImpactPartnerRates: true },
      origin: 'quote',
    },
    locked,
  }
}

/** The row and snapshot of `quote` as the database gives them back (json parsed). */
function roundTrip(quote: Quote): Quote {
  const snapshot = snapshotOf(quote.locked)
  const row = quoteToRow(quote, snapshot.id)
  return quoteFromRow(
    {
      ...row,
      request: JSON.parse(row.request),
      locked: JSON.parse(row.locked),
      snapshot_id: row.snapshot_id ?? null,
      created_at: quote.createdAt,
    },
    JSON.parse(snapshot.body),
  )
}

describe('a compact quote row with its snapshot', () => {
  // Amounts from a minor unit to large ones: equivalents of "once", of 1 day, of thousands ("1,234", "1.234", "1 234").
  const cases: [ImpactType, string, string, string, string?][] = [
    ['carbon', '47.97', 'GBP', 'en-GB'],
    ['carbon', '0.01', 'GBP', 'en-GB'],
    ['carbon', '0.35', 'USD', 'en-US', 'USA'],
    ['carbon', '98765.43', 'EUR', 'de-DE', 'DEU'],
    ['carbon', '5432.1', 'EUR', 'fr-FR', 'FRA'],
    ['carbon', '20000', 'SEK', 'sv-SE', 'SWE'],
    ['carbon', '1234', 'JPY', 'en-GB', 'JPN'],
    ['carbon', '12.5', 'EUR', 'es-ES', 'ESP'],
    ['nature', '47.97', 'GBP', 'en-GB'],
    ['nature', '0.02', 'EUR', 'it-IT', 'ITA'],
    ['nature', '250000', 'EUR', 'nl-NL', 'NLD'],
  ]
  it.each(cases)('gives back the very quote (%s, %s %s, %s)', (impactType, amount, currency, locale, country) => {
    const quote = pricedQuote(impactType, amount, currency, locale, country)
    const read = roundTrip(quote)
    expect(read).toEqual(quote)
    // The wire is what the API sends: the same bytes from the stored quote as from the priced one.
    expect(JSON.stringify(presentQuote(read))).toBe(JSON.stringify(presentQuote(quote)))
    expect(JSON.stringify(read.locked.equivalents)).toBe(JSON.stringify(quote.locked.equivalents))
  })

  it('keeps the sentences it locked, whatever their numbers look like (any text around any number)', () => {
    const quote = pricedQuote('carbon', '47.97', 'GBP', 'en-GB')
    const odd: LockedQuote['equivalents'] = [
      { key: 'car', value: 1234.5, description: 'About 1,234.5 miles, say 1234.5.' },
      { key: 'phone', value: 1, description: 'Once.' },
      { key: 'tree', value: 0.25, description: '0,25' },
    ]
    const locked = { ...quote.locked, equivalents: odd }
    expect(roundTrip({ ...quote, locked }).locked.equivalents).toEqual(odd)
    // The sentences are the snapshot's: another quote saying the same sentences shares it.
    expect(snapshotOf(locked).id).toBe(snapshotOf({ ...locked, footprint: { kind: 'carbon', co2eGrams: '1', co2eOunces: '0.04' } }).id)
  })

  it('makes each snapshot from its own quote, whichever quotes of the same plan came before it', () => {
    const quote = pricedQuote('carbon', '47.97', 'GBP', 'en-GB')
    const first = snapshotOf(quote.locked)
    // The same provenance object with another contribution, or other sentences: another snapshot, not the kept one.
    const others: LockedQuote[] = [
      { ...quote.locked, contribution: { ...quote.locked.contribution, impactPartnerIds: [] } },
      { ...quote.locked, locale: 'de-DE' },
      { ...quote.locked, equivalents: quote.locked.equivalents.map((e) => ({ ...e, description: `${e.description} ` })) },
    ]
    for (const locked of others) {
      const snapshot = snapshotOf(locked)
      expect(snapshot.id).not.toBe(first.id)
      const body = JSON.parse(snapshot.body) as { shared: { contribution: unknown; locale: string; equivalents: string[][] } }
      expect(body.shared.contribution).toEqual(locked.contribution)
      expect(body.shared.locale).toBe(locked.locale)
      expect(body.shared.equivalents.every((template) => template.at(-1)?.endsWith(' '))).toBe(locked === others[2])
      expect(snapshot.id).toBe(createHash('sha256').update(snapshot.body).digest('hex'))
    }
    expect(snapshotOf(quote.locked)).toEqual(first)
  })

  it('gives back the very request, whichever of its fields are left out as defaults', () => {
    const quote = pricedQuote('carbon', '47.97', 'GBP', 'en-GB')
    const { locale: _locale, merchant: _merchant, orderItems: _orderItems, ...withoutOptional } = quote.request
    const requests: Quote['request'][] = [
      quote.request,
      { ...quote.request, merchant: null, orderItems: null },
      { ...quote.request, matchConsumerLocation: true, origin: 'checkout-session' },
      { ...quote.request, responseOptions: { includeImpactPartnerDetails: false, includeImpactPartnerRates: false } },
      { ...quote.request, responseOptions: { includeImpactPartnerDetails: false, includeImpactPartnerRates: true } },
      { ...quote.request, orderItems: [{ sku: 'POT', quantity: 1 }] },
      { ...quote.request, organisationId: randomUUID() },
      withoutOptional,
    ]
    for (const request of requests) {
      expect(roundTrip({ ...quote, request }).request).toStrictEqual(request)
    }
    // What the row says and the defaults are not stored.
    const defaults = { ...quote.request, responseOptions: { includeImpactPartnerDetails: false, includeImpactPartnerRates: false } }
    expect(Object.keys(JSON.parse(quoteToRow({ ...quote, request: defaults }, 'x').request))).toEqual([
      'locale',
      'consumer',
      'merchant',
      'transaction',
      'origin',
    ])
  })

  it('refuses a compact row whose snapshot does not hold the shared part', () => {
    const quote = pricedQuote('carbon', '47.97', 'GBP', 'en-GB')
    const row = quoteToRow(quote, 'x')
    const { shared: _shared, ...oldBody } = JSON.parse(snapshotOf(quote.locked).body) as QuoteSnapshotBody
    const parsed = { ...row, request: quote.request, locked: JSON.parse(row.locked), snapshot_id: 'x', created_at: quote.createdAt }
    expect(() => quoteFromRow(parsed, oldBody)).toThrow(/without its snapshot/)
  })
})

/**
 * Rewrites a stored quote into the shape written before compact quotes: the row's `locked` is the locked quote
 * without partners, projects and provenance, and its snapshot holds just those (as main wrote them until then).
 */
async function storeInOldShape(id: string): Promise<void> {
  const quote = await findQuoteById(t.db, id)
  if (!quote) throw new Error(`no quote ${id}`)
  const { locked } = quote
  const body = JSON.stringify({ partners: locked.partners, projects: locked.credits?.projects ?? [], provenance: locked.provenance })
  const snapshotId = createHash('sha256').update(body).digest('hex')
  const old: LegacyLockedQuote = {
    ...locked,
    partners: undefined,
    provenance: undefined,
    credits: locked.credits ? { ...locked.credits, projects: undefined } : undefined,
  } as LegacyLockedQuote
  await sql`INSERT INTO quote_snapshots (id, body) VALUES (${snapshotId}, ${body}) ON CONFLICT (id) DO NOTHING`.execute(t.db)
  await sql`UPDATE quotes SET request = ${JSON.stringify(quote.request)}::json, locked = ${JSON.stringify(old)}::json, snapshot_id = ${snapshotId}
            WHERE id = ${id}::uuid`.execute(t.db)
  const row = await t.db.selectFrom('quotes').select('locked').where('id', '=', id).executeTakeFirstOrThrow()
  expect(Array.isArray(row.locked)).toBe(false)
}

/** Every reader's answer about a quote (and the session it backs), as bytes. */
async function answersAbout(quoteId: string, session?: { id: string; clientSecret: string }) {
  const api = client(t.app, merchant.apiKey)
  const answers = {
    quote: (await api.get(`/quotes/${quoteId}`)).body,
    explain: (await api.get(`/quotes/${quoteId}/explain`)).body,
    explainText: (await api.get(`/quotes/${quoteId}/explain`, { accept: 'text/plain' })).body,
    projects: (await api.get(`/quotes/${quoteId}/projects`)).body,
    session: '',
    sessionInGerman: '',
  }
  if (session) {
    answers.session = (await client(t.app, session.clientSecret).get(`/v3/post-purchase/sessions/${session.id}`)).body
    answers.sessionInGerman = (await client(t.app, session.clientSecret).get(`/v3/post-purchase/sessions/${session.id}?locale=de-DE`)).body
  }
  return answers
}

/** An allocation's answer without what differs between two allocations of one quote. */
async function allocationAgainst(quoteId: string, body: Record<string, unknown>): Promise<unknown> {
  const res = await client(t.app, merchant.apiKey).post(
    '/funds/allocations',
    { organisationId: merchant.organisationId, quoteId, ...body },
    { 'idempotency-key': randomUUID() },
  )
  expect(res.statusCode, res.body).toBe(201)
  const { fundsAllocationId: _id, ...rest } = res.json()
  return rest
}

describe('a quote stored in the shape before compact quotes', () => {
  it.each(['carbon', 'nature'] as const)('answers every reader exactly as before (%s)', async (impactType) => {
    const { quoteId } = (await client(t.app, merchant.apiKey).post(`/quotes/${impactType}`, floristQuote(merchant.organisationId))).json()
    const before = await answersAbout(quoteId)
    const amount = impactType === 'carbon' ? { credits: { amount: 0.28 } } : { contribution: { amount: 1 } }
    const allocatedBefore = await allocationAgainst(quoteId, amount)
    await storeInOldShape(quoteId)
    expect(await answersAbout(quoteId)).toEqual(before)
    expect(await allocationAgainst(quoteId, amount)).toEqual(allocatedBefore)
  })

  it("answers a session's readers exactly as before", async () => {
    const { locale: _locale, ...body } = floristQuote(merchant.organisationId)
    const res = await client(t.app, merchant.apiKey).post('/v3/post-purchase/sessions', { ...body, sdkVariant: 'embedded' })
    expect(res.statusCode, res.body).toBe(200)
    const created = res.json()
    const session = { id: created.sessionId, clientSecret: created.clientSecret }
    const before = await answersAbout(created.quoteId, session)
    expect(before.session).toContain('"equivalents"')
    await storeInOldShape(created.quoteId)
    expect(await answersAbout(created.quoteId, session)).toEqual(before)
  })
})

describe('the row of a typical quote', () => {
  it(`is at most ${TYPICAL_ROW_MAX_BYTES} B (the bench's florist purchase)`, async () => {
    const res = await client(t.app, merchant.apiKey).post('/quotes/carbon', { ...FLORIST_EXAMPLE, organisationId: merchant.organisationId })
    expect(res.statusCode, res.body).toBe(201)
    const { quoteId } = res.json()
    // The row as GET /quotes/:id reads it back is the one POST answered from.
    expect((await client(t.app, merchant.apiKey).get(`/quotes/${quoteId}`)).body).toBe(res.body)
    const { rows } = await sql<{ size: number }>`SELECT pg_column_size(q.*) AS size FROM quotes q WHERE q.id = ${quoteId}::uuid`.execute(
      t.db,
    )
    expect(Number(rows[0]?.size)).toBeLessThanOrEqual(TYPICAL_ROW_MAX_BYTES)
  })
})

describe("a snapshot of quotes priced from one plan (kept by the plan's objects)", () => {
  const { amount: _, ...context } = quoteInput({ date: '2026-11-23' })
  const plan = planQuote(context, reference)
  const priced = (amount: string, impactType: ImpactType = 'carbon') =>
    priceQuote({ ...context, impactType, amount }, reference, impactType === 'carbon' ? () => plan : undefined)
  /** The snapshot of the same content in objects of its own: nothing kept applies to it. */
  const afresh = (locked: LockedQuote) => snapshotOf(structuredClone(locked))

  it('is the snapshot of its content, whichever quote of the plan asked first', () => {
    const amounts = ['47.97', '0.01', '3.50', '98765.43', '47.97', '1.00', '0.01']
    const quotes = amounts.map((amount) => priced(amount))
    for (const quote of quotes) {
      expect(quote.provenance).toBe(plan.provenance)
      expect(snapshotOf(quote)).toEqual(afresh(quote))
    }
    // Another sentence for the same plan (as another plural would give): another template, another snapshot.
    const first = quotes[0] as LockedQuote
    const [car, ...others] = first.equivalents
    if (!car) throw new Error('a carbon quote has equivalents')
    const other: LockedQuote = { ...first, equivalents: [{ ...car, description: `About ${car.value} mile.` }, ...others] }
    expect(snapshotOf(other)).toEqual(afresh(other))
    expect(snapshotOf(other).id).not.toBe(snapshotOf(first).id)
    expect(snapshotOf(priced('2.00', 'nature'))).toEqual(afresh(priced('2.00', 'nature')))
  })

  it('is made again when the same provenance object comes with other partners or projects', () => {
    const quote = priced('47.97')
    const kept = snapshotOf(quote)
    const otherPartners: LockedQuote = { ...quote, partners: quote.partners.slice(1) }
    expect(snapshotOf(otherPartners)).toEqual(afresh(otherPartners))
    expect(snapshotOf(otherPartners).id).not.toBe(kept.id)
    const credits = quote.credits
    if (!credits) throw new Error('a carbon quote has credits')
    const otherProjects: LockedQuote = { ...quote, credits: { ...credits, projects: credits.projects.slice(1) } }
    expect(snapshotOf(otherProjects)).toEqual(afresh(otherProjects))
    expect(snapshotOf(otherProjects).id).not.toBe(kept.id)
    // And back: the first quote's snapshot is still its own.
    expect(snapshotOf(quote)).toEqual(kept)
  })
})
