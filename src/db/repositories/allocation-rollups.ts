// Rollups of the impact records and the summary's reads (docs/summary.md). Records are immutable and each lives at its
// own time (a reversal at its own created_at, with its allocation's lines negated), so sums over a period never change
// once every record of it is committed: a worker adds the records of [rolled_until, until) to the rows of their periods
// and moves rolled_until, in one transaction. A summary reads, in one snapshot, rows for what is before rolled_until and
// the records for the rest. The allocation and reversal statements are not involved.
import { CompiledQuery, sql, type Kysely, type RawBuilder } from 'kysely'
import type { Database, StoredAllocationEntry } from '../database.js'
import { prepared } from '../prepared.js'
import { decimalTextToMinorUnits, minorUnitsOf } from '../../domain/money.js'
import {
  GRAIN_MS,
  ROLLUP_GRAINS,
  type CurrencyTotals,
  type RollupDimension,
  type RollupGrain,
  type RollupScope,
  type SummaryPiece,
} from '../../domain/summary.js'

/** organisation_id of a tree's own rows, and group_id of `total` rows. */
export const NIL_UUID = '00000000-0000-0000-0000-000000000000'
const EPOCH = sql`timestamptz '1970-01-01 00:00:00+00'`
const INTERVAL: Record<RollupGrain, RawBuilder<unknown>> = {
  week: sql`interval '7 days'`,
  day: sql`interval '1 day'`,
  hour: sql`interval '1 hour'`,
  quarter: sql`interval '15 minutes'`,
}
const DIMENSIONS: readonly RollupDimension[] = ['total', 'partner', 'project']
const SCOPES: readonly RollupScope[] = ['tree', 'organisation']
const GRAINS = Object.keys(GRAIN_MS) as RollupGrain[]

const AMOUNT_COLUMNS = [
  'credits_impact',
  'credits_impact_tax',
  'credits_service_fee',
  'credits_service_fee_tax',
  'credits_quantity_tonnes',
  'contributions_impact',
  'contributions_impact_tax',
  'contributions_service_fee',
  'contributions_service_fee_tax',
] as const
type AmountColumn = (typeof AMOUNT_COLUMNS)[number]
const amountList = (f: (column: AmountColumn) => RawBuilder<unknown>) => sql.join(AMOUNT_COLUMNS.map(f))

// The lines of a record `x` (its allocation's entries as allocation_lines gives them, positional: database.ts,
// StoredAllocationEntry), typed: numeric sums of the decimal strings are exact. kind is the stored code, 'cr' or 'co'.
const LINES = sql`(SELECT l->>0 AS kind, (l->>1)::uuid AS "impactPartnerId", (l->>2)::uuid AS "projectId",
  (l->>3)::numeric AS "quantityTonnes", (l->>4)::numeric AS "impactAmount", (l->>6)::numeric AS "impactSalesTaxAmount",
  (l->>7)::numeric AS "serviceFeeAmount", (l->>9)::numeric AS "serviceFeeSalesTaxAmount" FROM allocation_lines(x.entries) AS l) AS e`
const LINE_FIELD: Record<AmountColumn, { kind: StoredAllocationEntry[0]; field: string }> = {
  credits_impact: { kind: 'cr', field: 'impactAmount' },
  credits_impact_tax: { kind: 'cr', field: 'impactSalesTaxAmount' },
  credits_service_fee: { kind: 'cr', field: 'serviceFeeAmount' },
  credits_service_fee_tax: { kind: 'cr', field: 'serviceFeeSalesTaxAmount' },
  credits_quantity_tonnes: { kind: 'cr', field: 'quantityTonnes' },
  contributions_impact: { kind: 'co', field: 'impactAmount' },
  contributions_impact_tax: { kind: 'co', field: 'impactSalesTaxAmount' },
  contributions_service_fee: { kind: 'co', field: 'serviceFeeAmount' },
  contributions_service_fee_tax: { kind: 'co', field: 'serviceFeeSalesTaxAmount' },
}
const LINE_SUMS = amountList(
  (c) => sql`coalesce(sum(e.${sql.ref(LINE_FIELD[c].field)}) FILTER (WHERE e.kind = ${sql.lit(LINE_FIELD[c].kind)}), 0) AS ${sql.ref(c)}`,
)

/**
 * One row per group of a record's lines for a dimension, with the sums of those lines (raw SQL: a lateral subquery
 * over the lines' elements). `total`: one row for all lines; `partner`: one per impact partner (a credit line carries its
 * project's partner); `project`: one per project of its credit lines.
 */
function groupsOfRecord(dimension: RollupDimension): RawBuilder<unknown> {
  if (dimension === 'total') return sql`SELECT ${NIL_UUID}::uuid AS group_id, ${LINE_SUMS} FROM ${LINES}`
  if (dimension === 'partner') return sql`SELECT e."impactPartnerId" AS group_id, ${LINE_SUMS} FROM ${LINES} GROUP BY e."impactPartnerId"`
  return sql`SELECT e."projectId" AS group_id, ${LINE_SUMS} FROM ${LINES} WHERE e.kind = 'cr' GROUP BY e."projectId"`
}

/** Records counted, and each sum net of reversals, over rows `x` (records) with their groups `g`. */
const SIGNED_SUMS = sql`count(*) FILTER (WHERE NOT x.reversal) AS allocations, count(*) FILTER (WHERE x.reversal) AS reversals,
  ${amountList((c) => sql`sum(CASE WHEN x.reversal THEN -g.${sql.ref(c)} ELSE g.${sql.ref(c)} END) AS ${sql.ref(c)}`)}`

/** The sums of the rows `r` being added together. */
const ADDED_SUMS = sql`sum(r.allocations) AS allocations, sum(r.reversals) AS reversals,
  ${amountList((c) => sql`sum(r.${sql.ref(c)}) AS ${sql.ref(c)}`)}`

// ---------------------------------------------------------------------------------------------------------------------
// The worker's side

/** rolled_until, or null when nothing is rolled up. */
export async function findRolledUntil(db: Kysely<Database>): Promise<Date | null> {
  const row = await db.selectFrom('allocation_rollup_state').select('rolled_until').executeTakeFirst()
  return row?.rolled_until ?? null
}

/**
 * Locks the state row for this transaction and returns rolled_until; undefined when another transaction holds it and
 * `skipLocked` is set (another process is rolling up: this one has nothing to do).
 */
export async function lockRollupState(
  trx: Kysely<Database>,
  options: { skipLocked: boolean },
): Promise<{ rolledUntil: Date | null } | undefined> {
  let query = trx.selectFrom('allocation_rollup_state').select('rolled_until').forUpdate()
  if (options.skipLocked) query = query.skipLocked()
  const row = await query.executeTakeFirst()
  return row && { rolledUntil: row.rolled_until }
}

export async function setRolledUntil(trx: Kysely<Database>, rolledUntil: Date | null, now: Date): Promise<void> {
  await trx.updateTable('allocation_rollup_state').set({ rolled_until: rolledUntil, updated_at: now }).execute()
}

/** Every rollup row, gone (a rebuild starts from nothing; rolled_until is reset by the caller in the same transaction). */
export async function deleteRollups(trx: Kysely<Database>): Promise<void> {
  await trx.deleteFrom('allocation_rollups').execute()
}

/** The time of the earliest record (allocation or reversal), or null when there is none. */
export async function findEarliestRecordTime(db: Kysely<Database>): Promise<Date | null> {
  const { rows } = await sql<{ earliest: Date | null }>`
    SELECT least((SELECT min(created_at) FROM allocations), (SELECT min(created_at) FROM allocation_reversals)) AS earliest`.execute(db)
  const earliest = rows[0]?.earliest ?? null
  return earliest === null ? null : new Date(earliest)
}

/**
 * The time of the first record (allocation or reversal) at or after `from`, or null: one index probe per tree
 * (raw SQL: a lateral LIMIT 1 per root, the (root_organisation_id, created_at) indexes having no other leading column).
 */
export async function findNextRecordTime(db: Kysely<Database>, from: Date): Promise<Date | null> {
  const { rows } = await sql<{ next: Date | null }>`
    SELECT least(min(a.created_at), min(r.created_at)) AS next
    FROM organisations o
    LEFT JOIN LATERAL (SELECT created_at FROM allocations WHERE root_organisation_id = o.id AND created_at >= ${from}::timestamptz
                       ORDER BY created_at LIMIT 1) a ON true
    LEFT JOIN LATERAL (SELECT created_at FROM allocation_reversals WHERE root_organisation_id = o.id AND created_at >= ${from}::timestamptz
                       ORDER BY created_at LIMIT 1) r ON true
    WHERE o.parent_id IS NULL`.execute(db)
  const next = rows[0]?.next ?? null
  return next === null ? null : new Date(next)
}

/** The grains of a scope that a dimension keeps, as a SQL list of dimensions per (scope, grain). */
function rowSets(): { scope: RollupScope; grain: RollupGrain; dimensions: RollupDimension[] }[] {
  return SCOPES.flatMap((scope) =>
    GRAINS.map((grain) => ({ scope, grain, dimensions: DIMENSIONS.filter((d) => ROLLUP_GRAINS[d][scope].includes(grain)) })),
  ).filter((set) => set.dimensions.length > 0)
}

/**
 * Adds the records of [from, to) (every tree) to the rows of their periods: one statement (raw SQL: data-modifying
 * aggregation with jsonb_array_elements, date_bin and an additive ON CONFLICT). The caller holds the state row's lock and
 * moves rolled_until from `from` to `to` in the same transaction, so each record is added exactly once. Returns the
 * rows written.
 */
export async function addRecordsToRollups(trx: Kysely<Database>, from: Date, to: Date): Promise<number> {
  const roots = sql`ARRAY(SELECT o.id FROM organisations o WHERE o.parent_id IS NULL)`
  const periods = rowSets().map(
    ({ scope, grain, dimensions }) => sql`
      SELECT r.root, ${scope === 'tree' ? sql`${NIL_UUID}::uuid` : sql`r.org`} AS organisation_id, r.dimension, r.group_id,
             ${sql.lit(grain)} AS grain, date_bin(${INTERVAL[grain]}, r.quarter, ${EPOCH}) AS period_start, r.currency,
             ${ADDED_SUMS}
      FROM quarters r
      WHERE r.dimension IN (${sql.join(dimensions.map((d) => sql.lit(d)))})
      GROUP BY r.root, 2, r.dimension, r.group_id, 6, r.currency`,
  )
  const { numAffectedRows } = await sql`
    WITH records AS (
      SELECT a.root_organisation_id AS root, a.organisation_id AS org, a.currency_code AS currency, a.created_at AS at,
             false AS reversal, a.entries
      FROM allocations a
      WHERE a.root_organisation_id = ANY(${roots}) AND a.created_at >= ${from}::timestamptz AND a.created_at < ${to}::timestamptz
      UNION ALL
      SELECT r.root_organisation_id, r.organisation_id, a.currency_code, r.created_at, true, a.entries
      FROM allocation_reversals r JOIN allocations a ON a.id = r.allocation_id AND a.created_at = r.allocation_created_at
      WHERE r.root_organisation_id = ANY(${roots}) AND r.created_at >= ${from}::timestamptz AND r.created_at < ${to}::timestamptz
    ),
    quarters AS (
      SELECT x.root, x.org, x.currency, g.dimension, g.group_id, date_bin(${INTERVAL.quarter}, x.at, ${EPOCH}) AS quarter, ${SIGNED_SUMS}
      FROM records x CROSS JOIN LATERAL (
        SELECT 'total' AS dimension, t.* FROM (${groupsOfRecord('total')}) t
        UNION ALL SELECT 'partner', p.* FROM (${groupsOfRecord('partner')}) p
        UNION ALL SELECT 'project', j.* FROM (${groupsOfRecord('project')}) j
      ) g
      GROUP BY x.root, x.org, x.currency, g.dimension, g.group_id, 6
    )
    INSERT INTO allocation_rollups (root_organisation_id, organisation_id, dimension, group_id, grain, period_start, currency_code,
                                    allocations, reversals, ${amountList((c) => sql.ref(c))})
    SELECT * FROM (${sql.join(periods, sql` UNION ALL `)}) AS rows
    ON CONFLICT (root_organisation_id, dimension, organisation_id, grain, period_start, group_id, currency_code) DO UPDATE SET
      allocations = allocation_rollups.allocations + excluded.allocations,
      reversals = allocation_rollups.reversals + excluded.reversals,
      ${amountList((c) => sql`${sql.ref(c)} = allocation_rollups.${sql.ref(c)} + excluded.${sql.ref(c)}`)}`.execute(trx)
  return Number(numAffectedRows ?? 0)
}

/** A UTC day whose stored `total` row for a tree and currency differs from its records (operators' check). */
export interface RollupMismatch {
  rootOrganisationId: string
  currencyCode: string
  day: string
  stored: { allocations: number; reversals: number } | null
  records: { allocations: number; reversals: number } | null
}

/**
 * Every UTC day before rolled_until whose tree-wide `total` day row (counts and every sum) differs from what its
 * records add up to now: a record committed after its time was rolled up (docs/summary.md, "Why it is exact") shows up
 * here. Reads every record before rolled_until: an operator's command, not a request's (raw SQL: a full outer join of
 * the rows against the records' aggregate).
 */
export async function findRollupMismatches(db: Kysely<Database>): Promise<RollupMismatch[]> {
  const rolled = sql`(SELECT rolled_until FROM allocation_rollup_state)`
  const { rows } = await sql<{
    root: string
    currency: string
    day: string
    stored_allocations: number | null
    stored_reversals: number | null
    record_allocations: string | null
    record_reversals: string | null
  }>`
    WITH records AS (
      SELECT a.root_organisation_id AS root, a.currency_code AS currency, a.created_at AS at, false AS reversal, a.entries
      FROM allocations a WHERE a.created_at < ${rolled}
      UNION ALL
      SELECT r.root_organisation_id, a.currency_code, r.created_at, true, a.entries
      FROM allocation_reversals r JOIN allocations a ON a.id = r.allocation_id AND a.created_at = r.allocation_created_at WHERE r.created_at < ${rolled}
    ),
    expected AS (
      SELECT x.root, x.currency, date_bin(${INTERVAL.day}, x.at, ${EPOCH}) AS day, ${SIGNED_SUMS}
      FROM records x CROSS JOIN LATERAL (${groupsOfRecord('total')}) AS g
      GROUP BY 1, 2, 3
    ),
    stored AS (
      SELECT root_organisation_id AS root, currency_code AS currency, period_start AS day, allocations, reversals,
             ${amountList((c) => sql.ref(c))}
      FROM allocation_rollups WHERE dimension = 'total' AND organisation_id = ${NIL_UUID}::uuid AND grain = 'day'
    )
    SELECT coalesce(e.root, s.root)::text AS root, coalesce(e.currency, s.currency) AS currency,
           to_char(coalesce(e.day, s.day) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day,
           s.allocations AS stored_allocations, s.reversals AS stored_reversals,
           e.allocations::text AS record_allocations, e.reversals::text AS record_reversals
    FROM expected e FULL JOIN stored s ON s.root = e.root AND s.currency = e.currency AND s.day = e.day
    WHERE ROW(e.allocations, e.reversals, ${amountList((c) => sql`e.${sql.ref(c)}`)})
          IS DISTINCT FROM ROW(s.allocations, s.reversals, ${amountList((c) => sql`s.${sql.ref(c)}`)})
    ORDER BY 3, 1, 2`.execute(db)
  return rows.map((r) => ({
    rootOrganisationId: r.root,
    currencyCode: r.currency,
    day: r.day,
    stored: r.stored_allocations === null ? null : { allocations: Number(r.stored_allocations), reversals: Number(r.stored_reversals) },
    records: r.record_allocations === null ? null : { allocations: Number(r.record_allocations), reversals: Number(r.record_reversals) },
  }))
}

/** How many rollup rows there are, by grain (for operators). */
export async function countRollupRows(db: Kysely<Database>): Promise<Record<RollupGrain, number>> {
  const rows = await db
    .selectFrom('allocation_rollups')
    .select(['grain', (eb) => eb.fn.countAll<string>().as('rows')])
    .groupBy('grain')
    .execute()
  const counts: Record<RollupGrain, number> = { week: 0, day: 0, hour: 0, quarter: 0 }
  for (const row of rows) counts[row.grain] = Number(row.rows)
  return counts
}

// ---------------------------------------------------------------------------------------------------------------------
// The summary's side

/** What a summary adds up: which tree, which organisations, which dimension, and what each result row is keyed by. */
export interface SummaryRead {
  rootOrganisationId: string
  /** 'tree': the whole tree (its own rows); else these organisations (their rows). */
  organisations: 'tree' | readonly string[]
  dimension: RollupDimension
  /**
   * bucket: the piece's bucket index; organisation, group (partner or project), currency. Organisation and group rows
   * come with their key's label (an organisation's or partner's name; a project's name and country).
   */
  key: 'bucket' | 'organisation' | 'group' | 'currency'
  pieces: readonly SummaryPiece[]
}

/** A key's display name (and a project's country), read with the figures. */
export interface GroupLabel {
  name: string
  countryCode?: string | null
}

/** One result: the totals of one key in one currency, and the key's label when the read has labels and it is known. */
export interface SummaryRow {
  key: string
  totals: CurrencyTotals
  label?: GroupLabel | undefined
}

interface AggregateRow {
  key: string
  currency: string
  allocations: string
  reversals: string
  credits_impact: string
  credits_impact_tax: string
  credits_service_fee: string
  credits_service_fee_tax: string
  credits_quantity_tonnes: string
  contributions_impact: string
  contributions_impact_tax: string
  contributions_service_fee: string
  contributions_service_fee_tax: string
  label_name: string | null
  label_country: string | null
}

const QUANTITY_DIGITS = 6

function totalsOf(row: AggregateRow): CurrencyTotals {
  const digits = minorUnitsOf(row.currency)
  const minor = (value: string) => decimalTextToMinorUnits(value, digits)
  return {
    currencyCode: row.currency,
    allocations: Number(row.allocations),
    reversals: Number(row.reversals),
    credits: {
      impact: minor(row.credits_impact),
      impactTax: minor(row.credits_impact_tax),
      serviceFee: minor(row.credits_service_fee),
      serviceFeeTax: minor(row.credits_service_fee_tax),
      quantityGrams: decimalTextToMinorUnits(row.credits_quantity_tonnes, QUANTITY_DIGITS),
    },
    contributions: {
      impact: minor(row.contributions_impact),
      impactTax: minor(row.contributions_impact_tax),
      serviceFee: minor(row.contributions_service_fee),
      serviceFeeTax: minor(row.contributions_service_fee_tax),
    },
  }
}

/*
 * A summary runs a handful of statement texts at a high rate, so each text is built and compiled once per shape (which
 * parts a read has, its dimension, key and scope) and run as a named prepared statement (src/db/prepared.ts): each
 * connection parses it once, and Postgres may keep a generic plan instead of planning every request. Everything that
 * varies between requests of a shape is a parameter: the builders below take a `value` function, which gives the real
 * value when a statement is run directly (explainSummary) and a Slot when a shape is compiled; a Slot says which read's
 * which value goes in that parameter's place, and readSummaries fills them in per request.
 */

/** The values of a read that its statement takes as parameters. */
interface ReadValues {
  root: string
  dimension: RollupDimension
  organisations: string[]
  rollupBucket: string[]
  rollupSource: string[]
  rollupLo: string[]
  rollupHi: string[]
  recordBucket: string[]
  recordSource: string[]
  recordLo: string[]
  recordHi: string[]
}
type ValueName = keyof ReadValues
type Value = (name: ValueName) => unknown

class Slot {
  constructor(
    readonly read: number,
    readonly name: ValueName,
  ) {}
}

const text = (items: readonly (string | number)[]) => items.map(String)

function valuesOf(read: SummaryRead): ReadValues {
  const rollups = read.pieces.filter((p) => p.source !== 'records')
  const records = read.pieces.filter((p) => p.source === 'records')
  return {
    root: read.rootOrganisationId,
    dimension: read.dimension,
    organisations: read.organisations === 'tree' ? [] : [...read.organisations],
    rollupBucket: text(rollups.map((p) => p.bucket)),
    rollupSource: rollups.map((p) => p.source),
    rollupLo: rollups.map((p) => p.from.toISOString()),
    rollupHi: rollups.map((p) => p.to.toISOString()),
    recordBucket: text(records.map((p) => p.bucket)),
    recordSource: records.map((p) => p.source),
    recordLo: records.map((p) => p.from.toISOString()),
    recordHi: records.map((p) => p.to.toISOString()),
  }
}

/** What a read's statement text depends on; two reads of one shape differ only in their parameters. */
interface ReadShape {
  tree: boolean
  dimension: RollupDimension
  key: SummaryRead['key']
  rollups: boolean
  records: boolean
}

const shapeOf = (read: SummaryRead): ReadShape => ({
  tree: read.organisations === 'tree',
  dimension: read.dimension,
  key: read.key,
  rollups: read.pieces.some((p) => p.source !== 'records'),
  records: read.pieces.some((p) => p.source === 'records'),
})

const shapeKey = (s: ReadShape) => `${s.tree ? 'tree' : 'orgs'} ${s.dimension} ${s.key} ${s.rollups ? 'R' : '-'}${s.records ? 'X' : '-'}`

/** The pieces' arrays, one element per piece (unnest turns them back into rows). */
function piecesTable(value: Value, part: 'rollup' | 'record'): RawBuilder<unknown> {
  return sql`unnest(${value(`${part}Bucket`)}::int[], ${value(`${part}Source`)}::text[],
    ${value(`${part}Lo`)}::timestamptz[], ${value(`${part}Hi`)}::timestamptz[])
    AS p(bucket, source, lo, hi)`
}

/*
 * Both parts read each piece by its own index range: a LATERAL subquery per piece, fenced with OFFSET 0 so that the
 * planner keeps it a parameterised index scan (unfenced, it cannot estimate the unnested ranges and joins a whole
 * tree's rows by hash instead). Generic plans keep that shape: the fences, not the estimates, decide it (docs/summary.md,
 * "Speed").
 */

/** The records of the read's record pieces, summed per key and currency (raw SQL: lateral reads over each record's lines). */
function recordsPart(shape: ReadShape, value: Value): RawBuilder<unknown> {
  const allocationOrgs = shape.tree ? sql`` : sql`AND a.organisation_id = ANY(${value('organisations')}::uuid[])`
  const reversalOrgs = shape.tree ? sql`` : sql`AND r.organisation_id = ANY(${value('organisations')}::uuid[])`
  const key = { bucket: sql`p.bucket::text`, organisation: sql`x.org::text`, group: sql`g.group_id::text`, currency: sql`x.currency` }[
    shape.key
  ]
  return sql`
    SELECT ${key} AS key, x.currency, ${SIGNED_SUMS}
    FROM ${piecesTable(value, 'record')}
    CROSS JOIN LATERAL (
      SELECT a.organisation_id AS org, a.currency_code AS currency, false AS reversal, a.entries
      FROM allocations a
      WHERE a.root_organisation_id = ${value('root')}::uuid AND a.created_at >= p.lo AND a.created_at < p.hi ${allocationOrgs}
      UNION ALL
      SELECT r.organisation_id, a.currency_code, true, a.entries
      FROM allocation_reversals r JOIN allocations a ON a.id = r.allocation_id AND a.created_at = r.allocation_created_at
      WHERE r.root_organisation_id = ${value('root')}::uuid AND r.created_at >= p.lo AND r.created_at < p.hi ${reversalOrgs}
      OFFSET 0
    ) AS x
    CROSS JOIN LATERAL (${groupsOfRecord(shape.dimension)}) AS g
    GROUP BY 1, x.currency`
}

/** The rollup rows of the read's rollup pieces, summed per key and currency. */
function rollupsPart(shape: ReadShape, value: Value): RawBuilder<unknown> {
  const key = {
    bucket: sql`p.bucket::text`,
    organisation: sql`r.organisation_id::text`,
    group: sql`r.group_id::text`,
    currency: sql`r.currency_code`,
  }[shape.key]
  return sql`
    SELECT ${key} AS key, r.currency_code AS currency, ${ADDED_SUMS}
    FROM ${piecesTable(value, 'rollup')}
    CROSS JOIN LATERAL (
      SELECT * FROM allocation_rollups r
      WHERE r.root_organisation_id = ${value('root')}::uuid AND r.dimension = ${value('dimension')}
        AND ${shape.tree ? sql`r.organisation_id = ${NIL_UUID}::uuid` : sql`r.organisation_id = ANY(${value('organisations')}::uuid[])`}
        AND r.grain = p.source AND r.period_start >= p.lo AND r.period_start < p.hi
      OFFSET 0
    ) AS r
    GROUP BY 1, r.currency_code`
}

/** The label of each result key, read in the same statement (no second round trip; the same snapshot). */
function labelJoin(shape: ReadShape): { columns: RawBuilder<unknown>; join: RawBuilder<unknown> } {
  const none = { columns: sql`NULL::text AS label_name, NULL::text AS label_country`, join: sql`` }
  if (shape.key === 'organisation') {
    return {
      columns: sql`l.trading_name AS label_name, NULL::text AS label_country`,
      join: sql`LEFT JOIN organisations l ON l.id = q.key::uuid`,
    }
  }
  if (shape.key !== 'group') return none
  if (shape.dimension === 'partner') {
    return { columns: sql`l.name AS label_name, NULL::text AS label_country`, join: sql`LEFT JOIN impact_partners l ON l.id = q.key::uuid` }
  }
  if (shape.dimension === 'project') {
    return { columns: sql`l.name AS label_name, l.country_code AS label_country`, join: sql`LEFT JOIN projects l ON l.id = q.key::uuid` }
  }
  return none
}

/** The statement of a read: its rollup part and its records part, added together per key and currency, with labels. */
function summaryQuery(shape: ReadShape, value: Value): RawBuilder<AggregateRow> {
  const parts = [...(shape.rollups ? [rollupsPart(shape, value)] : []), ...(shape.records ? [recordsPart(shape, value)] : [])]
  if (parts.length === 0) {
    return sql<AggregateRow>`SELECT NULL::text AS key, NULL::text AS currency, NULL::text AS label_name, NULL::text AS label_country WHERE false`
  }
  const labels = labelJoin(shape)
  return sql<AggregateRow>`
    SELECT q.*, ${labels.columns}
    FROM (
      SELECT s.key, s.currency, sum(s.allocations)::text AS allocations, sum(s.reversals)::text AS reversals,
             ${amountList((c) => sql`sum(s.${sql.ref(c)})::text AS ${sql.ref(c)}`)}
      FROM (${sql.join(parts, sql` UNION ALL `)}) AS s
      GROUP BY s.key, s.currency
    ) AS q
    ${labels.join}`
}

/** The text of a statement of several reads, and its parameters: a Slot for each read's value, or a constant. */
interface Template {
  text: string
  parameters: readonly unknown[]
}

// One entry per combination of read shapes a summary uses (a few dozen at most: src/services/summary.ts).
const templates = new Map<string, Template>()
const MAX_TEMPLATES = 128

/**
 * Several reads in ONE statement (raw SQL: a union of the reads, each tagged, and the state row), compiled with Slots
 * in place of its values.
 */
function templateOf(db: Kysely<Database>, shapes: readonly (ReadShape | undefined)[]): Template {
  const key = shapes.map((s) => (s ? shapeKey(s) : 'none')).join('; ')
  const cached = templates.get(key)
  if (cached) return cached
  const parts = shapes.map((shape, index) =>
    shape === undefined
      ? undefined
      : sql`SELECT ${sql.lit(index)} AS part, q.* FROM (${summaryQuery(shape, (name) => new Slot(index, name))}) AS q`,
  )
  const compiled = sql`
    SELECT -1 AS part, NULL AS key, NULL AS currency, NULL AS allocations, NULL AS reversals,
           ${amountList((c) => sql`NULL AS ${sql.ref(c)}`)}, NULL AS label_name, NULL AS label_country,
           (SELECT (extract(epoch FROM rolled_until) * 1000)::bigint::text FROM allocation_rollup_state) AS rolled_until_ms
    ${sql.join(
      parts.filter((part) => part !== undefined).map((part) => sql`UNION ALL SELECT t.*, NULL FROM (${part}) AS t`),
      sql` `,
    )}`.compile(db)
  const template = { text: prepared(compiled.sql), parameters: compiled.parameters }
  if (templates.size < MAX_TEMPLATES) templates.set(key, template)
  return template
}

/**
 * Several reads in ONE statement (so in one snapshot), with the rolled_until that snapshot sees: the reads were planned
 * for `assumed`, and their rows are exact only if the statement saw that same instant (the worker moves it in the
 * transaction that adds rows). The caller compares and plans again when it moved.
 */
export async function readSummaries(
  db: Kysely<Database>,
  reads: readonly SummaryRead[],
): Promise<{ rolledUntil: Date | null; results: SummaryRow[][] }> {
  const template = templateOf(
    db,
    reads.map((read) => (read.pieces.length === 0 ? undefined : shapeOf(read))),
  )
  const values = reads.map(valuesOf)
  const parameters = template.parameters.map((p) => (p instanceof Slot ? values[p.read]?.[p.name] : p))
  const { rows } = await db.executeQuery<AggregateRow & { part: number; rolled_until_ms: string | null }>(
    CompiledQuery.raw(template.text, parameters),
  )
  const results: SummaryRow[][] = reads.map(() => [])
  let rolledUntilMs: string | null = null
  for (const row of rows) {
    const part = Number(row.part)
    if (part === -1) rolledUntilMs = row.rolled_until_ms
    else results[part]?.push({ key: row.key, totals: totalsOf(row), label: labelOf(row) })
  }
  return { rolledUntil: rolledUntilMs == null ? null : new Date(Number(rolledUntilMs)), results }
}

const labelOf = (row: AggregateRow): GroupLabel | undefined =>
  row.label_name === null
    ? undefined
    : row.label_country === null
      ? { name: row.label_name }
      : { name: row.label_name, countryCode: row.label_country }

/** The plan of a read's statement (EXPLAIN, or EXPLAIN ANALYZE), for the benchmark. */
export async function explainSummary(db: Kysely<Database>, read: SummaryRead, analyze = false): Promise<string[]> {
  const values = valuesOf(read)
  const { rows } = await sql<{ 'QUERY PLAN': string }>`EXPLAIN ${analyze ? sql`(ANALYZE, BUFFERS)` : sql``} ${summaryQuery(
    shapeOf(read),
    (name) => values[name],
  )}`.execute(db)
  return rows.map((r) => r['QUERY PLAN'])
}

/** Every organisation of a tree, active or not (a tree's top key sees them all, as the reconciliation list does). */
export async function findTreeOrganisationIds(db: Kysely<Database>, rootId: string): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    WITH RECURSIVE tree AS (
      SELECT id FROM organisations WHERE id = ${rootId}::uuid
      UNION ALL
      SELECT o.id FROM organisations o JOIN tree t ON o.parent_id = t.id
    )
    SELECT id FROM tree`.execute(db)
  return rows.map((r) => r.id)
}
