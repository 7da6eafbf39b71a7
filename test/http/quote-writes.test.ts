// The quote write path: quotes and the sessions some of them back, in one statement, against a real database.
import { createHash, randomUUID } from 'node:crypto'
import type { Kysely, QueryCreator } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Database } from '../../src/db/database.js'
import type { DatabaseHandle } from '../../src/db/connect.js'
import { insertQuotes, quoteWritesStatement, type QuoteWrite } from '../../src/db/repositories/quote-writes.js'
import { findQuoteById, quoteRows, snapshotOf, type Quote } from '../../src/db/repositories/quotes.js'
import { findSessionWithQuote, sessionToRow, type Session } from '../../src/db/repositories/sessions.js'
import { priceQuote } from '../../src/domain/pricing.js'
import { createTestDatabase, type TestDatabase } from '../helpers/db.js'
import { createOrg, floristQuote, importDemoCatalogue } from '../helpers/factories.js'
import { DEMO_REFERENCE as reference, quoteInput } from '../unit/domain/fixtures.js'

let database: TestDatabase
let handle: DatabaseHandle
let organisationId: string

beforeAll(async () => {
  database = await createTestDatabase()
  handle = await database.open()
  await importDemoCatalogue(handle.db)
  organisationId = (await createOrg(handle.db)).organisationId
})
afterAll(async () => {
  await handle.close()
  await database.drop()
})

function newQuote(amount: string): Quote {
  const request = {
    ...floristQuote(organisationId),
    matchConsumerLocation: false,
    responseOptions: { includeImpactPartnerDetails: false, includeImpactPartnerRates: false },
    origin: 'quote' as const,
  }
  const locked = priceQuote(quoteInput({ amount, date: '2026-11-23' }), reference)
  return {
    id: randomUUID(),
    organisationId,
    impactType: 'carbon',
    currencyCode: 'GBP',
    taxLiability: 'platform',
    createdAt: new Date('2026-11-23T10:00:00.000Z'),
    request,
    locked,
  }
}

const sessionFor = (quote: Quote, kind: Session['kind']): Session => ({
  id: randomUUID(),
  organisationId,
  quoteId: quote.id,
  kind,
  sdkVariant: kind === 'post-purchase' ? 'embedded' : null,
  impactType: 'carbon',
  clientSecretHash: Buffer.alloc(32, kind.length),
  expiresAt: new Date('2026-11-23T10:30:00.000Z'),
  createdAt: quote.createdAt,
})

describe('insertQuotes', () => {
  it('stores plain quotes and quotes with sessions together, with their snapshot once', async () => {
    const [plain, withPostPurchase, withCheckout] = [newQuote('47.97'), newQuote('10.00'), newQuote('99.99')] as [Quote, Quote, Quote]
    const postPurchase = sessionFor(withPostPurchase, 'post-purchase')
    const checkout = sessionFor(withCheckout, 'checkout')
    const written = await insertQuotes(
      handle.db,
      [
        { quote: plain, session: null },
        { quote: withPostPurchase, session: postPurchase },
        { quote: withCheckout, session: checkout },
      ],
      () => false,
    )
    // Same catalogue and portfolio: one snapshot for the three.
    expect(written).toEqual([snapshotOf(plain.locked).id])
    for (const quote of [plain, withPostPurchase, withCheckout]) expect(await findQuoteById(handle.db, quote.id)).toEqual(quote)
    for (const [session, quote] of [
      [postPurchase, withPostPurchase],
      [checkout, withCheckout],
    ] as const) {
      expect(await findSessionWithQuote(handle.db, session.id)).toEqual({ session, quote })
    }
  })

  it('reads quotes written before provenance moved to the snapshot (provenance inline, snapshot without it)', async () => {
    const quote = newQuote('12.34')
    const { provenance, partners, credits, ...rest } = quote.locked
    const oldBody = JSON.stringify({ partners, projects: credits?.projects ?? [] })
    const oldId = createHash('sha256').update(oldBody).digest('hex')
    await handle.db
      .insertInto('quote_snapshots')
      .values({ id: oldId, body: oldBody })
      .onConflict((oc) => oc.column('id').doNothing())
      .execute()
    await handle.db
      .insertInto('quotes')
      .values({
        id: quote.id,
        organisation_id: organisationId,
        impact_type: 'carbon',
        currency_code: 'GBP',
        tax_liability: 'platform',
        request: JSON.stringify(quote.request),
        locked: JSON.stringify({ ...rest, provenance, credits: credits && { ...credits, projects: undefined } }),
        snapshot_id: oldId,
        created_at: quote.createdAt,
      })
      .execute()
    expect(await findQuoteById(handle.db, quote.id)).toEqual(quote)
  })

  it('writes nothing of a batch whose session refers to no quote of it (one statement: all or nothing)', async () => {
    const quote = newQuote('1.00')
    const orphan = sessionFor(newQuote('2.00'), 'checkout')
    await expect(
      insertQuotes(
        handle.db,
        [
          { quote, session: null },
          { quote: newQuote('3.00'), session: orphan },
        ],
        () => true,
      ),
    ).rejects.toThrow()
    expect(await findQuoteById(handle.db, quote.id)).toBeUndefined()
  })
})

/** The statement as Kysely's builder makes it (how insertQuotes built it before its text was written by hand). */
function builtByKysely(db: Kysely<Database>, writes: readonly QuoteWrite[], isStored: (id: string) => boolean) {
  const { rows, snapshots } = quoteRows(
    writes.map((w) => w.quote),
    isStored,
  )
  const sessions = writes.flatMap((w) => (w.session ? [sessionToRow(w.session)] : []))
  const insertSnapshots = (qb: QueryCreator<Database>) =>
    qb
      .insertInto('quote_snapshots')
      .values(snapshots)
      .onConflict((oc) => oc.column('id').doNothing())
  if (sessions.length === 0 && snapshots.length === 0) return db.insertInto('quotes').values(rows).compile()
  if (sessions.length === 0) return db.with('snapshots', insertSnapshots).insertInto('quotes').values(rows).compile()
  if (snapshots.length === 0) {
    return db
      .with('quotes_written', (qb) => qb.insertInto('quotes').values(rows))
      .insertInto('sessions')
      .values(sessions)
      .compile()
  }
  return db
    .with('snapshots', insertSnapshots)
    .with('quotes_written', (qb) => qb.insertInto('quotes').values(rows))
    .insertInto('sessions')
    .values(sessions)
    .compile()
}

describe('the statement of a batch', () => {
  it("is Kysely's own, text and parameters (timestamps as text), for every shape (new snapshots or not, sessions or not, 1 to 40 quotes)", () => {
    const checkout = (quote: Quote) => sessionFor(quote, 'checkout')
    const cases: [string, QuoteWrite[], (id: string) => boolean][] = []
    for (const count of [1, 2, 7, 40]) {
      const quotes = Array.from({ length: count }, (_, i) => newQuote(`${i + 1}.${String(i % 100).padStart(2, '0')}`))
      // Other locales give other snapshots: several new ones in one batch.
      const mixed = quotes.map((quote, i) => (i % 3 === 1 ? { ...quote, locked: { ...quote.locked, locale: 'de-DE' } } : quote))
      cases.push(
        ['quotes only', quotes.map((quote) => ({ quote, session: null })), () => true],
        ['quotes and snapshots', mixed.map((quote) => ({ quote, session: null })), () => false],
        ['quotes and sessions', quotes.map((quote, i) => ({ quote, session: i % 2 === 0 ? checkout(quote) : null })), () => true],
        ['all three', mixed.map((quote) => ({ quote, session: checkout(quote) })), () => false],
      )
    }
    for (const [label, writes, isStored] of cases) {
      const expected = builtByKysely(handle.db, writes, isStored)
      const { statement } = quoteWritesStatement(writes, isStored)
      expect(statement.sql, `${label}, ${writes.length}`).toBe(expected.sql)
      // Timestamps are sent as ISO text (the same instant), where Kysely hands pg the Date.
      const asText = expected.parameters.map((value) => (value instanceof Date ? value.toISOString() : value))
      expect(statement.parameters, `${label}, ${writes.length}`).toEqual(asText)
    }
  })

  it('stores a batch of every shape', async () => {
    const quotes = Array.from({ length: 4 }, (_, i) => newQuote(`${i + 5}.00`))
    const [a, b, c, d] = quotes as [Quote, Quote, Quote, Quote]
    const session = sessionFor(c, 'post-purchase')
    await insertQuotes(handle.db, [{ quote: a, session: null }], () => true)
    await insertQuotes(handle.db, [{ quote: b, session: null }], () => false)
    await insertQuotes(handle.db, [{ quote: c, session }], () => true)
    await insertQuotes(handle.db, [{ quote: d, session: sessionFor(d, 'checkout') }], () => false)
    for (const quote of quotes) expect(await findQuoteById(handle.db, quote.id)).toEqual(quote)
    expect(await findSessionWithQuote(handle.db, session.id)).toEqual({ session, quote: c })
  })
})
