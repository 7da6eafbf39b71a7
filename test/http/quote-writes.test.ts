// The quote write path: quotes and the sessions some of them back, in one statement, against a real database.
import { createHash, randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DatabaseHandle } from '../../src/db/connect.js'
import { insertQuotes } from '../../src/db/repositories/quote-writes.js'
import { findQuoteById, snapshotOf, type Quote } from '../../src/db/repositories/quotes.js'
import { findSessionWithQuote, type Session } from '../../src/db/repositories/sessions.js'
import { DEMO_CREDIT_PROJECTS, DEMO_IMPACT_PARTNERS } from '../../src/domain/data/demo-catalogue.js'
import { DEFAULT_EMISSION_FACTORS } from '../../src/domain/data/emission-factors.js'
import { indexFactors } from '../../src/domain/footprint.js'
import { REFERENCE_FX_RATES } from '../../src/domain/fx.js'
import { priceQuote } from '../../src/domain/pricing.js'
import { createTestDatabase, type TestDatabase } from '../helpers/db.js'
import { createOrg, floristQuote, importDemoCatalogue } from '../helpers/factories.js'

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

const reference = {
  factors: indexFactors(DEFAULT_EMISSION_FACTORS),
  fx: REFERENCE_FX_RATES,
  partners: DEMO_IMPACT_PARTNERS,
  projects: DEMO_CREDIT_PROJECTS,
}

function newQuote(amount: string): Quote {
  const request = {
    ...floristQuote(organisationId),
    matchConsumerLocation: false,
    responseOptions: { includeImpactPartnerDetails: false, includeImpactPartnerRates: false },
    origin: 'quote' as const,
  }
  const locked = priceQuote(
    {
      impactType: 'carbon',
      amount,
      currencyCode: 'GBP',
      mcc: '5992',
      merchant: { countryCode: 'GBR' },
      consumer: { countryCode: 'GBR' },
      locale: 'en-GB',
      matchConsumerLocation: false,
      serviceFeeRate: '0.2',
      date: '2026-11-23',
    },
    reference,
  )
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
