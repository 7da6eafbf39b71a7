import { sql, type Kysely } from 'kysely'

// Frozen: never edit after it has landed; add a new migration instead.
// Rollups gain a week grain (7 UTC days from the epoch, so from a Thursday) for the tree-wide rows of every dimension
// (docs/summary.md, "Rollups"): a summary over a long window reads a row per week instead of a row per day. The week
// rows are the sums of the day rows already kept (each day row holds its day's records before rolled_until, so a week
// row holds its week's records before rolled_until, as the worker keeps them from now on).
const NIL = '00000000-0000-0000-0000-000000000000'
const AMOUNTS = [
  'credits_impact',
  'credits_impact_tax',
  'credits_service_fee',
  'credits_service_fee_tax',
  'credits_quantity_tonnes',
  'contributions_impact',
  'contributions_impact_tax',
  'contributions_service_fee',
  'contributions_service_fee_tax',
]

export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE allocation_rollups DROP CONSTRAINT allocation_rollups_grain_check`.execute(db)
  await sql`ALTER TABLE allocation_rollups ADD CONSTRAINT allocation_rollups_grain_check CHECK (grain IN ('week', 'day', 'hour', 'quarter'))`.execute(
    db,
  )
  await sql`
    INSERT INTO allocation_rollups (root_organisation_id, dimension, organisation_id, grain, period_start, group_id, currency_code,
                                    allocations, reversals, ${sql.raw(AMOUNTS.join(', '))})
    SELECT root_organisation_id, dimension, organisation_id, 'week',
           date_bin(interval '7 days', period_start, timestamptz '1970-01-01 00:00:00+00'), group_id, currency_code,
           sum(allocations), sum(reversals), ${sql.raw(AMOUNTS.map((c) => `sum(${c})`).join(', '))}
    FROM allocation_rollups
    WHERE grain = 'day' AND organisation_id = ${NIL}::uuid
    GROUP BY root_organisation_id, dimension, organisation_id, 5, group_id, currency_code`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DELETE FROM allocation_rollups WHERE grain = 'week'`.execute(db)
  await sql`ALTER TABLE allocation_rollups DROP CONSTRAINT allocation_rollups_grain_check`.execute(db)
  await sql`ALTER TABLE allocation_rollups ADD CONSTRAINT allocation_rollups_grain_check CHECK (grain IN ('day', 'hour', 'quarter'))`.execute(
    db,
  )
}
