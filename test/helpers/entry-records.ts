// The records the migrations of allocations.entries are tested on, and every answer that reads their entries: a PSP
// and its merchant sharing profit (GBP), a JPY tree of its own settling net; credit lines, contribution lines, both, one
// partner's contribution reversed, the PSP's own allocation, and one in JPY.
import { randomUUID } from 'node:crypto'
import { expect } from 'vitest'
import { DEMO_PARTNER_IDS } from '../../src/domain/data/demo-catalogue.js'
import { client, type TestApp } from './app.js'
import { createOrg, floristQuote, importDemoCatalogue, type OrgFixture } from './factories.js'

const HOUR = 3_600_000
const WINDOW = 'dateTimeFrom=2026-11-01T00:00:00Z&dateTimeTo=2026-12-01T00:00:00Z'

interface Quote {
  credits: { amounts: { total: number } }
}

export interface EntryRecords {
  psp: OrgFixture
  merchant: OrgFixture
  jpMerchant: OrgFixture
  /** Every allocation made, in order (the JPY one last after seeding). */
  allocations: string[]
  /** Quotes and allocates for `org` (an hour apart), adding the allocation to `allocations`. */
  allocate(org: OrgFixture, body: (quote: Quote) => Record<string, unknown>, quote?: Record<string, unknown>): Promise<string>
}

export async function seedEntryRecords(t: TestApp): Promise<EntryRecords> {
  await importDemoCatalogue(t.db)
  const allocations: string[] = []
  const allocate: EntryRecords['allocate'] = async (org, body, quote = {}) => {
    const quoted = await client(t.app, org.apiKey).post('/quotes/carbon', floristQuote(org.organisationId, quote))
    expect(quoted.statusCode).toBe(201)
    const res = await client(t.app, org.apiKey).post(
      '/funds/allocations',
      { organisationId: org.organisationId, quoteId: quoted.json().quoteId, ...body(quoted.json()) },
      { 'idempotency-key': randomUUID() },
    )
    expect(res.statusCode, res.body).toBe(201)
    t.clock.advance(HOUR)
    allocations.push(res.json().fundsAllocationId)
    return res.json().fundsAllocationId
  }
  // Profit share: the PSP keeps 0.2 of the fee, its merchant 0.6 of that; a JPY tree of its own settles net.
  const psp = await createOrg(t.db, { relativeProfitShare: '0.2' })
  const merchant = await createOrg(t.db, { parentId: psp.organisationId, relativeProfitShare: '0.6' })
  const jpPsp = await createOrg(t.db, { relativeProfitShare: '0.2', countryCode: 'JPN', currencyCode: 'JPY' })
  const jpMerchant = await createOrg(t.db, {
    parentId: jpPsp.organisationId,
    relativeProfitShare: '0.6',
    countryCode: 'JPN',
    currencyCode: 'JPY',
  })
  // Three credit lines; two contribution lines; both; one partner's contribution (reversed below); the PSP's own.
  await allocate(merchant, (q) => ({ credits: { amount: q.credits.amounts.total } }))
  await allocate(merchant, () => ({ contribution: { amount: 12.4 } }))
  await allocate(merchant, (q) => ({ credits: { amount: q.credits.amounts.total }, contribution: { amount: 5 } }))
  const reversed = await allocate(merchant, () => ({ contribution: { amount: 2.5, impactPartnerIds: [DEMO_PARTNER_IDS.oceanCommons] } }))
  await allocate(psp, (q) => ({ credits: { amount: q.credits.amounts.total } }))
  expect((await client(t.app, merchant.apiKey).post(`/funds/allocations/${reversed}/reverse`)).statusCode).toBe(201)
  t.clock.advance(HOUR)
  await allocate(jpMerchant, () => ({ contribution: { amount: 1220 } }), {
    consumer: { reference: 'consumer_jp', countryCode: 'JPN' },
    merchant: { name: 'Hanaya', mcc: '5992', address: { line1: '1-1', city: 'Tokyo', postalCode: '100-0001', countryCode: 'JPN' } },
    transaction: { amount: 5000, currencyCode: 'JPY' },
  })
  return { psp, merchant, jpMerchant, allocations, allocate }
}

/**
 * Every answer that reads the records' entries, with its status and content type, on the schema as it is (the app's
 * reads are the latest schema's). `jpAllocation` is the one allocation read with the JPY tree's key.
 */
export async function answersReadingEntries(t: TestApp, records: EntryRecords, jpAllocation: string): Promise<string[]> {
  const { psp, merchant, jpMerchant } = records
  const get = (key: string, path: string, accept?: string) =>
    client(t.app, key)
      .get(path, accept ? { accept } : {})
      .then((r) => `${path} ${accept ?? ''} ${r.statusCode} ${r.headers['content-type']} ${r.body}`)
  const keys = [psp.apiKey, jpMerchant.apiKey]
  return Promise.all([
    ...records.allocations.flatMap((id) => {
      const key = id === jpAllocation ? jpMerchant.apiKey : psp.apiKey
      return [`/funds/allocations/${id}`, `/v3/funds/allocations/${id}/impact`, `/v3/funds/allocations/${id}/profit-share`].map((path) =>
        get(key, path),
      )
    }),
    ...keys.flatMap((key) => [
      get(key, `/v3/funds/allocations/impact?${WINDOW}&limit=100`),
      get(key, `/v3/funds/allocations/impact/export?${WINDOW}`),
      get(key, `/v3/funds/allocations/profit-share?${WINDOW}&limit=100`),
      get(key, `/v3/funds/allocations/profit-share/export?${WINDOW}`),
      ...['day', 'impactPartner', 'project', 'organisation', 'currency'].map((groupBy) =>
        get(key, `/v3/funds/allocations/summary?${WINDOW}&groupBy=${groupBy}`),
      ),
    ]),
    // A partner's records: read through its partner rows, and with a consumer reference through the lines themselves.
    ...[DEMO_PARTNER_IDS.oceanCommons, DEMO_PARTNER_IDS.verdantRemovals].flatMap((partner) => [
      get(psp.apiKey, `/v3/funds/allocations/impact?${WINDOW}&impactPartnerId=${partner}`),
      get(psp.apiKey, `/v3/funds/allocations/impact?${WINDOW}&impactPartnerId=${partner}&consumerReference=consumer_123`),
    ]),
    ...[psp, merchant].flatMap((org) =>
      [undefined, 'text/csv'].map((accept) =>
        get(psp.apiKey, `/v3/statements?organisationId=${org.organisationId}&period=2026-11`, accept),
      ),
    ),
    get(jpMerchant.apiKey, `/v3/statements?organisationId=${jpMerchant.organisationId}&period=2026-11`),
  ])
}
