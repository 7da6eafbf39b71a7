// Reconciliation records (docs/reconciliation.md): allocations and reversals as one stream ordered by
// (funds date-time, record id). Each table is read through an index ending in (created_at, id), and the two ordered
// scans are merged (Merge Append), so a page costs its own size whatever the tables hold: keyset, never OFFSET. A
// partner filter reads impact_record_partners, led by the partner, instead.
import { sql, type Kysely, type RawBuilder } from 'kysely'
import type { AddressJson, Database, StoredAllocationEntry, StoredMerchant, StoredProfitShare } from '../database.js'
import type { ImpactRecordSource } from '../../domain/impact-record.js'
import type { ProfitShareSplit } from '../../domain/profit-share.js'
import { profitShareOf, splitOf } from './allocations.js'

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

interface RecordRow {
  record_id: string
  position_time: string
  reversal_id: string | null
  /** Milliseconds since the epoch (a number parses far faster than a timestamp, hundreds of times a page). */
  reversal_created_at: number | null
  allocation_id: string
  quote_id: string
  organisation_id: string
  currency_code: string
  tax_liability: 'platform' | 'organisation'
  entries: StoredAllocationEntry[]
  allocated_at: number
  collection_organisation_id: string
  consumer_reference: string | null
  merchant: StoredMerchant | null
  organisation: { reference: string | null; name: string; mcc: string | null; address: AddressJson | null } | null
  profit_share: StoredProfitShare | null
}

const recordFromRow = (row: RecordRow): StoredImpactRecord => {
  const split = splitOf(row.currency_code, row.entries)
  return {
    id: row.record_id,
    time: row.position_time,
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
      row.reversal_id !== null && row.reversal_created_at !== null
        ? { id: row.reversal_id, createdAt: new Date(row.reversal_created_at) }
        : undefined,
  }
}

/** What every record row carries, from its allocation `a` (the organisation read per returned row only). */
const ALLOCATION_COLUMNS = sql`
  a.id AS allocation_id, a.quote_id, a.organisation_id, a.currency_code, a.tax_liability, a.entries,
  (extract(epoch FROM a.created_at) * 1000)::float8 AS allocated_at, a.collection_organisation_id, a.consumer_reference, a.merchant,
  a.profit_share,
  (SELECT jsonb_build_object('reference', o.organisation_reference, 'name', o.trading_name, 'mcc', o.mcc, 'address', o.address)
     FROM organisations o WHERE o.id = a.organisation_id) AS organisation`

/**
 * The conditions on the merged stream `u`. They are written once, on the union's columns, never inside a branch (a
 * WHERE in a branch keeps Postgres from merging the branches' ordered index reads): so the tree (and organisation,
 * consumer) is a constant of the whole stream, each table's index is read in (created_at, id) order, and the two are
 * merged. The impact partner, only with a consumer reference here (else `partnerPageQuery`), is checked on each row
 * read (a reversal's entries are its allocation's).
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
  if (filter.consumerReference !== undefined) where.push(sql`u.consumer_reference = ${filter.consumerReference}`)
  if (filter.impactPartnerId !== undefined) {
    where.push(sql`u.entries @> ${JSON.stringify([{ impactPartnerId: filter.impactPartnerId }])}::jsonb`)
  }
  if (filter.profitShareFromLevel !== undefined) {
    where.push(sql`u.profit_share IS NOT NULL`)
    if (filter.profitShareFromLevel > 0) where.push(sql`(u.profit_share->-1->>0)::int >= ${filter.profitShareFromLevel}`)
  }
  if (page.after) where.push(sql`(u.funds_date_time, u.record_id) > (${page.after.time}::timestamptz, ${page.after.id}::uuid)`)
  if (page.before) where.push(sql`(u.funds_date_time, u.record_id) < (${page.before.time}::timestamptz, ${page.before.id}::uuid)`)
  return where
}

/** The partner-led reading applies: a partner filter, unless a consumer reference leads (see `partnerPageQuery`). */
const partnerLed = (filter: ImpactRecordFilter): boolean => filter.impactPartnerId !== undefined && filter.consumerReference === undefined

/**
 * A page filtered by impact partner: an ordered range read of that partner's rows of the tree in impact_record_partners
 * (primary key (impact_partner_id, root_organisation_id, funds_date_time, record_id)), stopped at LIMIT, each row then
 * joined to its allocation by primary key. So a page costs its own size however rare the partner. Organisations are a
 * row filter on the partner rows (they carry organisation_id). With a consumer reference too, the consumer-led stream
 * reads fewer rows (a consumer has few records) and checks the partner on each: `partnerLed` sends that to `pageQuery`.
 * A row is a reversal's when its record id is not its allocation's.
 */
function partnerPageQuery(page: ImpactRecordPage): RawBuilder<RecordRow> {
  const { filter } = page
  const order = page.direction === 'forward' ? sql`ASC` : sql`DESC`
  const where: RawBuilder<unknown>[] = [
    sql`x.impact_partner_id = ${filter.impactPartnerId}::uuid`,
    sql`x.root_organisation_id = ${filter.rootOrganisationId}::uuid`,
    sql`x.funds_date_time >= ${filter.from}::timestamptz`,
    sql`x.funds_date_time < ${filter.to}::timestamptz`,
  ]
  const orgs = filter.organisationIds
  if (orgs !== undefined && orgs.length === 1) where.push(sql`x.organisation_id = ${orgs[0]}::uuid`)
  else if (orgs !== undefined) where.push(sql`x.organisation_id = ANY(${[...orgs]}::uuid[])`)
  if (page.after) where.push(sql`(x.funds_date_time, x.record_id) > (${page.after.time}::timestamptz, ${page.after.id}::uuid)`)
  if (page.before) where.push(sql`(x.funds_date_time, x.record_id) < (${page.before.time}::timestamptz, ${page.before.id}::uuid)`)
  return sql<RecordRow>`
    SELECT p.record_id, p.funds_date_time::text AS position_time,
           CASE WHEN p.record_id <> p.allocation_id THEN p.record_id END AS reversal_id,
           CASE WHEN p.record_id <> p.allocation_id THEN (extract(epoch FROM p.funds_date_time) * 1000)::float8 END AS reversal_created_at,
           ${ALLOCATION_COLUMNS}
    FROM (
      SELECT x.funds_date_time, x.record_id, x.allocation_id
      FROM impact_record_partners x
      WHERE ${sql.join(where, sql` AND `)}
      ORDER BY x.funds_date_time ${order}, x.record_id ${order}
      LIMIT ${page.limit}
    ) AS p
    JOIN allocations a ON a.id = p.allocation_id
    ORDER BY p.funds_date_time ${order}, p.record_id ${order}`
}

/**
 * The query of one page. Inside: two ordered index range reads (allocations, reversals) merged (Merge Append) and cut
 * at LIMIT, so a page reads about its own size whatever the tables hold. Outside: each of those few rows joined to its
 * allocation by primary key (a nested loop keeps their order, so nothing is sorted).
 */
function pageQuery(page: ImpactRecordPage): RawBuilder<RecordRow> {
  if (partnerLed(page.filter)) return partnerPageQuery(page)
  const order = page.direction === 'forward' ? sql`ASC` : sql`DESC`
  return sql<RecordRow>`
    SELECT p.record_id, p.funds_date_time::text AS position_time, p.reversal_id,
           (extract(epoch FROM p.reversal_created_at) * 1000)::float8 AS reversal_created_at, ${ALLOCATION_COLUMNS}
    FROM (
      SELECT u.funds_date_time, u.record_id, u.allocation_id, u.reversal_id, u.reversal_created_at
      FROM (
        SELECT a.root_organisation_id, a.organisation_id, a.consumer_reference, a.entries, a.profit_share,
               a.created_at AS funds_date_time, a.id AS record_id, a.id AS allocation_id, NULL::uuid AS reversal_id,
               NULL::timestamptz AS reversal_created_at
        FROM allocations a
        UNION ALL
        SELECT r.root_organisation_id, r.organisation_id, r.consumer_reference,
               (SELECT ra.entries FROM allocations ra WHERE ra.id = r.allocation_id),
               (SELECT ra.profit_share FROM allocations ra WHERE ra.id = r.allocation_id), r.created_at, r.id, r.allocation_id,
               r.id, r.created_at
        FROM allocation_reversals r
      ) AS u
      WHERE ${sql.join(streamConditions(page), sql` AND `)}
      ORDER BY u.funds_date_time ${order}, u.record_id ${order}
      LIMIT ${page.limit}
    ) AS p
    JOIN allocations a ON a.id = p.allocation_id
    ORDER BY p.funds_date_time ${order}, p.record_id ${order}`
}

/**
 * One page of records in (funds date-time, id) order (newest first when reading backward), at most `limit` rows.
 * The plan has no Sort node: each scan reads its index in order and stops once the page is full.
 */
export async function findImpactRecords(db: Kysely<Database>, page: ImpactRecordPage): Promise<StoredImpactRecord[]> {
  const { rows } = await pageQuery(page).execute(db)
  return rows.map(recordFromRow)
}

/** The plan of a page's query (EXPLAIN, or EXPLAIN ANALYZE), for the benchmark's checks that no page sorts. */
export async function explainImpactRecords(db: Kysely<Database>, page: ImpactRecordPage, analyze = false): Promise<string[]> {
  const { rows } = await sql<{ 'QUERY PLAN': string }>`EXPLAIN ${analyze ? sql`(ANALYZE, BUFFERS)` : sql``} ${pageQuery(page)}`.execute(db)
  return rows.map((r) => r['QUERY PLAN'])
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
    FROM allocation_reversals r JOIN allocations a ON a.id = r.allocation_id WHERE r.id = ANY(${[...ids]}::uuid[])`.execute(db)
  return rows.map(recordFromRow)
}

/** Where a record sits in the stream (for a cursor), with its organisation and tree; undefined when unknown. */
export async function findImpactRecordPosition(
  db: Kysely<Database>,
  id: string,
): Promise<(ImpactRecordPosition & { organisationId: string; rootOrganisationId: string }) | undefined> {
  const { rows } = await sql<{ time: string; id: string; organisation_id: string; root_organisation_id: string }>`
    SELECT created_at::text AS time, id, organisation_id, root_organisation_id FROM allocations WHERE id = ${id}::uuid
    UNION ALL
    SELECT created_at::text, id, organisation_id, root_organisation_id FROM allocation_reversals WHERE id = ${id}::uuid`.execute(db)
  const row = rows[0]
  return row && { time: row.time, id: row.id, organisationId: row.organisation_id, rootOrganisationId: row.root_organisation_id }
}
