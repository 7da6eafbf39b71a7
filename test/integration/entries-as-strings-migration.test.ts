// Entries as one string per line (migrations/2026_11_28_003100_entries_as_strings.ts): a new allocation writes each
// line as one string (its ids in base64); every endpoint that reads entries answers byte for byte the same whether its
// rows hold strings, the arrays they stand for (down rewrites them), or both (up again keeps the arrays and new rows
// write strings); SQL
// (allocation_lines) and TypeScript (splitOf) read every line alike; the balance CHECK refuses a string line that does
// not balance or is not shaped; and a string line takes fewer bytes than its array.
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { StoredAllocationEntries } from '../../src/db/database.js'
import { migrateDown, migrateToLatest } from '../../src/db/migrate.js'
import { splitOf } from '../../src/db/repositories/allocations.js'
import { resetRollups, rollUpTo, verifyRollups } from '../../src/services/summary-rollups.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { answersReadingEntries, seedEntryRecords, type EntryRecords } from '../helpers/entry-records.js'

const MIGRATION = '2026_11_28_003100_entries_as_strings'
/** The migrations after it, undone first and applied again after it. */
const LATER = ['2026_11_28_003200_partner_key_without_nulls', '2026_11_28_003300_organisation_root_by_steps']
/** A line as one string: kind, two ids in base64 (a contribution's project empty), then seven decimals. */
const LINE = /^(cr\|[\w+/]{22}\|[\w+/]{22}\|\d+\.\d+|co\|[\w+/]{22}\|\|)(\|\d+(\.\d+)?){6}$/
let t: TestApp
let records: EntryRecords
let jpAllocation: string

/** Every stored line with its row, in order: its jsonb type and text. */
const storedLines = async () =>
  (
    await sql<{ id: string; type: string; line: string }>`
      SELECT a.id, jsonb_typeof(e.line) AS type, e.line #>> '{}' AS line
      FROM allocations a, jsonb_array_elements(a.entries) WITH ORDINALITY AS e(line, n) ORDER BY a.id, e.n`.execute(t.db)
  ).rows

/** Every row's entries as stored, and as allocation_lines gives them to SQL. */
const readBoth = async () =>
  (
    await sql<{ id: string; currency_code: string; entries: StoredAllocationEntries; lines: StoredAllocationEntries }>`
      SELECT a.id, a.currency_code, a.entries,
             (SELECT jsonb_agg(l.line ORDER BY l.n) FROM allocation_lines(a.entries) WITH ORDINALITY AS l(line, n)) AS lines
      FROM allocations a ORDER BY a.id`.execute(t.db)
  ).rows

/** The allocation_entries view, whole. */
const viewRows = async () =>
  (await sql`SELECT * FROM allocation_entries ORDER BY allocation_id, position`.execute(t.db)).rows.map((r) => JSON.stringify(r))

const answers = () => answersReadingEntries(t, records, jpAllocation)

beforeAll(async () => {
  t = await createTestApp({ SUMMARY_ROLLUP_WORKER: 'false', WEBHOOK_WORKER: 'false' })
  records = await seedEntryRecords(t)
  jpAllocation = records.allocations.at(-1) as string
})

afterAll(async () => {
  await t?.close()
})

describe('entries as one string per line', () => {
  it('are what new allocations write, and every answer is the same from strings, from arrays and from both', async () => {
    const strings = await storedLines()
    expect(strings.length).toBeGreaterThan(records.allocations.length)
    for (const { type, line } of strings) {
      expect(type).toBe('string')
      expect(line).toMatch(LINE)
    }
    const answered = await answers()
    expect(answered.filter((a) => / 200 /.test(a))).toHaveLength(answered.length)
    const view = await viewRows()
    const stringBytes = await sql<{ n: number }>`SELECT sum(pg_column_size(entries))::int AS n FROM allocations`.execute(t.db)

    // Down: every line becomes the array it stands for (ids with their dashes), and every answer is the same.
    for (const name of [...LATER].reverse()) expect(await migrateDown(t.db)).toEqual([name])
    expect(await migrateDown(t.db)).toEqual([MIGRATION])
    const arrays = await storedLines()
    expect(arrays.map((l) => l.type)).toEqual(strings.map(() => 'array'))
    const arrayBytes = await sql<{ n: number }>`SELECT sum(pg_column_size(entries))::int AS n FROM allocations`.execute(t.db)
    // About 60 B a line: jsonb's header and ten offsets per line, and the ids' 36 characters down to 22.
    expect((arrayBytes.rows[0]?.n ?? 0) - (stringBytes.rows[0]?.n ?? 0)).toBeGreaterThan(55 * strings.length)
    expect(await viewRows()).toEqual(view)

    // Up again: nothing is rewritten, and rows of both shapes answer alike.
    expect(await migrateToLatest(t.db)).toEqual([MIGRATION, ...LATER])
    expect(await storedLines()).toEqual(arrays)
    expect(await answers()).toEqual(answered)
    expect(await viewRows()).toEqual(view)
    await records.allocate(records.merchant, (q) => ({ credits: { amount: q.credits.amounts.total }, contribution: { amount: 3 } }))
    expect(new Set((await storedLines()).map((l) => l.type))).toEqual(new Set(['array', 'string']))
    for (const row of await readBoth()) {
      expect(splitOf(row.currency_code, row.lines), row.id).toEqual(splitOf(row.currency_code, row.entries))
    }
    // The summary's rollups, made from rows of both shapes, agree with the records.
    await resetRollups(t.db, t.clock.now())
    await rollUpTo(t.db, new Date('2026-12-01T00:00:00Z'), { now: t.clock.now, skipLocked: false })
    expect((await verifyRollups(t.db)).mismatches).toEqual([])
  })

  it('the balance CHECK refuses a string line that does not balance, is not ten values or has no known kind; a bad id fails', async () => {
    const id = await records.allocate(records.psp, (q) => ({ credits: { amount: q.credits.amounts.total } }))
    const { rows } = await sql<{ line: string }>`
      SELECT entries->>0 AS line FROM allocations WHERE id = ${id}::uuid AND jsonb_typeof(entries->0) = 'string'`.execute(t.db)
    const line = rows[0]?.line as string
    expect(line).toMatch(LINE)
    const values = line.split('|')
    const refused = async (changed: string) =>
      expect(
        sql`UPDATE allocations SET entries = jsonb_set(entries, '{0}', to_jsonb(${changed}::text)) WHERE id = ${id}::uuid`.execute(t.db),
      ).rejects.toThrow(/allocations_entries_balance/)
    await refused([...values.slice(0, 4), `${values[4]}1`, ...values.slice(5)].join('|'))
    await refused(values.slice(0, 9).join('|'))
    await refused(['xx', ...values.slice(1)].join('|'))
    // An id that is not 16 bytes in base64 cannot be read back as a uuid: refused too.
    await expect(
      sql`UPDATE allocations SET entries = jsonb_set(entries, '{0}', to_jsonb(${[values[0], 'AAAA', ...values.slice(2)].join('|')}::text))
          WHERE id = ${id}::uuid`.execute(t.db),
    ).rejects.toThrow(/base64|uuid/)
    // Unchanged, it is accepted as it is.
    await sql`UPDATE allocations SET entries = jsonb_set(entries, '{0}', to_jsonb(${line}::text)) WHERE id = ${id}::uuid`.execute(t.db)
  })
})
