// The migration to compact entries (migrations/2026_11_27_002400_compact_entries.ts): allocations written before it
// (credits, contributions, several lines, a reversal, profit share, two currencies) become exactly what this version
// writes, every endpoint that reads them answers byte for byte as before, and down gives back the very jsonb the
// previous version wrote, with the balance function and the view exactly as migrations/2026_11_21_000400 made them. An
// entry it cannot convert exactly is refused before anything changes.
import { randomUUID } from 'node:crypto'
import { Migrator, sql, type Kysely } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { migrations } from '../../migrations/index.js'
import type { Database, StoredAllocationEntry } from '../../src/db/database.js'
import { migrateDown, migrateToLatest, pendingMigrations } from '../../src/db/migrate.js'
import { splitOf } from '../../src/db/repositories/allocations.js'
import { DEMO_PARTNER_IDS } from '../../src/domain/data/demo-catalogue.js'
import type { AllocationSplit } from '../../src/domain/types.js'
import { resetRollups, rollUpTo, verifyRollups } from '../../src/services/summary-rollups.js'
import { client, createTestApp, type TestApp } from '../helpers/app.js'
import { createOrg, floristQuote, importDemoCatalogue, type OrgFixture } from '../helpers/factories.js'

const MIGRATION = '2026_11_27_002400_compact_entries'
/** The migrations after it: undone before these tests, which move between it and the one before it. */
const LATER = [
  '2026_11_27_002500_plpgsql_write_functions',
  '2026_11_28_002600_lean_partner_rows_and_consumer_index',
  '2026_11_28_002700_merchant_snapshots',
  '2026_11_28_002800_partner_rows_organisation_once',
  '2026_11_28_002900_drop_allocations_quote_index',
  '2026_11_28_003000_organisation_index_for_children',
  '2026_11_28_003100_entries_as_strings',
]
/** Applies the migrations up to MIGRATION (not those after it); returns the names applied now. */
async function migrateToIt(db: Kysely<Database>): Promise<string[]> {
  const { error, results = [] } = await new Migrator({ db, provider: { getMigrations: async () => migrations } }).migrateTo(MIGRATION)
  if (error) throw error
  return results.filter((r) => r.status === 'Success').map((r) => r.migrationName)
}
const HOUR = 3_600_000
const WINDOW = 'dateTimeFrom=2026-11-01T00:00:00Z&dateTimeTo=2026-12-01T00:00:00Z'
let t: TestApp
let psp: OrgFixture
let merchant: OrgFixture
let jpMerchant: OrgFixture
const allocations: string[] = []

/** What allocations.entries held before the migration: the previous src/db/repositories/allocations.ts entriesOf. */
const oldEntriesOf = (split: AllocationSplit) => [
  ...split.credits.map(({ quantityTonnes, projectId, impactPartnerId, ...amounts }) => ({
    kind: 'credit',
    projectId,
    impactPartnerId,
    ...amounts,
    quantityTonnes,
  })),
  ...split.contributions.map(({ impactPartnerId, ...amounts }) => ({
    kind: 'contribution',
    projectId: null,
    impactPartnerId,
    ...amounts,
    quantityTonnes: null,
  })),
]

interface Quote {
  credits: { amounts: { total: number } }
}

async function allocate(
  org: OrgFixture,
  body: (quote: Quote) => Record<string, unknown>,
  quote: Record<string, unknown> = {},
): Promise<string> {
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

/** Every stored entries column, as text (jsonb's text is its canonical form: equal text, equal jsonb). */
const entriesText = async () =>
  (await sql<{ id: string; entries: string }>`SELECT id, entries::text AS entries FROM allocations ORDER BY id`.execute(t.db)).rows

/** The balance function's body and the view's definition, as the database holds them. */
const definitions = async (db: Kysely<Database>) =>
  (
    await sql<{ body: string; view: string }>`
      SELECT (SELECT prosrc FROM pg_proc WHERE oid = 'allocation_entries_balance(jsonb, numeric, numeric)'::regprocedure) AS body,
             pg_get_viewdef('allocation_entries'::regclass) AS view`.execute(db)
  ).rows[0]

/** The same, as migrations/2026_11_21_000400_funds_allocations.ts makes them: run again in a scratch schema, rolled back. */
async function originalDefinitions() {
  const rollback = new Error('rollback')
  let found: Awaited<ReturnType<typeof definitions>>
  await t.db
    .transaction()
    .execute(async (trx) => {
      await sql`CREATE SCHEMA original`.execute(trx)
      await sql`SET LOCAL search_path TO original, public`.execute(trx)
      // What its tables reference, as they were then (quotes are partitioned since).
      await sql`CREATE TABLE organisations (id uuid PRIMARY KEY)`.execute(trx)
      await sql`CREATE TABLE quotes (id uuid PRIMARY KEY)`.execute(trx)
      await migrations['2026_11_21_000400_funds_allocations']?.up(trx)
      found = await definitions(trx)
      throw rollback
    })
    .catch((e: unknown) => {
      if (e !== rollback) throw e
    })
  return found
}

/**
 * Every answer that reads the allocations' entries, with its status and content type, from the rows as they are
 * now: read with the later migrations applied (the app's reads are the latest schema's), which are then undone.
 */
async function answers(): Promise<string[]> {
  expect(await migrateToLatest(t.db)).toEqual(LATER)
  const answered = await answersAtLatest()
  for (const name of [...LATER].reverse()) expect(await migrateDown(t.db)).toEqual([name])
  return answered
}

async function answersAtLatest(): Promise<string[]> {
  const get = (key: string, path: string, accept?: string) =>
    client(t.app, key)
      .get(path, accept ? { accept } : {})
      .then((r) => `${path} ${accept ?? ''} ${r.statusCode} ${r.headers['content-type']} ${r.body}`)
  const keys = [psp.apiKey, jpMerchant.apiKey]
  return Promise.all([
    ...allocations.flatMap((id) => {
      const key = id === allocations.at(-1) ? jpMerchant.apiKey : psp.apiKey
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

beforeAll(async () => {
  t = await createTestApp({ SUMMARY_ROLLUP_WORKER: 'false', WEBHOOK_WORKER: 'false' })
  await importDemoCatalogue(t.db)
  // Profit share: the PSP keeps 0.2 of the fee, its merchant 0.6 of that; a JPY tree of its own settles net.
  psp = await createOrg(t.db, { relativeProfitShare: '0.2' })
  merchant = await createOrg(t.db, { parentId: psp.organisationId, relativeProfitShare: '0.6' })
  const jpPsp = await createOrg(t.db, { relativeProfitShare: '0.2', countryCode: 'JPN', currencyCode: 'JPY' })
  jpMerchant = await createOrg(t.db, {
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
  for (const name of [...LATER].reverse()) expect(await migrateDown(t.db)).toEqual([name])
})

afterAll(async () => {
  await t?.close()
})

describe('the compact entries migration', () => {
  it('converts allocations written before it exactly, every answer is the same, and down gives back the same jsonb', async () => {
    const compact = await entriesText()
    expect(compact).toHaveLength(6)
    // Read by SQL of this schema (the repository's reads are the latest schema's).
    const { rows: stored } = await sql<{ id: string; currency_code: string; entries: StoredAllocationEntry[] }>`
      SELECT id, currency_code, entries FROM allocations WHERE id = ANY(${allocations}::uuid[])`.execute(t.db)
    const splits = new Map(stored.map((r) => [r.id, splitOf(r.currency_code, r.entries)] as const))
    const latest = await definitions(t.db)
    const answered = await answers()
    expect(answered.filter((a) => / 200 /.test(a))).toHaveLength(answered.length)

    // The previous version's rows: entries as its entriesOf wrote them, and its function and view.
    expect(await migrateDown(t.db)).toEqual([MIGRATION])
    const old = await entriesText()
    for (const { id, entries } of old) {
      const written = await sql<{
        entries: string
      }>`SELECT ${JSON.stringify(oldEntriesOf(splits.get(id)!))}::jsonb::text AS entries`.execute(t.db)
      expect(entries, id).toBe(written.rows[0]?.entries)
    }
    const original = await originalDefinitions()
    expect(original?.body).toContain(`e->>'kind'`)
    expect(await definitions(t.db)).toEqual(original)

    expect(await migrateToIt(t.db)).toEqual([MIGRATION])
    expect(await entriesText()).toEqual(compact)
    expect(await definitions(t.db)).toEqual(latest)
    expect(await answers()).toEqual(answered)
    // The summary read the records so far; rolled up from the converted rows (by the latest schema's SQL, as the app
    // does), it answers the same again.
    expect(await migrateToLatest(t.db)).toEqual(LATER)
    await resetRollups(t.db, t.clock.now())
    await rollUpTo(t.db, new Date('2026-12-01T00:00:00Z'), { now: t.clock.now, skipLocked: false })
    expect((await verifyRollups(t.db)).mismatches).toEqual([])
    for (const name of [...LATER].reverse()) expect(await migrateDown(t.db)).toEqual([name])
    expect(await answers()).toEqual(answered)

    // Down again: the previous version's bytes and objects, exactly.
    expect(await migrateDown(t.db)).toEqual([MIGRATION])
    expect(await entriesText()).toEqual(old)
    expect(await definitions(t.db)).toEqual(original)
    expect(await migrateToIt(t.db)).toEqual([MIGRATION])
    expect(await answers()).toEqual(answered)
  })

  it('refuses, changing nothing, entries it could not give back exactly', async () => {
    expect(await migrateDown(t.db)).toEqual([MIGRATION])
    const before = await definitions(t.db)
    // A line with a field the migration does not know (the old CHECK let it in: it reads the four amounts only).
    const id = allocations[0] as string
    await sql`UPDATE allocations SET entries = jsonb_set(entries, '{0,note}', '"kept"') WHERE id = ${id}`.execute(t.db)
    const tampered = await entriesText()
    await expect(migrateToIt(t.db)).rejects.toThrow(/cannot convert exactly/)
    expect(await pendingMigrations(t.db)).toEqual([MIGRATION, ...LATER])
    expect(await entriesText()).toEqual(tampered)
    expect(await definitions(t.db)).toEqual(before)
    await sql`UPDATE allocations SET entries = (SELECT jsonb_agg(e.line - 'note' ORDER BY e.n) FROM jsonb_array_elements(entries) WITH ORDINALITY AS e(line, n)) WHERE id = ${id}`.execute(
      t.db,
    )
    expect(await migrateToIt(t.db)).toEqual([MIGRATION])
  })
})
