// History partitioned by month (docs/partitioning.md): the migration converts tables holding rows (every row kept,
// every answer the same), and maintenance creates the months ahead (taking over rows the default partition holds for
// them), drops whole expired months — sessions and quotes after QUOTE_RETENTION_DAYS with every allocated quote kept
// readable, webhook attempts and sent tax receipts after 30 days, never a month with a receipt still pending — and
// never drops allocations. A failing run is logged and counted, and the API keeps serving.
import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { migrateDown, migrateToLatest } from '../../src/db/migrate.js'
import { PARTITIONED_TABLES } from '../../src/domain/partitions.js'
import { partitionListing } from '../../src/services/partitions.js'
import { client, createTestApp, type TestApp } from '../helpers/app.js'
import { createOrg, floristQuote, importDemoCatalogue, type OrgFixture } from '../helpers/factories.js'

const DAY = 86_400_000
let t: TestApp
let org: OrgFixture

/** A quote (and, when asked, a session and an allocation of it) at the app clock's time. */
async function checkout(options: { allocate?: boolean; receipt?: boolean } = {}) {
  const quote = await client(t.app, org.apiKey).post('/quotes/carbon', floristQuote(org.organisationId))
  expect(quote.statusCode).toBe(201)
  const quoteId: string = quote.json().quoteId
  let allocationId: string | undefined
  if (options.allocate) {
    const res = await client(t.app, org.apiKey).post(
      '/funds/allocations',
      {
        organisationId: org.organisationId,
        quoteId,
        credits: { amount: quote.json().credits.amounts.total },
        ...(options.receipt ? { contribution: { amount: 5 }, issueTaxReceipt: true, consumerEmail: 'donor@example.com' } : {}),
      },
      { 'idempotency-key': randomUUID() },
    )
    expect(res.statusCode).toBe(201)
    allocationId = res.json().fundsAllocationId
  }
  return { quoteId, allocationId }
}

/**
 * Every row of the table, as JSON, sorted. A partner row of an allocation reads the allocation's id and time as its
 * own where it stores none (migration 002600 writes none; its down fills them in and its up keeps them: same reading),
 * and its tree's top as its organisation where it names none (migration 002800, likewise).
 * An allocation reads its merchant from its snapshot where it names one (migration 002700; its down copies the
 * snapshot into the row, and its up keeps it there: same reading). Its entries are read as the lines they stand for
 * (migration 003100 writes a line as a string; its down writes the array, and its up keeps it: same lines).
 */
const rowsOf = async (table: string) => {
  const select =
    table === 'impact_record_partners'
      ? sql`SELECT impact_partner_id, root_organisation_id, funds_date_time, record_id,
                   coalesce(organisation_id, root_organisation_id) AS organisation_id,
                   coalesce(allocation_id, record_id) AS allocation_id, coalesce(allocation_created_at, funds_date_time) AS allocation_created_at
            FROM impact_record_partners`
      : table === 'allocations'
        ? sql`SELECT to_jsonb(a) - 'merchant_id' || jsonb_build_object('merchant', coalesce(a.merchant, m.body),
                'entries', (SELECT jsonb_agg(l.line ORDER BY l.n) FROM allocation_lines(a.entries) WITH ORDINALITY AS l(line, n))) AS row
              FROM allocations a LEFT JOIN merchant_snapshots m ON m.id = a.merchant_id`
        : sql`SELECT * FROM ${sql.table(table)}`
  return (await sql<Record<string, unknown>>`${select}`.execute(t.db)).rows.map((r) => JSON.stringify(r)).sort()
}

const partitionNames = async (table: string) =>
  (await partitionListing(t.db)).find((l) => l.table === table)?.partitions.map((p) => p.name) ?? []

const relkind = async (table: string) =>
  (await sql<{ relkind: string }>`SELECT relkind FROM pg_class WHERE relname = ${table}`.execute(t.db)).rows[0]?.relkind

/** The table and those of its partitions that hold rows, each with whether ANALYZE has given it statistics. */
const analysed = async (table: string) =>
  (
    await sql<{ name: string; analysed: boolean }>`
      SELECT c.relname AS name, EXISTS (SELECT 1 FROM pg_statistic s WHERE s.starelid = c.oid) AS analysed
      FROM pg_class c
      WHERE c.relname = ${table}
         OR (c.oid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = ${table}::regclass)
             AND EXISTS (SELECT 1 FROM ${sql.table(table)} x WHERE x.tableoid = c.oid))
      ORDER BY c.relname`.execute(t.db)
  ).rows

beforeAll(async () => {
  // No SMTP: receipts stay pending. Maintenance is driven by hand here; the worker's own runs have a test below.
  t = await createTestApp({ PARTITION_MAINTENANCE: 'false', WEBHOOK_WORKER: 'false' }, { metrics: true, captureLogs: true })
  await importDemoCatalogue(t.db)
  org = await createOrg(t.db, { tradingName: 'Blossom & Bloom' })
})

afterAll(async () => {
  await t?.close()
})

describe('the migration', () => {
  it('converts tables holding rows in several months (and beyond the partitions made ahead) without losing one', async () => {
    // An endpoint, so that events have deliveries (the worker is off: they stay pending).
    const endpoint = await client(t.app, org.apiKey).post('/v3/webhook-endpoints', {
      url: 'https://hooks.example.com/canopy',
      organisationId: org.organisationId,
    })
    expect(endpoint.statusCode).toBe(201)
    const made: { quoteId: string; allocationId?: string | undefined }[] = []
    made.push(await checkout({ allocate: true, receipt: true }))
    made.push(await checkout())
    t.clock.advance(35 * DAY)
    made.push(await checkout({ allocate: true }))
    // A reversal, in a later month than its allocation (a reversal is partitioned by its own time).
    t.clock.advance(35 * DAY)
    expect((await client(t.app, org.apiKey).post(`/funds/allocations/${made[0]?.allocationId}/reverse`)).statusCode).toBe(201)
    await client(t.app, org.apiKey).post('/v3/post-purchase/sessions', {
      organisationId: org.organisationId,
      sdkVariant: 'embedded',
      consumer: { reference: 'c_1', countryCode: 'GBR' },
      transaction: { amount: 47.97, currencyCode: 'GBP' },
    })
    await sql`INSERT INTO webhook_attempts (id, delivery_id, attempted_at, duration_ms, status_code)
              SELECT gen_random_uuid(), d.id, d.created_at, 12, 200 FROM webhook_deliveries d`.execute(t.db)
    const tables = [...PARTITIONED_TABLES, 'allocation_idempotency_keys', 'allocation_reversal_keys']
    // The small events' migration can be undone only where every event has a body: give these events a body of the
    // old shape (what its up reads source_id from) and no quote footprint (a column its down drops).
    await sql`UPDATE webhook_events SET quote_co2e_grams = NULL, body = json_build_object('id', id, 'type', type, 'data',
                CASE WHEN type = 'allocation.reversed' THEN json_build_object('reversalId', source_id)
                     ELSE json_build_object('fundsAllocationId', source_id) END)::text`.execute(t.db)
    const before = Object.fromEntries(await Promise.all(tables.map(async (table) => [table, await rowsOf(table)] as const)))
    const answers = async () =>
      Promise.all(
        made.flatMap(({ quoteId, allocationId }) => [
          client(t.app, org.apiKey)
            .get(`/quotes/${quoteId}`)
            .then((r) => r.body),
          ...(allocationId
            ? [
                client(t.app, org.apiKey)
                  .get(`/funds/allocations/${allocationId}`)
                  .then((r) => r.body),
                client(t.app, org.apiKey)
                  .get(`/funds/allocations/${allocationId}/impact`)
                  .then((r) => r.body),
              ]
            : []),
        ]),
      )
    const window = `dateTimeFrom=2026-01-01T00:00:00Z&dateTimeTo=2027-01-01T00:00:00Z`
    const lists = async () =>
      Promise.all(
        [`/v3/funds/allocations/impact?${window}`, `/v3/funds/allocations/summary?${window}&groupBy=month`].map((path) =>
          client(t.app, org.apiKey)
            .get(path)
            .then((r) => `${r.statusCode} ${r.body}`),
        ),
      )
    const answered = await answers()
    const listed = await lists()
    expect(before.quotes?.length).toBe(4)
    expect(before.allocation_reversals?.length).toBe(1)
    expect(before.webhook_deliveries?.length).toBe(3)
    expect(before.allocation_idempotency_keys?.length).toBe(2)
    expect(before.allocation_reversal_keys?.length).toBe(1)

    // Down past both partitionings (and the migrations between them), then up again.
    const after = [
      '2026_11_28_003300_organisation_root_by_steps',
      '2026_11_28_003200_partner_key_without_nulls',
      '2026_11_28_003100_entries_as_strings',
      '2026_11_28_003000_organisation_index_for_children',
      '2026_11_28_002900_drop_allocations_quote_index',
      '2026_11_28_002800_partner_rows_organisation_once',
      '2026_11_28_002700_merchant_snapshots',
      '2026_11_28_002600_lean_partner_rows_and_consumer_index',
      '2026_11_27_002500_plpgsql_write_functions',
      '2026_11_27_002400_compact_entries',
      '2026_11_27_002310_analyze_partitioned_tables',
      '2026_11_25_002300_partition_ledger',
      '2026_11_25_002200_weekly_rollups',
      '2026_11_25_002100_small_webhook_events',
    ]
    for (const name of after) expect(await migrateDown(t.db)).toEqual([name])
    expect(await relkind('allocations')).toBe('r')
    expect(await migrateDown(t.db)).toEqual(['2026_11_25_001900_partition_history'])
    expect(await relkind('quotes')).toBe('r')
    expect(await migrateToLatest(t.db)).toEqual(['2026_11_25_001900_partition_history', ...[...after].reverse()])
    for (const table of PARTITIONED_TABLES) expect(await relkind(table), table).toBe('p')
    // The converted tables and their partitions have statistics (the planner's guesses without them are far off).
    for (const table of tables) {
      const analysedNow = await analysed(table)
      expect(analysedNow.length, table).toBeGreaterThan(0)
      expect(
        analysedNow.filter((r) => !r.analysed),
        table,
      ).toEqual([])
    }
    for (const table of tables) expect(await rowsOf(table), table).toEqual(before[table])
    expect(await lists()).toEqual(listed)
    expect(await answers()).toEqual(answered)
    // A month for the oldest row's and each up to three ahead of now, and the default partition.
    const quotes = await partitionNames('quotes')
    expect(quotes).toContain('quotes_default')
    expect(quotes).toContain(`quotes_p${new Date().getUTCFullYear()}_${String(new Date().getUTCMonth() + 1).padStart(2, '0')}`)
  })
})

describe('maintenance', () => {
  let juneQuote: string
  let juneAllocation: string | undefined

  it('creates the months ahead (taking over what the default partition held for them) and drops expired months by partition', async () => {
    const allocationsBefore = await rowsOf('allocations')
    const november = (
      await sql<{ id: string; quote_id: string }>`SELECT id, quote_id FROM allocations ORDER BY created_at LIMIT 1`.execute(t.db)
    ).rows[0]
    const unallocated = (
      await sql<{
        id: string
      }>`SELECT id FROM quotes q WHERE NOT EXISTS (SELECT 1 FROM allocations a WHERE a.quote_id = q.id) ORDER BY created_at LIMIT 1`.execute(
        t.db,
      )
    ).rows[0]
    // June 2027: no partition was made that far ahead, so its checkout lands in the default partition.
    t.clock.advance(Date.UTC(2027, 5, 10) - t.clock.now().getTime())
    ;({ quoteId: juneQuote, allocationId: juneAllocation } = await checkout({ allocate: true }))
    const inDefault = await sql<{ n: string }>`SELECT count(*)::text AS n FROM quotes_default WHERE id = ${juneQuote}`.execute(t.db)
    expect(inDefault.rows[0]?.n).toBe('1')

    // The migrations' down and up in the test before made each table's months from its oldest row's and the real
    // date's: which months of November and December 2026 exist depends on the day this runs. Those that do are expired.
    const expiring = ['quotes_p2026_11', 'sessions_p2026_11', 'webhook_attempts_p2026_11', 'quotes_p2026_12', 'sessions_p2026_12']
    const existing = new Set((await partitionListing(t.db)).flatMap((listing) => listing.partitions.map((p) => p.name)))
    const expired = expiring.filter((name) => existing.has(name))
    expect(expired).toContain('quotes_p2026_11') // the month of the oldest quote
    const result = await t.app.partitions.runOnce()
    expect(result?.created).toEqual(
      expect.arrayContaining(['quotes_p2027_06', 'sessions_p2027_09', 'webhook_attempts_p2027_07', 'tax_receipts_p2027_08']),
    )
    expect(result?.movedFromDefault).toBeGreaterThanOrEqual(1)
    // The ledger's months are made ahead too; its rows are referenced by key and stay in the default partition, so
    // June is not made for the tables whose default partition holds June's rows (and says so), and is for the others.
    expect(result?.created).toEqual(
      expect.arrayContaining([
        'allocations_p2027_09',
        'allocation_reversals_p2027_06',
        'webhook_deliveries_p2027_07',
        'impact_record_partners_p2027_08',
      ]),
    )
    for (const table of ['allocations', 'impact_record_partners', 'webhook_events', 'webhook_deliveries']) {
      expect(result?.kept).toContainEqual({ partition: `${table}_p2027_06`, reason: expect.stringContaining(`in ${table}_default`) })
    }
    expect((await client(t.app, org.apiKey).get(`/funds/allocations/${juneAllocation}`)).statusCode).toBe(200)
    const moved = await sql<{ n: string }>`SELECT count(*)::text AS n FROM quotes_p2027_06 WHERE id = ${juneQuote}`.execute(t.db)
    expect(moved.rows[0]?.n).toBe('1')
    // November and December 2026 are past 90 days (quotes, sessions) and 30 days (attempts).
    expect(result?.dropped).toEqual(expect.arrayContaining(expired))
    expect(await partitionNames('quotes')).not.toContain('quotes_p2026_11')
    expect(await partitionNames('quotes')).toContain('quotes_default')
    // November's tax receipt was never sent (no SMTP here): its month stays.
    expect(result?.kept).toEqual(expect.arrayContaining([{ partition: 'tax_receipts_p2026_11', reason: '1 tax receipt(s) still pending' }]))
    expect(await partitionNames('tax_receipts')).toContain('tax_receipts_p2026_11')
    // The allocated quotes are still read by id; an unallocated one of those months is gone. Allocations are all there.
    expect(result?.retainedQuotes).toBeGreaterThanOrEqual(2)
    expect((await client(t.app, org.apiKey).get(`/quotes/${november?.quote_id}`)).statusCode).toBe(200)
    expect((await client(t.app, org.apiKey).get(`/quotes/${november?.quote_id}/explain`)).statusCode).toBe(200)
    // (Checked in the tables: this process's cache of recent quotes may still hold it, as it may hold any quote.)
    const gone = await sql<{
      n: string
    }>`SELECT (SELECT count(*) FROM quotes WHERE id = ${unallocated?.id}) + (SELECT count(*) FROM retained_quotes WHERE id = ${unallocated?.id}) AS n`.execute(
      t.db,
    )
    expect(Number(gone.rows[0]?.n)).toBe(0)
    const allocationsAfter = await rowsOf('allocations')
    expect(allocationsAfter).toEqual(expect.arrayContaining(allocationsBefore))
    expect(allocationsAfter).toHaveLength(allocationsBefore.length + 1)
    expect((await client(t.app, org.apiKey).get(`/funds/allocations/${november?.id}`)).statusCode).toBe(200)
    expect(await t.metrics?.scrape()).toMatch(/canopy_partition_maintenance_last_success_seconds [1-9]/)
    // A second run has nothing more to do.
    expect(await t.app.partitions.runOnce()).toMatchObject({ created: [], dropped: [] })
  })

  it('keeps every allocation and every allocated quote; drops a receipts month once nothing in it is pending', async () => {
    const allocationsBefore = await rowsOf('allocations')
    t.clock.advance(Date.UTC(2027, 11, 20) - t.clock.now().getTime())
    await sql`UPDATE tax_receipts SET status = 'sent', sent_at = now()`.execute(t.db)
    const result = await t.app.partitions.runOnce()
    expect(result?.dropped).toEqual(expect.arrayContaining(['quotes_p2027_06', 'tax_receipts_p2026_11']))
    expect(await rowsOf('allocations')).toEqual(allocationsBefore)
    expect((await client(t.app, org.apiKey).get(`/quotes/${juneQuote}`)).statusCode).toBe(200)
    expect((await client(t.app, org.apiKey).get(`/funds/allocations/${juneAllocation}/impact`)).statusCode).toBe(200)
  })

  it("after its quote's month is dropped, a retry of an allocation replays it and the allocation can be reversed", async () => {
    const quote = await client(t.app, org.apiKey).post('/quotes/carbon', floristQuote(org.organisationId))
    expect(quote.statusCode).toBe(201)
    const body = {
      organisationId: org.organisationId,
      quoteId: quote.json().quoteId,
      credits: { amount: quote.json().credits.amounts.total },
    }
    const key = randomUUID()
    const first = await client(t.app, org.apiKey).post('/funds/allocations', body, { 'idempotency-key': key })
    expect(first.statusCode).toBe(201)
    const quoteMonth = `quotes_p${t.clock.now().toISOString().slice(0, 7).replace('-', '_')}`
    // Past the month boundary and the quote's retention: its month goes, the allocated quote is kept.
    t.clock.advance(120 * DAY)
    expect((await t.app.partitions.runOnce())?.dropped).toContain(quoteMonth)
    expect(await partitionNames('quotes')).not.toContain(quoteMonth)
    const retry = await client(t.app, org.apiKey).post('/funds/allocations', body, { 'idempotency-key': key })
    expect(retry.statusCode).toBe(201)
    expect(retry.body).toBe(first.body)
    expect(retry.headers['idempotent-replayed']).toBe('true')
    const id: string = first.json().fundsAllocationId
    expect(await t.db.selectFrom('allocations').select('id').where('idempotency_key', '=', key).execute()).toEqual([{ id }])
    expect((await client(t.app, org.apiKey).post(`/funds/allocations/${id}/reverse`)).statusCode).toBe(201)
  })

  it('a quote older than QUOTE_RETENTION_DAYS is not allocated, even while this process still caches it', async () => {
    const quote = await client(t.app, org.apiKey).post('/quotes/carbon', floristQuote(org.organisationId))
    expect(quote.statusCode).toBe(201)
    const allocate = () =>
      client(t.app, org.apiKey).post(
        '/funds/allocations',
        { organisationId: org.organisationId, quoteId: quote.json().quoteId, credits: { amount: quote.json().credits.amounts.total } },
        { 'idempotency-key': randomUUID() },
      )
    // A day short of 90 days: still allocated (the quote is in this process's cache and in its partition).
    t.clock.advance(89 * DAY)
    const inTime = await allocate()
    expect(inTime.statusCode).toBe(201)
    // At 90 days retention may drop its month at any moment: refused as if gone, though the cache still holds it.
    t.clock.advance(DAY)
    const late = await allocate()
    expect(late.statusCode).toBe(404)
    expect(late.json().code).toBe('NOT_FOUND')
    // The allocation made in time can still be read and reversed.
    expect((await client(t.app, org.apiKey).post(`/funds/allocations/${inTime.json().fundsAllocationId}/reverse`)).statusCode).toBe(201)

    // Its quote's month is dropped a day after the month's last quote is past retention (no allocation can name one
    // any more), and its quote, allocated in a later month's partition, is copied out first.
    const made = new Date(quote.json().createdAt)
    const quoteMonth = `quotes_p${made.toISOString().slice(0, 7).replace('-', '_')}`
    const monthEnd = Date.UTC(made.getUTCFullYear(), made.getUTCMonth() + 1, 1)
    expect(inTime.json().createdAt.slice(0, 7)).not.toBe(made.toISOString().slice(0, 7))
    t.clock.advance(monthEnd + 90 * DAY + DAY / 2 - t.clock.now().getTime())
    expect((await t.app.partitions.runOnce())?.dropped).not.toContain(quoteMonth)
    t.clock.advance(DAY / 2)
    expect((await t.app.partitions.runOnce())?.dropped).toContain(quoteMonth)
    const kept = await sql<{ n: number }>`SELECT count(*)::int AS n FROM retained_quotes WHERE id = ${quote.json().quoteId}::uuid`.execute(
      t.db,
    )
    expect(kept.rows[0]?.n).toBe(1)
    expect((await client(t.app, org.apiKey).get(`/quotes/${quote.json().quoteId}`)).statusCode).toBe(200)
  })

  it('no index of allocations leads with quote_id: the copy of allocated quotes reads their months instead', async () => {
    const { rows } = await sql<{ indexdef: string }>`SELECT indexdef FROM pg_indexes WHERE tablename LIKE 'allocations%'`.execute(t.db)
    expect(rows.length).toBeGreaterThan(0)
    expect(rows.filter((r) => /\(quote_id/.test(r.indexdef))).toEqual([])
  })

  it("every month's organisation time index holds only records below their tree's top (the root time index has the rest)", async () => {
    const { rows } = await sql<{ tablename: string; indexdef: string }>`
      SELECT tablename, indexdef FROM pg_indexes
      WHERE tablename ~ '^(allocations|allocation_reversals)(_p|$)' AND indexdef LIKE '%(organisation_id, created_at, id)%'`.execute(t.db)
    expect(new Set(rows.map((r) => r.tablename)).size).toBeGreaterThan(2)
    for (const r of rows) expect(r.indexdef, r.tablename).toMatch(/WHERE \(organisation_id <> root_organisation_id\)$/)
  })

  it("every month's partner rows have their key twice: without INCLUDE for rows naming nothing else, with it for the rest", async () => {
    const { rows } = await sql<{ tablename: string; indexdef: string }>`
      SELECT tablename, indexdef FROM pg_indexes
      WHERE tablename ~ '^impact_record_partners(_p|_default|$)'`.execute(t.db)
    const tables = new Set(rows.map((r) => r.tablename))
    expect(tables.size).toBeGreaterThan(2)
    for (const table of tables) {
      const defs = rows.filter((r) => r.tablename === table).map((r) => r.indexdef.replace(/^.* USING btree /, ''))
      expect(defs.sort(), table).toEqual([
        '(impact_partner_id, root_organisation_id, funds_date_time, record_id) INCLUDE (organisation_id, allocation_id, allocation_created_at) WHERE (NOT ((organisation_id IS NULL) AND (allocation_id IS NULL)))',
        '(impact_partner_id, root_organisation_id, funds_date_time, record_id) WHERE ((organisation_id IS NULL) AND (allocation_id IS NULL))',
      ])
      expect(
        rows.filter((r) => r.tablename === table).every((r) => r.indexdef.startsWith('CREATE UNIQUE INDEX')),
        table,
      ).toBe(true)
    }
  })

  it('a failing run is logged and counted; the API keeps serving', async () => {
    const before = Number(/canopy_partition_maintenance_failures_total (\d+)/.exec((await t.metrics?.scrape()) ?? '')?.[1] ?? 0)
    // A table named like next month's partition makes its creation fail.
    t.clock.advance(31 * DAY)
    const month = new Date(t.clock.now().getTime())
    const blocker = `quotes_p${month.getUTCFullYear() + (month.getUTCMonth() + 4 > 12 ? 1 : 0)}_${String(((month.getUTCMonth() + 3) % 12) + 1).padStart(2, '0')}`
    await sql.raw(`CREATE TABLE ${blocker} (id int)`).execute(t.db)
    try {
      await expect(t.app.partitions.runOnce()).rejects.toThrow()
      expect(await t.metrics?.scrape()).toMatch(new RegExp(`canopy_partition_maintenance_failures_total ${before + 1}\\b`))
      expect(t.logs.some((line) => line.includes('"level":50') && line.includes('partition maintenance failed'))).toBe(true)
      const { allocationId } = await checkout({ allocate: true })
      expect((await client(t.app, org.apiKey).get(`/funds/allocations/${allocationId}`)).statusCode).toBe(200)
    } finally {
      await sql.raw(`DROP TABLE ${blocker}`).execute(t.db)
    }
  })
})
