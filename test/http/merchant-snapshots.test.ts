// An allocation names its quote's merchant by a row of merchant_snapshots, stored once per distinct merchant
// (migrations/2026_11_28_002700_merchant_snapshots.ts): what every read shows of the merchant is what the quote was
// sent, whether the row names a snapshot or, written before the migration, carries the merchant itself.
import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { migrateDown, migrateToLatest } from '../../src/db/migrate.js'
import { findAllocationById, findAllocationsByKeys, merchantSnapshotIdOf } from '../../src/db/repositories/allocations.js'
import type { StoredMerchant } from '../../src/db/database.js'
import { client, createTestApp, type TestApp } from '../helpers/app.js'
import { createOrg, floristQuote, importDemoCatalogue, type OrgFixture } from '../helpers/factories.js'

const MIGRATION = '2026_11_28_002700_merchant_snapshots'
/** The migrations after it, in order: undone before it on the way down. */
const LATER = [
  '2026_11_28_002800_partner_rows_organisation_once',
  '2026_11_28_002900_drop_allocations_quote_index',
  '2026_11_28_003000_organisation_index_for_children',
  '2026_11_28_003100_entries_as_strings',
  '2026_11_28_003200_partner_key_without_nulls',
  '2026_11_28_003300_organisation_root_by_steps',
]

let t: TestApp
let org: OrgFixture

beforeAll(async () => {
  t = await createTestApp({ WEBHOOK_WORKER: 'false' })
  await importDemoCatalogue(t.db)
  org = await createOrg(t.db)
})
afterAll(() => t.close())

const FLORIST = floristQuote('').merchant as StoredMerchant
const BAKERY: StoredMerchant = {
  name: 'Crumb & Co',
  mcc: '5462',
  address: { line1: '1 Bread Street', city: 'Leeds', postalCode: 'LS1 1AA', countryCode: 'GBR' },
} as StoredMerchant

/** Allocates the whole of a new quote made with `merchant` (none: the quote names no merchant); its id and key. */
async function allocateWith(merchant: StoredMerchant | null): Promise<{ id: string; key: string }> {
  const body = floristQuote(org.organisationId, merchant === null ? { merchant: undefined } : { merchant })
  const quote = await client(t.app, org.apiKey).post('/quotes/carbon', body)
  expect(quote.statusCode, quote.body).toBe(201)
  const key = randomUUID()
  const res = await client(t.app, org.apiKey).post(
    '/funds/allocations',
    { organisationId: org.organisationId, quoteId: quote.json().quoteId, credits: { amount: quote.json().credits.amounts.total } },
    { 'idempotency-key': key },
  )
  expect(res.statusCode, res.body).toBe(201)
  return { id: res.json().fundsAllocationId, key }
}

const stored = async (id: string) =>
  (
    await sql<{
      merchant: unknown
      merchant_id: string | null
    }>`SELECT merchant, merchant_id FROM allocations WHERE id = ${id}::uuid`.execute(t.db)
  ).rows[0]

const snapshotCount = async () => Number((await sql<{ n: string }>`SELECT count(*) AS n FROM merchant_snapshots`.execute(t.db)).rows[0]?.n)

/** What the API shows of an allocation's merchant: its impact record, and a replay of its request. */
const shownMerchant = async (id: string) => {
  const impact = await client(t.app, org.apiKey).get(`/funds/allocations/${id}/impact`)
  expect(impact.statusCode, impact.body).toBe(200)
  return impact.json().merchant
}

describe('merchant snapshots', () => {
  it('store a merchant once, however many allocations name it, and none for an allocation without one', async () => {
    const before = await snapshotCount()
    const first = await allocateWith(FLORIST)
    const second = await allocateWith(FLORIST)
    const bakery = await allocateWith(BAKERY)
    const none = await allocateWith(null)
    expect(await snapshotCount()).toBe(before + 2)
    expect(await stored(first.id)).toEqual({ merchant: null, merchant_id: merchantSnapshotIdOf(FLORIST) })
    expect(await stored(second.id)).toEqual({ merchant: null, merchant_id: merchantSnapshotIdOf(FLORIST) })
    expect(await stored(bakery.id)).toEqual({ merchant: null, merchant_id: merchantSnapshotIdOf(BAKERY) })
    expect(await stored(none.id)).toEqual({ merchant: null, merchant_id: null })
    expect(merchantSnapshotIdOf(BAKERY)).not.toBe(merchantSnapshotIdOf(FLORIST))
    // The id is the content's: an equal merchant built anew names the same row.
    expect(merchantSnapshotIdOf(structuredClone(FLORIST))).toBe(merchantSnapshotIdOf(FLORIST))
    const { rows } = await sql<{
      body: unknown
    }>`SELECT body FROM merchant_snapshots WHERE id = ${merchantSnapshotIdOf(BAKERY)}::uuid`.execute(t.db)
    expect(rows).toEqual([{ body: BAKERY }])
  })

  it('read back as the quote was sent: the impact record, the stored allocation and a replay', async () => {
    const { id, key } = await allocateWith(BAKERY)
    // The impact record spells out the address's absent fields as null.
    expect(await shownMerchant(id)).toEqual({ ...BAKERY, address: { ...BAKERY.address, line2: null, line3: null, state: null } })
    expect((await findAllocationById(t.db, id))?.merchant).toEqual(BAKERY)
    const none = await allocateWith(null)
    // Without one, the record shows its funds organisation as the merchant (not read from any snapshot).
    expect((await shownMerchant(none.id)).name).toBe((await shownMerchant((await allocateWith(null)).id)).name)
    expect((await findAllocationById(t.db, none.id))?.merchant).toBeNull()
    // A replay finds the allocation by its key (a read of its own) and answers the same.
    const stored = await findAllocationById(t.db, id)
    const replay = await client(t.app, org.apiKey).post(
      '/funds/allocations',
      { organisationId: org.organisationId, quoteId: stored?.quoteId, credits: { amount: Number(stored?.creditsAmount) } },
      { 'idempotency-key': key },
    )
    expect(replay.statusCode, replay.body).toBe(201)
    expect(replay.json().fundsAllocationId).toBe(id)
    const [byKey] = await findAllocationsByKeys(t.db, [{ organisationId: org.organisationId, idempotencyKey: key }])
    expect(byKey?.merchant).toEqual(BAKERY)
  })

  it('a row that carries its merchant itself (written before the migration) reads the same', async () => {
    const { id } = await allocateWith(BAKERY)
    const expected = (await client(t.app, org.apiKey).get(`/funds/allocations/${id}/impact`)).json()
    await sql`UPDATE allocations SET merchant = ${JSON.stringify(BAKERY)}::jsonb, merchant_id = NULL WHERE id = ${id}::uuid`.execute(t.db)
    expect((await client(t.app, org.apiKey).get(`/funds/allocations/${id}/impact`)).json()).toEqual(expected)
    expect((await findAllocationById(t.db, id))?.merchant).toEqual(BAKERY)
  })

  it('go back into the rows on the way down, and every record reads the same after down and up', async () => {
    const { id } = await allocateWith(FLORIST)
    const none = await allocateWith(null)
    const records = async () =>
      Promise.all([id, none.id].map(async (x) => (await client(t.app, org.apiKey).get(`/funds/allocations/${x}/impact`)).json()))
    const before = await records()
    for (const name of [...LATER].reverse()) expect(await migrateDown(t.db)).toEqual([name])
    expect(await migrateDown(t.db)).toEqual([MIGRATION])
    const { rows } = await sql<{
      id: string
      merchant: unknown
    }>`SELECT id, merchant FROM allocations WHERE id = ANY(${[id, none.id]}::uuid[])`.execute(t.db)
    expect(new Map(rows.map((r) => [r.id, r.merchant]))).toEqual(
      new Map<string, unknown>([
        [id, FLORIST],
        [none.id, null],
      ]),
    )
    expect(await migrateToLatest(t.db)).toEqual([MIGRATION, ...LATER])
    expect(await records()).toEqual(before)
    // New allocations name snapshots again.
    const after = await allocateWith(FLORIST)
    expect(await stored(after.id)).toEqual({ merchant: null, merchant_id: merchantSnapshotIdOf(FLORIST) })
  })
})
