// npm run bench:recon: reconciliation pages and the CSV export over a large table (docs/reconciliation.md).
// Seeds RECON_ALLOCATIONS allocations (default 900,000) and one reversal per 9 (100,000: 1,000,000 records, about
// 2.5 lines each) across 50 organisations of one tree over 12 months, with SQL (generate_series), then starts the
// API and measures, at 10 connections, the p99 of each page shape (limit 100: first page, last page, each filter),
// checks with EXPLAIN that no page's plan sorts, and streams a CSV export of about 100,000 records measuring rows/s
// and the API's memory growth. Then the summaries (docs/summary.md): the rollups are built from the records (timed, as
// `npm run cli -- summary rebuild` does), and each summary shape is measured the same way (p99 at 10 connections, SQL
// time of its statements), with the SQL time of the same statements reading the records only (no rollups) beside it.
// Settings: RECON_ALLOCATIONS, RECON_SECONDS (per shape, default 5), RECON_CONNECTIONS (default 10),
// RECON_PARTS (pages,summary,export: which parts to run, default all), BENCH_DATABASE_URL / DATABASE_URL (the Postgres
// server to use), RECON_DATABASE (the name of a database to keep: seeded when it does not exist yet, else reused as it
// is, with new keys; never dropped).
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { sql } from 'kysely'
import { openPostgres } from '../src/db/connect.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { createPartition } from '../src/db/repositories/partitions.js'
import { monthEnd, monthOf, monthsBetween, monthStart, partitionName, PARTITION_KEY } from '../src/domain/partitions.js'
import { explainImpactRecords, type ImpactRecordPage } from '../src/db/repositories/impact-records.js'
import {
  countRollupRows,
  explainSummary,
  findRolledUntil,
  findTreeOrganisationIds,
  type SummaryRead,
} from '../src/db/repositories/allocation-rollups.js'
import { dimensionOf, isTimeGroupBy, planPieces, ROLLUP_GRAINS, timeBuckets, type SummaryGroupBy } from '../src/domain/summary.js'
import { systemClock } from '../src/clock.js'
import { rebuildRollups } from '../src/services/summary-rollups.js'
import { createApiKey } from '../src/services/api-keys.js'
import { createOrganisationWithKey } from '../src/services/organisations.js'
import { databaseUrl, withClient } from './harness/database.js'
import { startCpuSplit } from './harness/cpu-split.js'
import { drive } from './harness/load.js'
import { startApi, stopService, type Service } from './harness/processes.js'

const root = fileURLToPath(new URL('..', import.meta.url))
const adminUrl = process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const ALLOCATIONS = Number(process.env.RECON_ALLOCATIONS ?? 900_000)
const SECONDS = Number(process.env.RECON_SECONDS ?? 5)
const CONNECTIONS = Number(process.env.RECON_CONNECTIONS ?? 10)
const ORGANISATIONS = 50
const PARTNERS = [
  '0b6f3e0a-5c1d-4b8e-9a57-2f4c1d9e6a11',
  '1bac135c-c299-4e11-9883-d3be61f1e0de',
  '3293bbcf-7f71-471c-bd6c-b4bb57602af1',
  '4c02038e-4b93-4d02-9a21-6478370e3a7f',
  '5d13149f-5ca4-4e13-8b32-7589481f4b80',
]
const RARE_PARTNER = PARTNERS[4] as string
const START = '2025-01-01T00:00:00Z'
// 12 months of records, evenly spread.
const STEP_MS = Math.floor((365 * 86_400_000) / ALLOCATIONS)
const P99_TARGET_MS = 100
const SUMMARY_P99_TARGET_MS = 50
const PARTS = new Set((process.env.RECON_PARTS ?? 'pages,summary,export').split(',').map((p) => p.trim()))
const ROWS_PER_SECOND_TARGET = 20_000
const RSS_GROWTH_TARGET_MB = 50

const log = (line: string) => console.log(`[recon] ${line}`)
/** The id of the seed's allocation number g. */
const seededId = (g: number) => `00000000-0000-7000-8000-${g.toString(16).padStart(12, '0')}`

async function seed(url: string): Promise<{ rootKey: string; childKey: string; rootId: string; childId: string }> {
  // Seeding statements run for minutes: no statement bounds here.
  const handle = openPostgres({ url, poolMax: 1, queryTimeoutMs: 3_600_000, statementTimeoutMs: 0 })
  try {
    await migrateToLatest(handle.db)
    const db = handle.db
    const now = new Date(START)
    const address = { line1: '1 High Street', city: 'London', postalCode: 'SW1A 1AA', countryCode: 'GBR' }
    const base = { tradingName: 'Bench PSP', legalName: 'Bench PSP Ltd', address, currencyCode: 'GBP', mcc: '5992' }
    const rootOrg = await createOrganisationWithKey(db, { ...base, parentId: null, organisationReference: 'PSP_001' }, 'live', now)
    const rootId = rootOrg.organisation.id
    const child = await createOrganisationWithKey(
      db,
      { ...base, parentId: rootId, tradingName: 'Bench merchant 0', organisationReference: 'MID0' },
      'live',
      now,
    )
    await sql`
      INSERT INTO organisations (id, parent_id, trading_name, legal_name, organisation_reference, address, country_code, currency_code, mcc, created_at)
      SELECT gen_random_uuid(), ${rootId}::uuid, 'Bench merchant ' || g, 'Bench merchant ' || g || ' Ltd', 'MID' || g,
             ${JSON.stringify(address)}::jsonb, 'GBR', 'GBP', '5992', ${now}::timestamptz
      FROM generate_series(1, ${ORGANISATIONS - 2}) g`.execute(db)
    const { rows: orgs } = await sql<{ ids: string[] }>`
      SELECT array_agg(id ORDER BY created_at, id) AS ids FROM organisations WHERE parent_id = ${rootId}::uuid`.execute(db)
    const orgIds = [rootId, ...(orgs[0]?.ids ?? [])]
    const quoteId = '00000000-0000-7000-8000-000000000001'
    await sql`
      INSERT INTO quotes (id, organisation_id, impact_type, currency_code, tax_liability, request, locked, created_at)
      VALUES (${quoteId}::uuid, ${rootId}::uuid, 'carbon', 'GBP', 'platform', '{}', '{}', ${now}::timestamptz)`.execute(db)
    // A line as the API stores it (src/db/database.ts, StoredAllocationEntry): [kind, partner, project, tonnes, impact,
    // its tax rate, its tax, service fee, its tax rate, its tax].
    const line = (kind: 'cr' | 'co', partner: string, project: string | null) =>
      `jsonb_build_array('${kind}', ${partner}, ${project === null ? 'null' : `'${project}'`}, ${kind === 'cr' ? "'0.050000'" : 'null'}, ` +
      `'1.00', '0.2', '0.20', '0.20', '0.2', '0.04')`
    // Credits: two lines (partners g%4 and (g+1)%4); every other allocation also a contribution (partner g%4). The fifth
    // partner is rare: one allocation in 1,000 has it.
    const partnerOf = (expr: string) =>
      `(CASE WHEN g % 1000 = 7 THEN '${RARE_PARTNER}' ELSE (ARRAY['${PARTNERS.slice(0, 4).join("','")}'])[(${expr}) % 4 + 1] END)`
    // The seeded year's months, for every partitioned table the seed writes (the migration made only the months
    // around today's date): as the maintenance job makes them, so that a window's reads prune months.
    const seededMonths = monthsBetween(monthOf(new Date(START)), monthOf(new Date(Date.parse(START) + 367 * 86_400_000)))
    for (const table of ['allocations', 'allocation_reversals', 'impact_record_partners'] as const) {
      for (const month of seededMonths) {
        await createPartition(db, table, PARTITION_KEY[table], partitionName(table, month), {
          from: monthStart(month),
          to: monthEnd(month),
        })
      }
    }
    const started = Date.now()
    const batch = 100_000
    for (let from = 1; from <= ALLOCATIONS; from += batch) {
      const to = Math.min(ALLOCATIONS, from + batch - 1)
      await sql
        .raw(
          `INSERT INTO allocations (id, organisation_id, quote_id, idempotency_key, request_hash, currency_code, credits_amount,
             contribution_amount, tax_liability, issue_tax_receipt, entries, created_at, root_organisation_id,
             collection_organisation_id, consumer_reference, merchant)
           SELECT ('00000000-0000-7000-8000-' || lpad(to_hex(g), 12, '0'))::uuid, org, '${quoteId}', 'k' || g,
                  decode(md5(g::text) || md5(g::text), 'hex'), 'GBP', 2.88, CASE WHEN g % 2 = 0 THEN 1.44 END, 'platform', false,
                  jsonb_build_array(${line('cr', partnerOf('g'), PARTNERS[0] as string)}, ${line('cr', partnerOf('g + 1'), PARTNERS[1] as string)})
                    || CASE WHEN g % 2 = 0 THEN jsonb_build_array(${line('co', partnerOf('g'), null)}) ELSE '[]'::jsonb END,
                  timestamptz '${START}' + g * interval '${STEP_MS} milliseconds', '${rootId}', org, 'consumer_' || (g % 50000), NULL
           FROM (SELECT g, (ARRAY['${orgIds.join("','")}']::uuid[])[g % ${orgIds.length} + 1] AS org
                 FROM generate_series(${from}, ${to}) g) s`,
        )
        .execute(db)
      await sql`
        INSERT INTO allocation_idempotency_keys (organisation_id, idempotency_key, allocation_id, allocation_created_at)
        SELECT organisation_id, idempotency_key, id, created_at FROM allocations
        WHERE id BETWEEN ${seededId(from)}::uuid AND ${seededId(to)}::uuid`.execute(db)
      log(`seeded ${to.toLocaleString('en-GB')} allocations (${Math.round((Date.now() - started) / 1000)} s)`)
    }
    // One reversal per 9 allocations, a day after each.
    await sql
      .raw(
        `INSERT INTO allocation_reversals (id, allocation_id, allocation_created_at, organisation_id, created_at, root_organisation_id,
           consumer_reference)
         SELECT ('00000000-0000-7000-9000-' || lpad(to_hex(g), 12, '0'))::uuid, a.id, a.created_at, a.organisation_id, a.created_at + interval '1 day',
                a.root_organisation_id, a.consumer_reference
         FROM generate_series(9, ${ALLOCATIONS}, 9) g
         JOIN allocations a ON a.id = ('00000000-0000-7000-8000-' || lpad(to_hex(g), 12, '0'))::uuid`,
      )
      .execute(db)
    await sql`
      INSERT INTO allocation_reversal_keys (allocation_id, reversal_id, reversal_created_at)
      SELECT allocation_id, id, created_at FROM allocation_reversals`.execute(db)
    // The partner rows, as the allocation and reversal INSERTs write them (src/db/repositories/allocations.ts).
    await sql`
      INSERT INTO impact_record_partners (impact_partner_id, root_organisation_id, funds_date_time, record_id, organisation_id, allocation_id,
        allocation_created_at)
      SELECT DISTINCT (e.entry->>1)::uuid, a.root_organisation_id, a.created_at, a.id, nullif(a.organisation_id, a.root_organisation_id),
        NULL::uuid, NULL::timestamptz
      FROM allocations a CROSS JOIN LATERAL jsonb_array_elements(a.entries) AS e(entry)`.execute(db)
    await sql`
      INSERT INTO impact_record_partners (impact_partner_id, root_organisation_id, funds_date_time, record_id, organisation_id, allocation_id,
        allocation_created_at)
      SELECT DISTINCT (e.entry->>1)::uuid, r.root_organisation_id, r.created_at, r.id, nullif(r.organisation_id, r.root_organisation_id), r.allocation_id,
        r.allocation_created_at
      FROM allocation_reversals r JOIN allocations a ON a.id = r.allocation_id AND a.created_at = r.allocation_created_at
      CROSS JOIN LATERAL jsonb_array_elements(a.entries) AS e(entry)`.execute(db)
    await sql`VACUUM ANALYZE allocations`.execute(db)
    await sql`VACUUM ANALYZE allocation_reversals`.execute(db)
    await sql`VACUUM ANALYZE impact_record_partners`.execute(db)
    const { rows: counts } = await sql<{ records: string; lines: string }>`
      SELECT (SELECT count(*) FROM allocations) + (SELECT count(*) FROM allocation_reversals) AS records,
             (SELECT sum(jsonb_array_length(entries)) FROM allocations)
             + (SELECT sum(jsonb_array_length(a.entries)) FROM allocation_reversals r JOIN allocations a ON a.id = r.allocation_id) AS lines`.execute(
      db,
    )
    log(
      `seeded ${Number(counts[0]?.records).toLocaleString('en-GB')} records, ${Number(counts[0]?.lines).toLocaleString('en-GB')} lines in ${Math.round((Date.now() - started) / 1000)} s`,
    )
    return { rootKey: rootOrg.apiKey, childKey: child.apiKey, rootId, childId: child.organisation.id }
  } finally {
    await handle.close()
  }
}

interface Shape {
  name: string
  key: 'root' | 'child'
  query: string
  page: Omit<ImpactRecordPage, 'limit'>
  /** dateTimeFrom/dateTimeTo when not the whole year. */
  window?: string
}

/** The ledger's partitions an EXPLAIN ANALYZE read (those it names on a node that ran): pruned months are absent. */
function monthsRead(analysed: readonly string[]): string[] {
  const names = new Set<string>()
  for (const line of analysed) {
    if (line.includes('never executed')) continue
    for (const match of line.matchAll(/\b((?:allocations|allocation_reversals|impact_record_partners)_(?:p\d{4}_\d{2}|default))\b/g)) {
      names.add(match[1] as string)
    }
  }
  return [...names].sort()
}

/** A database seeded by an earlier run: its tree, with new keys. */
async function reuse(url: string): Promise<{ rootKey: string; childKey: string; rootId: string; childId: string }> {
  const handle = openPostgres({ url, poolMax: 1, queryTimeoutMs: 3_600_000, statementTimeoutMs: 0 })
  try {
    await migrateToLatest(handle.db)
    const { rows } = await sql<{ root: string; child: string }>`
      SELECT r.id AS root, (SELECT c.id FROM organisations c WHERE c.parent_id = r.id ORDER BY c.created_at, c.id LIMIT 1) AS child
      FROM organisations r WHERE r.parent_id IS NULL LIMIT 1`.execute(handle.db)
    const { root, child } = rows[0] as { root: string; child: string }
    const now = new Date()
    const rootKey = (await createApiKey(handle.db, root, 'live', now)).apiKey
    const childKey = (await createApiKey(handle.db, child, 'live', now)).apiKey
    return { rootKey, childKey, rootId: root, childId: child }
  } finally {
    await handle.close()
  }
}

/** One summary request the bench measures; `target`: the issue's ≤ 50 ms p99 applies to it. */
interface SummaryShape {
  name: string
  key: 'root' | 'child'
  query: string
  target: boolean
  read: { rootOrganisationId: string; organisations: 'tree' | string[]; groupBy: SummaryGroupBy; timeZone: string; from: Date; to: Date }
}

function summaryShapesOf(start: Date, rootId: string, childId: string): SummaryShape[] {
  const day = 86_400_000
  const june = new Date(start.getTime() + 151 * day) // 2025-06-01
  const shape = (
    name: string,
    groupBy: SummaryGroupBy,
    timeZone: string,
    from: Date,
    days: number,
    options: { target?: boolean; child?: boolean } = {},
  ): SummaryShape => {
    const to = new Date(from.getTime() + days * day)
    return {
      name,
      key: options.child ? 'child' : 'root',
      query: `dateTimeFrom=${from.toISOString()}&dateTimeTo=${to.toISOString()}&groupBy=${groupBy}&timeZone=${encodeURIComponent(timeZone)}`,
      target: options.target ?? false,
      read: { rootOrganisationId: rootId, organisations: options.child ? [childId] : 'tree', groupBy, timeZone, from, to },
    }
  }
  return [
    shape('30 days by day (UTC), tree', 'day', 'UTC', june, 30, { target: true }),
    shape('365 days by impactPartner, tree', 'impactPartner', 'UTC', start, 365, { target: true }),
    shape('30 days by day (America/New_York), tree', 'day', 'America/New_York', new Date(june.getTime() + 4 * 3_600_000), 30),
    shape('30 days by day (Asia/Kolkata), tree', 'day', 'Asia/Kolkata', new Date(june.getTime() - 5.5 * 3_600_000), 30),
    shape('365 days by project, tree', 'project', 'UTC', start, 365),
    shape('365 days by organisation, tree', 'organisation', 'UTC', start, 365),
    shape("30 days by day (UTC), a child's key", 'day', 'UTC', june, 30, { child: true }),
  ]
}

/** The statements a summary runs, as src/services/summary.ts plans them (its grouping; the totals for partner/project). */
function summaryReadsOf(shape: SummaryShape, rolledUntil: Date | null, treeOrganisationIds: string[]): SummaryRead[] {
  const { read } = shape
  const dimension = dimensionOf(read.groupBy)
  const organisations = read.groupBy === 'organisation' && read.organisations === 'tree' ? treeOrganisationIds : read.organisations
  const scope = organisations === 'tree' ? 'tree' : 'organisation'
  const buckets = isTimeGroupBy(read.groupBy)
    ? timeBuckets(read.groupBy, read.from, read.to, read.timeZone)
    : [{ from: read.from, to: read.to }]
  const key: SummaryRead['key'] = isTimeGroupBy(read.groupBy) ? 'bucket' : read.groupBy === 'organisation' ? 'organisation' : 'group'
  const reads: SummaryRead[] = [
    {
      rootOrganisationId: read.rootOrganisationId,
      organisations: organisations === 'tree' ? 'tree' : organisations,
      dimension,
      key,
      pieces: planPieces(buckets, rolledUntil, ROLLUP_GRAINS[dimension][scope]),
    },
  ]
  if (dimension !== 'total') {
    reads.push({
      ...(reads[0] as SummaryRead),
      dimension: 'total',
      key: 'currency',
      pieces: planPieces([{ from: read.from, to: read.to }], rolledUntil, ROLLUP_GRAINS.total[scope]),
    })
  }
  return reads
}

/** Planning and execution times of the statements of an EXPLAIN ANALYZE output, summed. */
const sqlMsOf = (analysed: readonly string[]): number =>
  [...analysed.join('\n').matchAll(/(?:Planning|Execution) Time: ([\d.]+)/g)].reduce((sum, m) => sum + Number(m[1]), 0)

/** The median execution time of an EXPLAIN ANALYZE, warm. */
async function medianSqlMs(explain: () => Promise<string[]>, runs: number): Promise<number> {
  const times: number[] = []
  for (let i = 0; i < runs; i++) times.push(Number(/Execution Time: ([\d.]+)/.exec((await explain()).join('\n'))?.[1] ?? NaN))
  return times.sort((a, b) => a - b)[Math.floor(runs / 2)] ?? NaN
}

async function exportRun(service: Service, from: Date, rootKey: string) {
  const exportTo = new Date(
    from.getTime() + Math.min(366 * 86_400_000, Math.round((100_000 / ((ALLOCATIONS * 10) / 9)) * 365 * 86_400_000)),
  )
  service.rss.markWindow()
  const rssBefore = service.rss.windowPeakMb()
  service.rss.markWindow()
  const started = Date.now()
  const res = await fetch(
    `${service.url}/v3/funds/allocations/impact/export?dateTimeFrom=${from.toISOString()}&dateTimeTo=${exportTo.toISOString()}`,
    {
      headers: { authorization: `Bearer ${rootKey}` },
    },
  )
  if (res.status !== 200 || !res.body) throw new Error(`export: HTTP ${res.status}`)
  let rows = -1
  let firstByteMs = 0
  const records = new Set<string>()
  let pending = ''
  const decoder = new TextDecoder()
  for await (const chunk of res.body) {
    if (firstByteMs === 0) firstByteMs = Date.now() - started
    pending += decoder.decode(chunk, { stream: true })
    const lines = pending.split('\r\n')
    pending = lines.pop() ?? ''
    for (const line of lines) {
      rows++
      if (rows > 0) records.add(line.slice(0, line.indexOf(',')))
    }
  }
  const seconds = (Date.now() - started) / 1000
  return {
    records: records.size,
    rows,
    firstByteMs,
    seconds,
    rowsPerSecond: Math.round(rows / seconds),
    growth: service.rss.windowPeakMb() - rssBefore,
  }
}

async function main(): Promise<void> {
  const kept = process.env.RECON_DATABASE
  const name = kept ?? `canopy_bench_recon_${Date.now().toString(36)}`
  // A kept database that does not exist yet is created and seeded, then kept for the next runs.
  const seeded =
    kept !== undefined &&
    ((await withClient(adminUrl, (c) => c.query('SELECT 1 FROM pg_database WHERE datname = $1', [kept]))).rowCount ?? 0) > 0
  if (!seeded) await withClient(adminUrl, (c) => c.query(`CREATE DATABASE ${name}`))
  const url = databaseUrl(adminUrl, name)
  let service: Service | undefined
  try {
    const { rootKey, childKey, rootId, childId } = seeded ? await reuse(url) : await seed(url)
    const handle = openPostgres({ url, poolMax: 2, queryTimeoutMs: 60_000, statementTimeoutMs: 0 })
    const from = new Date(START)
    const to = new Date(from.getTime() + 366 * 86_400_000)
    const window = `dateTimeFrom=${from.toISOString()}&dateTimeTo=${to.toISOString()}`
    // The last record of the window, and of one organisation: the cursors of "last page" shapes.
    const lastOf = async (org?: string) =>
      (
        await sql<{ id: string; time: string }>`
          SELECT id, created_at::text AS time FROM (
            SELECT id, created_at FROM allocations WHERE root_organisation_id = ${rootId}::uuid ${org ? sql`AND organisation_id = ${org}::uuid` : sql``}
            UNION ALL
            SELECT id, created_at FROM allocation_reversals WHERE root_organisation_id = ${rootId}::uuid ${org ? sql`AND organisation_id = ${org}::uuid` : sql``}
          ) r WHERE created_at < ${to}::timestamptz ORDER BY created_at DESC, id DESC LIMIT 1`.execute(handle.db)
      ).rows[0] as { id: string; time: string }
    const last = await lastOf()
    const lastOfChild = await lastOf(childId)
    const filter = { rootOrganisationId: rootId, from, to }
    const june = { from: new Date(Date.UTC(2025, 5, 1)), to: new Date(Date.UTC(2025, 6, 1)) }
    const shapes: Shape[] = [
      { name: 'tree, first page', key: 'root', query: '', page: { filter, direction: 'forward' } },
      { name: 'tree, last page', key: 'root', query: `&endingBefore=${last.id}`, page: { filter, before: last, direction: 'backward' } },
      {
        name: 'fundsOrganisationId, first page',
        key: 'root',
        query: `&fundsOrganisationId=${childId}`,
        page: { filter: { ...filter, organisationIds: [childId] }, direction: 'forward' },
      },
      {
        name: 'fundsOrganisationId, last page',
        key: 'root',
        query: `&fundsOrganisationId=${childId}&endingBefore=${lastOfChild.id}`,
        page: { filter: { ...filter, organisationIds: [childId] }, before: lastOfChild, direction: 'backward' },
      },
      {
        name: "a child's key (its subtree)",
        key: 'child',
        query: '',
        page: { filter: { ...filter, organisationIds: [childId] }, direction: 'forward' },
      },
      {
        name: 'consumerReference, first page',
        key: 'root',
        query: '&consumerReference=consumer_123',
        page: { filter: { ...filter, consumerReference: 'consumer_123' }, direction: 'forward' },
      },
      {
        name: 'consumerReference, last page',
        key: 'root',
        query: `&consumerReference=consumer_123&endingBefore=${last.id}`,
        page: { filter: { ...filter, consumerReference: 'consumer_123' }, before: last, direction: 'backward' },
      },
      {
        name: 'impactPartnerId (common), first page',
        key: 'root',
        query: `&impactPartnerId=${PARTNERS[0]}`,
        page: { filter: { ...filter, impactPartnerId: PARTNERS[0] }, direction: 'forward' },
      },
      {
        name: 'impactPartnerId (common), last page',
        key: 'root',
        query: `&impactPartnerId=${PARTNERS[0]}&endingBefore=${last.id}`,
        page: { filter: { ...filter, impactPartnerId: PARTNERS[0] }, before: last, direction: 'backward' },
      },
      {
        name: 'impactPartnerId (1 in 1,000), first page',
        key: 'root',
        query: `&impactPartnerId=${RARE_PARTNER}`,
        page: { filter: { ...filter, impactPartnerId: RARE_PARTNER }, direction: 'forward' },
      },
      {
        name: 'impactPartnerId (1 in 1,000), last page',
        key: 'root',
        query: `&impactPartnerId=${RARE_PARTNER}&endingBefore=${last.id}`,
        page: { filter: { ...filter, impactPartnerId: RARE_PARTNER }, before: last, direction: 'backward' },
      },
      {
        name: 'one month (June), tree, first page',
        key: 'root',
        query: '',
        window: `dateTimeFrom=${june.from.toISOString()}&dateTimeTo=${june.to.toISOString()}`,
        page: { filter: { ...filter, from: june.from, to: june.to }, direction: 'forward' },
      },
      {
        name: 'one month (June), impactPartnerId (common)',
        key: 'root',
        query: `&impactPartnerId=${PARTNERS[0]}`,
        window: `dateTimeFrom=${june.from.toISOString()}&dateTimeTo=${june.to.toISOString()}`,
        page: { filter: { ...filter, from: june.from, to: june.to, impactPartnerId: PARTNERS[0] }, direction: 'forward' },
      },
      {
        name: 'impactPartnerId (common) + fundsOrganisationId',
        key: 'root',
        query: `&impactPartnerId=${PARTNERS[0]}&fundsOrganisationId=${childId}`,
        page: { filter: { ...filter, impactPartnerId: PARTNERS[0], organisationIds: [childId] }, direction: 'forward' },
      },
    ]
    const plans: { name: string; sorts: boolean; plan: string[]; sqlMs: number; months: string[] }[] = []
    for (const shape of PARTS.has('pages') ? shapes : []) {
      // The statement alone, warm (the median of 5 EXPLAIN ANALYZE runs): what the database spends on a page.
      const times: number[] = []
      let months: string[] = []
      for (let i = 0; i < 5; i++) {
        const analysed = await explainImpactRecords(handle.db, { ...shape.page, limit: 101 }, true)
        // A page is two statements (its keys, then their allocations); each one's planning counts (custom plans).
        times.push(sqlMsOf(analysed))
        months = monthsRead(analysed)
      }
      const sqlMs = times.sort((a, b) => a - b)[2] ?? NaN
      const plan = await explainImpactRecords(handle.db, { ...shape.page, limit: 101 })
      plans.push({ name: shape.name, sorts: plan.some((line) => /^\s*(->\s+)?(Incremental\s+)?Sort\s+\(/.test(line)), plan, sqlMs, months })
    }

    // Summaries: the rollups first (as `npm run cli -- summary rebuild` builds them), unless a kept database has them.
    const summaryShapes = PARTS.has('summary') ? summaryShapesOf(from, rootId, childId) : []
    let rollups: { seconds: number; rows: Record<string, number>; built: boolean } | undefined
    if (summaryShapes.length > 0) {
      const started = Date.now()
      const built = (await findRolledUntil(handle.db)) === null
      if (built) {
        log('building the summary rollups from the records…')
        await rebuildRollups({ db: handle.db, clock: systemClock, delayMs: 300_000 })
        await sql`VACUUM ANALYZE allocation_rollups`.execute(handle.db)
      }
      rollups = { seconds: Math.round((Date.now() - started) / 100) / 10, rows: await countRollupRows(handle.db), built }
      log(`rollups ${built ? `built in ${rollups.seconds} s` : 'kept'}: ${JSON.stringify(rollups.rows)}`)
    }
    const rolledUntil = await findRolledUntil(handle.db)
    const treeOrganisationIds = await findTreeOrganisationIds(handle.db, rootId)
    // Each summary's statements (its grouping, and the window's totals when grouped by partner or project), as the
    // service plans them: SQL time with the rollups, and with none (every record read).
    const summaryPlans: { sqlMs: number; rawSqlMs: number; plan: string[] }[] = []
    for (const shape of summaryShapes) {
      const reads = (rolled: Date | null) => summaryReadsOf(shape, rolled, treeOrganisationIds)
      const timed = async (rolled: Date | null) => {
        let total = 0
        for (const read of reads(rolled)) total += await medianSqlMs(() => explainSummary(handle.db, read, true), rolled === null ? 1 : 5)
        return total
      }
      summaryPlans.push({
        sqlMs: await timed(rolledUntil),
        rawSqlMs: await timed(null),
        plan: await explainSummary(handle.db, reads(rolledUntil)[0] as SummaryRead),
      })
    }
    await handle.close()

    service = await startApi({ name: 'api (recon)', cwd: root, databaseUrl: url, logLevel: 'warn' })
    const results: {
      name: string
      p50: number
      p99: number
      rps: number
      unexpected: number
      sorts: boolean
      sqlMs: number
      apiCpuMs: number
      postgresCpuMs: number
    }[] = []
    for (const [i, shape] of (PARTS.has('pages') ? shapes : []).entries()) {
      const request = {
        method: 'GET' as const,
        path: `/v3/funds/allocations/impact?${shape.window ?? window}&limit=100${shape.query}`,
        headers: { authorization: `Bearer ${shape.key === 'root' ? rootKey : childKey}` },
        expectStatus: 200,
      }
      await drive(service.url, request, { connections: CONNECTIONS, seconds: 1 })
      const cpu = await startCpuSplit(url, service.child.pid)
      const load = await drive(service.url, request, { connections: CONNECTIONS, seconds: SECONDS })
      const { apiSeconds, postgresSeconds } = cpu()
      results.push({
        name: shape.name,
        p50: load.p50,
        p99: load.p99,
        rps: load.requestsPerSecond,
        unexpected: load.unexpected,
        sorts: plans[i]?.sorts ?? true,
        sqlMs: plans[i]?.sqlMs ?? NaN,
        apiCpuMs: (apiSeconds * 1000) / Math.max(1, load.completed),
        postgresCpuMs: (postgresSeconds * 1000) / Math.max(1, load.completed),
      })
      log(
        `${shape.name.padEnd(42)} p50 ${load.p50} ms  p99 ${load.p99} ms  ${load.requestsPerSecond} req/s${load.unexpected ? `  ${load.unexpected} unexpected` : ''}`,
      )
    }

    const summaryResults: { name: string; p50: number; p99: number; rps: number; unexpected: number; target: boolean }[] = []
    for (const shape of summaryShapes) {
      const request = {
        method: 'GET' as const,
        path: `/v3/funds/allocations/summary?${shape.query}`,
        headers: { authorization: `Bearer ${shape.key === 'root' ? rootKey : childKey}` },
        expectStatus: 200,
      }
      await drive(service.url, request, { connections: CONNECTIONS, seconds: 1 })
      const load = await drive(service.url, request, { connections: CONNECTIONS, seconds: SECONDS })
      summaryResults.push({
        name: shape.name,
        p50: load.p50,
        p99: load.p99,
        rps: load.requestsPerSecond,
        unexpected: load.unexpected,
        target: shape.target,
      })
      log(
        `${shape.name.padEnd(42)} p50 ${load.p50} ms  p99 ${load.p99} ms  ${load.requestsPerSecond} req/s${load.unexpected ? `  ${load.unexpected} unexpected` : ''}`,
      )
    }

    // Export: the first ~100,000 records of the year (allocations and reversals), streamed.
    const exported = PARTS.has('export') ? await exportRun(service, from, rootKey) : undefined

    const loadAverage = (await readFile('/proc/loadavg', 'utf8').catch(() => '')).split(' ').slice(0, 3).join(' ')
    console.log(
      `\n${Number(ALLOCATIONS + Math.floor(ALLOCATIONS / 9)).toLocaleString('en-GB')} records (allocations and reversals), ${ORGANISATIONS} organisations, 12 months; load average at the end ${loadAverage}`,
    )
    if (results.length > 0) {
      console.log('\n## Reconciliation pages (limit 100, 10 concurrent, API over HTTP)\n')
      const { rows: partitionCount } = await withClient(url, (c) =>
        c.query<{ n: string }>(
          `SELECT count(*)::text AS n FROM pg_inherits i JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname IN ('allocations', 'allocation_reversals', 'impact_record_partners')`,
        ),
      )
      console.log(
        `Partitions read: of the ${partitionCount[0]?.n} partitions of allocations, reversals and partner rows, those the page's plan ran (EXPLAIN ANALYZE).\n`,
      )
      console.log(
        '| shape | SQL ms (planning + execution, median, warm) | p50 ms | p99 ms | req/s | CPU ms per page: API / Postgres | plan sorts | partitions read | ≤ 100 ms p99 |',
      )
      console.log('|---|---:|---:|---:|---:|---:|---|---:|---|')
      results.forEach((r, i) => {
        console.log(
          `| ${r.name} | ${r.sqlMs.toFixed(1)} | ${r.p50} | ${r.p99} | ${r.rps} | ${r.apiCpuMs.toFixed(2)} / ${r.postgresCpuMs.toFixed(2)} | ${r.sorts ? 'YES' : 'no'} | ${plans[i]?.months.length ?? '?'} | ${r.p99 <= P99_TARGET_MS && r.unexpected === 0 ? 'met' : 'MISSED'} |`,
        )
      })
    }
    if (summaryResults.length > 0 && rollups) {
      console.log(`\n## Summaries (${CONNECTIONS} concurrent, API over HTTP)\n`)
      console.log(
        `Rollups ${rollups.built ? `built from the records in ${rollups.seconds} s` : 'kept from an earlier run'}: ` +
          `${Object.entries(rollups.rows)
            .map(([grain, n]) => `${n.toLocaleString('en-GB')} ${grain} rows`)
            .join(', ')}.\n`,
      )
      console.log('| shape | SQL ms with rollups | SQL ms records only | p50 ms | p99 ms | req/s | ≤ 50 ms p99 |')
      console.log('|---|---:|---:|---:|---:|---:|---|')
      summaryResults.forEach((r, i) => {
        const plan = summaryPlans[i]
        const verdict = r.target ? (r.p99 <= SUMMARY_P99_TARGET_MS && r.unexpected === 0 ? 'met' : 'MISSED') : '(reported)'
        console.log(
          `| ${r.name} | ${plan?.sqlMs.toFixed(1)} | ${plan?.rawSqlMs.toFixed(1)} | ${r.p50} | ${r.p99} | ${r.rps} | ${verdict} |`,
        )
      })
    }
    if (exported) {
      console.log('\n## CSV export\n')
      console.log('| records | rows | first byte | seconds | rows/s | API RSS growth |')
      console.log('|---:|---:|---:|---:|---:|---:|')
      console.log(
        `| ${exported.records.toLocaleString('en-GB')} | ${exported.rows.toLocaleString('en-GB')} | ${exported.firstByteMs} ms | ${exported.seconds.toFixed(1)} | ${exported.rowsPerSecond.toLocaleString('en-GB')} | ${exported.growth} MB |`,
      )
    }
    const failures = [
      ...results.filter((r) => r.p99 > P99_TARGET_MS || r.unexpected > 0).map((r) => `${r.name}: p99 ${r.p99} ms`),
      ...plans.filter((p) => p.sorts).map((p) => `${p.name}: plan has a Sort node\n${p.plan.join('\n')}`),
      ...summaryResults
        .filter((r) => r.target && (r.p99 > SUMMARY_P99_TARGET_MS || r.unexpected > 0))
        .map((r) => `${r.name}: p99 ${r.p99} ms`),
      ...(exported && exported.rowsPerSecond < ROWS_PER_SECOND_TARGET ? [`export: ${exported.rowsPerSecond} rows/s`] : []),
      ...(exported && exported.growth > RSS_GROWTH_TARGET_MB ? [`export: RSS grew ${exported.growth} MB`] : []),
    ]
    console.log(failures.length === 0 ? '\nall reconciliation targets met' : `\ntargets missed:\n${failures.join('\n')}`)
    if (process.env.RECON_PLANS) {
      for (const p of plans) console.log(`\n${p.name} (partitions read: ${p.months.join(', ')})\n${p.plan.join('\n')}`)
      summaryShapes.forEach((shape, i) => console.log(`\n${shape.name}\n${summaryPlans[i]?.plan.join('\n')}`))
    }
    process.exitCode = failures.length === 0 ? 0 : 1
  } finally {
    if (service) await stopService(service)
    if (!kept) await withClient(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).catch(() => {})
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
