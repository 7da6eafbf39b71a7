// The migration to compact entries (migrations/2026_11_27_002400_compact_entries.ts): allocations written before it
// (credits, contributions, several lines, a reversal, profit share, two currencies) become exactly what this version
// writes, every endpoint that reads them answers byte for byte as before, and down gives back the very jsonb the
// previous version wrote, with the balance function and the view exactly as migrations/2026_11_21_000400 made them. An
// entry it cannot convert exactly is refused before anything changes.
import { Migrator, sql, type Kysely } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { migrations } from '../../migrations/index.js'
import type { Database, StoredAllocationEntry } from '../../src/db/database.js'
import { migrateDown, migrateToLatest, pendingMigrations } from '../../src/db/migrate.js'
import { splitOf } from '../../src/db/repositories/allocations.js'
import type { AllocationSplit } from '../../src/domain/types.js'
import { resetRollups, rollUpTo, verifyRollups } from '../../src/services/summary-rollups.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { answersReadingEntries, seedEntryRecords, type EntryRecords } from '../helpers/entry-records.js'

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
  '2026_11_28_003200_partner_key_without_nulls',
  '2026_11_28_003300_organisation_root_by_steps',
]
/** Applies the migrations up to MIGRATION (not those after it); returns the names applied now. */
async function migrateToIt(db: Kysely<Database>): Promise<string[]> {
  const { error, results = [] } = await new Migrator({ db, provider: { getMigrations: async () => migrations } }).migrateTo(MIGRATION)
  if (error) throw error
  return results.filter((r) => r.status === 'Success').map((r) => r.migrationName)
}
let t: TestApp
let records: EntryRecords
let allocations: string[]

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

const answersAtLatest = () => answersReadingEntries(t, records, records.allocations.at(-1) as string)

beforeAll(async () => {
  t = await createTestApp({ SUMMARY_ROLLUP_WORKER: 'false', WEBHOOK_WORKER: 'false' })
  records = await seedEntryRecords(t)
  allocations = records.allocations
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
