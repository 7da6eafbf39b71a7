// Reconciliation records (docs/reconciliation.md): allocations and reversals as one stream ordered by
// (funds date-time, record id). Each table is read through an index ending in (created_at, id), and the two ordered
// scans are merged (Merge Append), so a page costs its own size whatever the tables hold: keyset, never OFFSET. A
// partner filter reads impact_record_partners, led by the partner, instead.
import { sql, type Kysely, type RawBuilder } from 'kysely'
import type { AddressJson, Database, StoredAllocationEntries, StoredMerchant, StoredProfitShare } from '../database.js'
import type { ImpactRecordSource } from '../../domain/impact-record.js'
import type { ProfitShareSplit } from '../../domain/profit-share.js'
import { profitShareOf, splitOf } from './allocations.js'
import { executePrepared } from '../prepared.js'

/** Which records: one tree (optionally some of its organisations), a window [from, to) and the optional filters. */
export interface ImpactRecordFilter {
  rootOrganisationId: string
  /** undefined: the whole tree; else only these organisations (one: read through its own index). */
  organisationIds?: readonly string[] | undefined
  from: Date
  to: Date
  consumerReference?: string | undefined
  impactPartnerId?: string | undefined
  /**
   * Profit-share records only: those with a profit-share line of a beneficiary at this depth of the tree or deeper
   * (0: any line). Lines are stored root first, so the last one is the deepest.
   */
  profitShareFromLevel?: number | undefined
}

/** A position in the stream: a record's (funds date-time, id); the time as Postgres wrote it (microseconds kept). */
export interface ImpactRecordPosition {
  time: string
  id: string
}

export interface ImpactRecordPage {
  filter: ImpactRecordFilter
  /** Records strictly after (forward) or strictly before (backward) this position. */
  after?: ImpactRecordPosition | undefined
  before?: ImpactRecordPosition | undefined
  /** Backward pages are read newest first; the caller flips them. */
  direction: 'forward' | 'backward'
  limit: number
}

/** A stored record: its allocation's source and, for a reversal's record, the reversal. */
export interface StoredImpactRecord {
  id: string
  /** Its funds date-time as Postgres wrote it, for the next page's position. */
  time: string
  source: ImpactRecordSource
  reversal: { id: string; createdAt: Date } | undefined
  /** The allocation's profit share (not negated for a reversal's record); null when it has none. */
  profitShare: ProfitShareSplit | null
}

/** A record's place in a page and the keys of its allocation's row (the first of a page's two reads). */
interface KeyRow {
  record_id: string
  position_time: string
  allocation_id: string
  /** As Postgres wrote it (microseconds kept): with the id, it names the allocation's partition row. */
  allocation_created_at: string
  reversal_id: string | null
  /** Milliseconds since the epoch (a number parses far faster than a timestamp, hundreds of times a page). */
  reversal_created_at: number | null
}

/** What a record shows of its allocation (read per allocation, once per page). */
interface AllocationColumnsRow {
  allocation_id: string
  quote_id: string
  organisation_id: string
  currency_code: string
  tax_liability: 'platform' | 'organisation'
  entries: StoredAllocationEntries
  allocated_at: number
  collection_organisation_id: string
  consumer_reference: string | null
  merchant: StoredMerchant | null
  organisation: { reference: string | null; name: string; mcc: string | null; address: AddressJson | null } | null
  profit_share: StoredProfitShare | null
}

type RecordRow = Omit<KeyRow, 'allocation_created_at'> & AllocationColumnsRow

/** A record from its allocation's columns (`row`) and its place in the stream (`key`): one row may carry both. */
const recordFromRow = (row: AllocationColumnsRow, key: Omit<KeyRow, 'allocation_created_at'>): StoredImpactRecord => {
  const split = splitOf(row.currency_code, row.entries)
  return {
    id: key.record_id,
    time: key.position_time,
    profitShare: profitShareOf(row.profit_share, split),
    source: {
      allocation: {
        id: row.allocation_id,
        quoteId: row.quote_id,
        organisationId: row.organisation_id,
        currencyCode: row.currency_code,
        taxLiability: row.tax_liability,
        split,
        createdAt: new Date(row.allocated_at),
      },
      collectionOrganisationId: row.collection_organisation_id,
      consumerReference: row.consumer_reference,
      merchant: row.merchant,
      fundsOrganisation: row.organisation ?? { reference: null, name: '', mcc: null, address: null },
    },
    reversal:
      key.reversal_id !== null && key.reversal_created_at !== null
        ? { id: key.reversal_id, createdAt: new Date(key.reversal_created_at) }
        : undefined,
  }
}

/**
 * What every record row carries, from its allocation `a` (the organisation and the merchant read per returned row
 * only; the merchant is the row's own in rows written before migration 002700, its snapshot's since).
 */
const ALLOCATION_COLUMNS = sql`
  a.id AS allocation_id, a.quote_id, a.organisation_id, a.currency_code, a.tax_liability, a.entries,
  (extract(epoch FROM a.created_at) * 1000)::float8 AS allocated_at, a.collection_organisation_id, a.consumer_reference,
  coalesce(a.merchant, (SELECT m.body FROM merchant_snapshots m WHERE m.id = a.merchant_id)) AS merchant, a.profit_share,
  (SELECT jsonb_build_object('reference', o.organisation_reference, 'name', o.trading_name, 'mcc', o.mcc, 'address', o.address)
     FROM organisations o WHERE o.id = a.organisation_id) AS organisation`

/**
 * The conditions on the merged stream `u`. They are written once, on the union's columns, never inside a branch (a
 * WHERE in a branch keeps Postgres from merging the branches' ordered index reads): so the tree (and organisation,
 * consumer) is a constant of the whole stream, each table's index is read in (created_at, id) order, and the two are
 * merged. The window's bounds prune both tables to the window's months. The impact partner, only with a consumer
 * reference here (else `partnerPageKeysQuery`), is checked on each row read (a reversal's entries are its allocation's).
 */
function streamConditions(page: ImpactRecordPage): RawBuilder<unknown>[] {
  const { filter } = page
  const where: RawBuilder<unknown>[] = [
    sql`u.root_organisation_id = ${filter.rootOrganisationId}::uuid`,
    sql`u.funds_date_time >= ${filter.from}::timestamptz`,
    sql`u.funds_date_time < ${filter.to}::timestamptz`,
  ]
  const orgs = filter.organisationIds
  if (orgs !== undefined && orgs.length === 1) where.push(sql`u.organisation_id = ${orgs[0]}::uuid`)
  else if (orgs !== undefined) where.push(sql`u.organisation_id = ANY(${[...orgs]}::uuid[])`)
  // The organisation time indexes hold only records below the tree's top (migration 003000): this condition, true of
  // every such record, is what lets Postgres read them; a top's own records are read from the root time index.
  if (orgs !== undefined && !orgs.includes(filter.rootOrganisationId)) where.push(sql`u.organisation_id <> u.root_organisation_id`)
  if (filter.consumerReference !== undefined) where.push(sql`u.consumer_reference = ${filter.consumerReference}`)
  if (filter.impactPartnerId !== undefined) {
    // A line's partner is its element 1 (database.ts, StoredAllocationEntry): containment (@>) ignores positions.
    where.push(sql`EXISTS (SELECT 1 FROM allocation_lines(u.entries) AS e(line) WHERE e.line->>1 = ${filter.impactPartnerId})`)
  }
  if (filter.profitShareFromLevel !== undefined) {
    where.push(sql`u.profit_share IS NOT NULL`)
    if (filter.profitShareFromLevel > 0) where.push(sql`(u.profit_share->-1->>0)::int >= ${filter.profitShareFromLevel}`)
  }
  if (page.after) where.push(sql`(u.funds_date_time, u.record_id) > (${page.after.time}::timestamptz, ${page.after.id}::uuid)`)
  if (page.before) where.push(sql`(u.funds_date_time, u.record_id) < (${page.before.time}::timestamptz, ${page.before.id}::uuid)`)
  return where
}

/** The partner-led reading applies: a partner filter, unless a consumer reference leads (see `partnerPageKeysQuery`). */
const partnerLed = (filter: ImpactRecordFilter): boolean => filter.impactPartnerId !== undefined && filter.consumerReference === undefined

/** Partner rows that name nothing beyond their key (migration 003200): the predicate of their index, word for word. */
const LEAN_PARTNER_ROW = sql`x.organisation_id IS NULL AND x.allocation_id IS NULL`

/**
 * The keys of a page filtered by impact partner: ordered range reads of that partner's rows of the tree in
 * impact_record_partners, stopped at LIMIT. So a page costs its own size however rare the partner. The rows' key
 * (impact_partner_id, root_organisation_id, funds_date_time, record_id) is two unique indexes (migration 003200): the
 * rows of an allocation of the tree's top, which name nothing else (organisation, allocation: NULL), and the others
 * (a child's, carrying its organisation_id; a reversal's, carrying its allocation's keys), each read index-only and
 * merged in order (Merge Append). Organisations are a row filter: a lean row's organisation is the top, so its read is
 * left out when the filter does not name the top. With a consumer reference too, the consumer-led stream reads fewer
 * rows (a consumer has few records) and checks the partner on each: `partnerLed` sends that to `pageKeysQuery`. A row
 * is a reversal's when it names an allocation other than its record (an allocation's own rows name none, or, written
 * before migration 002600, themselves).
 */
function partnerPageKeysQuery(page: ImpactRecordPage): RawBuilder<KeyRow> {
  const { filter } = page
  const order = page.direction === 'forward' ? sql`ASC` : sql`DESC`
  const where: RawBuilder<unknown>[] = [
    sql`x.impact_partner_id = ${filter.impactPartnerId}::uuid`,
    sql`x.root_organisation_id = ${filter.rootOrganisationId}::uuid`,
    sql`x.funds_date_time >= ${filter.from}::timestamptz`,
    sql`x.funds_date_time < ${filter.to}::timestamptz`,
  ]
  if (page.after) where.push(sql`(x.funds_date_time, x.record_id) > (${page.after.time}::timestamptz, ${page.after.id}::uuid)`)
  if (page.before) where.push(sql`(x.funds_date_time, x.record_id) < (${page.before.time}::timestamptz, ${page.before.id}::uuid)`)
  const orgs = filter.organisationIds
  const named = [...where, sql`NOT (${LEAN_PARTNER_ROW})`]
  const organisation = sql`coalesce(x.organisation_id, x.root_organisation_id)`
  if (orgs !== undefined && orgs.length === 1) named.push(sql`${organisation} = ${orgs[0]}::uuid`)
  else if (orgs !== undefined) named.push(sql`${organisation} = ANY(${[...orgs]}::uuid[])`)
  // One index's rows in page order, cut at the page's size: a lean row's allocation is its record (NULL here).
  const read = (allocation: RawBuilder<unknown>, conditions: RawBuilder<unknown>[]) =>
    sql`(SELECT x.record_id, x.funds_date_time, ${allocation}
         FROM impact_record_partners x
         WHERE ${sql.join(conditions, sql` AND `)}
         ORDER BY x.funds_date_time ${order}, x.record_id ${order}
         LIMIT ${page.limit})`
  const namedRead = read(sql`x.allocation_id, x.allocation_created_at`, named)
  const reads =
    orgs === undefined || orgs.includes(filter.rootOrganisationId)
      ? [read(sql`NULL::uuid AS allocation_id, NULL::timestamptz AS allocation_created_at`, [...where, LEAN_PARTNER_ROW]), namedRead]
      : [namedRead]
  return sql<KeyRow>`
    SELECT x.record_id, x.funds_date_time::text AS position_time, coalesce(x.allocation_id, x.record_id) AS allocation_id,
           coalesce(x.allocation_created_at, x.funds_date_time)::text AS allocation_created_at,
           CASE WHEN x.record_id <> x.allocation_id THEN x.record_id END AS reversal_id,
           CASE WHEN x.record_id <> x.allocation_id THEN (extract(epoch FROM x.funds_date_time) * 1000)::float8 END AS reversal_created_at
    FROM (${sql.join(reads, sql` UNION ALL `)}) AS x
    ORDER BY x.funds_date_time ${order}, x.record_id ${order}
    LIMIT ${page.limit}`
}

/**
 * The keys of one page: two ordered index range reads (allocations, reversals) merged (Merge Append) and cut at LIMIT,
 * so a page reads about its own size whatever the tables hold, and plans only the window's months. A reversal's
 * entries and profit share (its allocation's) are read per row only when a filter needs them.
 */
function pageKeysQuery(page: ImpactRecordPage): RawBuilder<KeyRow> {
  if (partnerLed(page.filter)) return partnerPageKeysQuery(page)
  const order = page.direction === 'forward' ? sql`ASC` : sql`DESC`
  const { filter } = page
  const ofAllocation = (column: string) =>
    sql`(SELECT ${sql.ref(`ra.${column}`)} FROM allocations ra WHERE ra.id = r.allocation_id AND ra.created_at = r.allocation_created_at)`
  const reversalEntries = filter.impactPartnerId !== undefined ? ofAllocation('entries') : sql`NULL::jsonb`
  const reversalProfitShare = filter.profitShareFromLevel !== undefined ? ofAllocation('profit_share') : sql`NULL::jsonb`
  return sql<KeyRow>`
    SELECT u.record_id, u.funds_date_time::text AS position_time, u.allocation_id, u.allocation_created_at::text AS allocation_created_at,
           u.reversal_id, (extract(epoch FROM u.reversal_created_at) * 1000)::float8 AS reversal_created_at
    FROM (
      SELECT a.root_organisation_id, a.organisation_id, a.consumer_reference, a.entries, a.profit_share,
             a.created_at AS funds_date_time, a.id AS record_id, a.id AS allocation_id, a.created_at AS allocation_created_at,
             NULL::uuid AS reversal_id, NULL::timestamptz AS reversal_created_at
      FROM allocations a
      UNION ALL
      SELECT r.root_organisation_id, r.organisation_id, r.consumer_reference, ${reversalEntries}, ${reversalProfitShare},
             r.created_at, r.id, r.allocation_id, r.allocation_created_at, r.id, r.created_at
      FROM allocation_reversals r
    ) AS u
    WHERE ${sql.join(streamConditions(page), sql` AND `)}
    ORDER BY u.funds_date_time ${order}, u.record_id ${order}
    LIMIT ${page.limit}`
}

/**
 * The allocations of a page's keys, by primary key: `created_at = ANY(…)` names their months, so only those
 * partitions are planned and read.
 */
function allocationsOfKeysQuery(keys: readonly KeyRow[]): RawBuilder<AllocationColumnsRow> {
  const ids = [...new Set(keys.map((k) => k.allocation_id))]
  const times = [...new Set(keys.map((k) => k.allocation_created_at))]
  return sql<AllocationColumnsRow>`
    SELECT ${ALLOCATION_COLUMNS} FROM allocations a
    WHERE a.id = ANY(${ids}::uuid[]) AND a.created_at = ANY(${times}::timestamptz[])`
}

/**
 * One page of records in (funds date-time, id) order (newest first when reading backward), at most `limit` rows. Two
 * reads: the page's keys, then their allocations (a join in one statement planned every month of the window for each
 * side of it). Neither plan has a Sort node: each scan reads its index in order and stops once the page is full. Both
 * run as prepared statements: planning the window's months costs more than reading them (docs/partitioning.md).
 */
export async function findImpactRecords(db: Kysely<Database>, page: ImpactRecordPage): Promise<StoredImpactRecord[]> {
  const { rows: keys } = await executePrepared(db, pageKeysQuery(page))
  if (keys.length === 0) return []
  const { rows } = await executePrepared(db, allocationsOfKeysQuery(keys))
  const allocations = new Map(rows.map((r) => [r.allocation_id, r]))
  return keys.map((key) => {
    const allocation = allocations.get(key.allocation_id)
    // A record's allocation is never deleted (a foreign key holds it): a miss is a broken invariant, not a 404.
    if (allocation === undefined) throw new Error(`impact record ${key.record_id}: allocation ${key.allocation_id} not found`)
    return recordFromRow(allocation, key)
  })
}

/** The plans of a page's two reads (EXPLAIN, or EXPLAIN ANALYZE), for the benchmark's checks that no page sorts. */
export async function explainImpactRecords(db: Kysely<Database>, page: ImpactRecordPage, analyze = false): Promise<string[]> {
  const explain = sql`EXPLAIN ${analyze ? sql`(ANALYZE, BUFFERS)` : sql``}`
  const { rows: keyPlan } = await sql<{ 'QUERY PLAN': string }>`${explain} ${pageKeysQuery(page)}`.execute(db)
  const { rows: keys } = await pageKeysQuery(page).execute(db)
  // An empty page makes no second read.
  if (keys.length === 0) return keyPlan.map((r) => r['QUERY PLAN'])
  const { rows: allocationPlan } = await sql<{ 'QUERY PLAN': string }>`${explain} ${allocationsOfKeysQuery(keys)}`.execute(db)
  return [...keyPlan, ...allocationPlan].map((r) => r['QUERY PLAN'])
}

/** One record by its id (an allocation id or a reversal id), with the organisation it belongs to. */
export async function findImpactRecordById(db: Kysely<Database>, id: string): Promise<StoredImpactRecord | undefined> {
  return (await findImpactRecordsByIds(db, [id]))[0]
}

/** The records of these ids (allocation or reversal ids), in no particular order; unknown ids are left out. */
export async function findImpactRecordsByIds(db: Kysely<Database>, ids: readonly string[]): Promise<StoredImpactRecord[]> {
  if (ids.length === 0) return []
  const { rows } = await sql<RecordRow>`
    SELECT a.id AS record_id, a.created_at::text AS position_time, NULL::uuid AS reversal_id, NULL::float8 AS reversal_created_at,
           ${ALLOCATION_COLUMNS}
    FROM allocations a WHERE a.id = ANY(${[...ids]}::uuid[])
    UNION ALL
    SELECT r.id, r.created_at::text, r.id, (extract(epoch FROM r.created_at) * 1000)::float8, ${ALLOCATION_COLUMNS}
    FROM allocation_reversals r JOIN allocations a ON a.id = r.allocation_id AND a.created_at = r.allocation_created_at
    WHERE r.id = ANY(${[...ids]}::uuid[])`.execute(db)
  return rows.map((row) => recordFromRow(row, row))
}

/** Where a record sits in the stream (for a cursor), with its organisation and tree; undefined when unknown. */
export async function findImpactRecordPosition(
  db: Kysely<Database>,
  id: string,
): Promise<(ImpactRecordPosition & { organisationId: string; rootOrganisationId: string }) | undefined> {
  const { rows } = await executePrepared(
    db,
    sql<{ time: string; id: string; organisation_id: string; root_organisation_id: string }>`
    SELECT created_at::text AS time, id, organisation_id, root_organisation_id FROM allocations WHERE id = ${id}::uuid
    UNION ALL
    SELECT created_at::text, id, organisation_id, root_organisation_id FROM allocation_reversals WHERE id = ${id}::uuid`,
  )
  const row = rows[0]
  return row && { time: row.time, id: row.id, organisationId: row.organisation_id, rootOrganisationId: row.root_organisation_id }
}
