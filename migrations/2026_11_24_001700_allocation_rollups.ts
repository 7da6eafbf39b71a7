import { sql, type Kysely } from 'kysely'

// Frozen: never edit after it has landed; add a new migration instead.
// Rollups of the impact records for GET /funds/allocations/summary (docs/summary.md). Written by a worker, never by the
// allocation or reversal statements: the write path is unchanged. Each row holds the sums of the records of one period
// (a UTC day, hour or quarter-hour) for one tree, organisation (or the whole tree), dimension and currency; the state
// row says up to which instant every row is complete (rolled_until). Both are rebuilt from the records at will.
export async function up(db: Kysely<any>): Promise<void> {
  // organisation_id: the records' organisation, or the nil uuid for the sums of the whole tree.
  // group_id: the impact partner (dimension 'partner'), the project ('project'), or the nil uuid ('total').
  // Amounts are exact sums of the lines' decimal strings (numeric), negated for reversals; total is never stored (it
  // is impact + impactTax + serviceFee + serviceFeeTax). The key leads with what every read fixes (tree, dimension,
  // organisation, grain), then the period, so a summary reads ranges of period_start.
  await sql`
    CREATE TABLE allocation_rollups (
      root_organisation_id uuid NOT NULL,
      dimension text NOT NULL CHECK (dimension IN ('total', 'partner', 'project')),
      organisation_id uuid NOT NULL,
      grain text NOT NULL CHECK (grain IN ('day', 'hour', 'quarter')),
      period_start timestamptz NOT NULL,
      group_id uuid NOT NULL,
      currency_code text NOT NULL,
      allocations integer NOT NULL,
      reversals integer NOT NULL,
      credits_impact numeric NOT NULL,
      credits_impact_tax numeric NOT NULL,
      credits_service_fee numeric NOT NULL,
      credits_service_fee_tax numeric NOT NULL,
      credits_quantity_tonnes numeric NOT NULL,
      contributions_impact numeric NOT NULL,
      contributions_impact_tax numeric NOT NULL,
      contributions_service_fee numeric NOT NULL,
      contributions_service_fee_tax numeric NOT NULL,
      PRIMARY KEY (root_organisation_id, dimension, organisation_id, grain, period_start, group_id, currency_code)
    )`.execute(db)
  // One row. rolled_until NULL: nothing is rolled up yet (every summary reads the records).
  await sql`
    CREATE TABLE allocation_rollup_state (
      id boolean PRIMARY KEY DEFAULT true CHECK (id),
      rolled_until timestamptz,
      updated_at timestamptz
    )`.execute(db)
  await sql`INSERT INTO allocation_rollup_state (id) VALUES (true)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE allocation_rollup_state`.execute(db)
  await sql`DROP TABLE allocation_rollups`.execute(db)
}
