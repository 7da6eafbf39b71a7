import { sql, type Kysely } from 'kysely'

// Frozen: never edit after it has landed; add a new migration instead.
// allocations.entries becomes compact like allocations.profit_share (docs/write-costs.md): one positional array per line
// instead of an object with ten named fields (the names were most of the row's bytes, and every byte is WAL):
//   [kind, impactPartnerId, projectId, quantityTonnes, impactAmount, impactSalesTaxRate, impactSalesTaxAmount,
//    serviceFeeAmount, serviceFeeSalesTaxRate, serviceFeeSalesTaxAmount]
// kind is 'cr' (credit) or 'co' (contribution, whose projectId and quantityTonnes are null). Values are moved as jsonb
// values, never through text or numeric: amounts stay the decimal strings they were, and `down` rebuilds the very same
// objects. The balance CHECK's function and the allocation_entries view read the new shape (the view's columns do not
// change). Every allocation row is rewritten in the migration's transaction: on a large ledger, a maintenance window.

/** The fields of an old line at positions 1 to 9 of a new one (kind, coded, is position 0). */
const FIELDS = [
  'impactPartnerId',
  'projectId',
  'quantityTonnes',
  'impactAmount',
  'impactSalesTaxRate',
  'impactSalesTaxAmount',
  'serviceFeeAmount',
  'serviceFeeSalesTaxRate',
  'serviceFeeSalesTaxAmount',
]

/** An old line (an object) as a new one (an array); an unknown kind becomes null, which the round trip below refuses. */
const toArray = (line: string) =>
  `jsonb_build_array(CASE ${line}->>'kind' WHEN 'credit' THEN 'cr' WHEN 'contribution' THEN 'co' END, ` +
  `${FIELDS.map((f) => `${line}->'${f}'`).join(', ')})`

/** A new line (an array) as an old one (an object). */
const toObject = (line: string) =>
  `jsonb_build_object('kind', CASE ${line}->>0 WHEN 'cr' THEN 'credit' WHEN 'co' THEN 'contribution' END, ` +
  `${FIELDS.map((f, i) => `'${f}', ${line}->${i + 1}`).join(', ')})`

/** `entries` with each line converted, in order (`alias` names the lines, so that conversions nest). */
const converted = (entries: string, convert: (line: string) => string, alias: string) =>
  `(SELECT jsonb_agg(${convert(`${alias}.line`)} ORDER BY ${alias}.n) FROM jsonb_array_elements(${entries}) WITH ORDINALITY AS ${alias}(line, n))`

/**
 * Refuses, before anything changes, when a row's entries would not come back exactly (as text) from converting them
 * and back: a missing or extra field, an unknown kind, a line of the wrong length. So each direction loses nothing.
 */
async function refuseInexact(db: Kysely<any>, there: (line: string) => string, back: (line: string) => string): Promise<void> {
  const roundTrip = converted(converted('a.entries', there, 'x'), back, 'y')
  const { rows } = await sql<{ id: string }>`
    SELECT a.id FROM allocations a WHERE ${sql.raw(roundTrip)}::text IS DISTINCT FROM a.entries::text LIMIT 3`.execute(db)
  if (rows.length > 0) {
    throw new Error(`allocations whose entries this migration cannot convert exactly exist (${rows.map((r) => r.id).join(', ')}, …)`)
  }
}

export async function up(db: Kysely<any>): Promise<void> {
  await refuseInexact(db, toArray, toObject)
  // Replaced before the rows are converted: the UPDATE checks every converted row against it (each one balanced, and
  // shaped: a line of ten elements with a known kind, since positions without names are misread silently otherwise).
  await sql`
    CREATE OR REPLACE FUNCTION allocation_entries_balance(entries jsonb, credits_amount numeric, contribution_amount numeric)
    RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
      SELECT coalesce(sum(t) FILTER (WHERE k = 'cr'), 0) = coalesce(credits_amount, 0)
         AND coalesce(sum(t) FILTER (WHERE k = 'co'), 0) = coalesce(contribution_amount, 0)
         AND bool_and(shaped)
      FROM (
        SELECT e->>0 AS k,
               (e->>4)::numeric + (e->>6)::numeric + (e->>7)::numeric + (e->>9)::numeric AS t,
               CASE WHEN jsonb_typeof(e) = 'array' THEN jsonb_array_length(e) = 10 AND e->>0 IN ('cr', 'co') ELSE false END AS shaped
        FROM jsonb_array_elements(entries) AS e
      ) AS parts
    $$`.execute(db)
  // The partitioned parent: Postgres updates every month's rows.
  await sql.raw(`UPDATE allocations a SET entries = ${converted('a.entries', toArray, 'x')}`).execute(db)
  // Replaced, not dropped and made again: whatever was granted on the view stays.
  await sql`
    CREATE OR REPLACE VIEW allocation_entries AS
    SELECT a.id AS allocation_id,
           (e.position - 1)::int AS position,
           CASE e.line->>0 WHEN 'cr' THEN 'credit' WHEN 'co' THEN 'contribution' END AS kind,
           (e.line->>2)::uuid AS project_id,
           (e.line->>1)::uuid AS impact_partner_id,
           (e.line->>4)::numeric AS impact_amount,
           (e.line->>6)::numeric AS impact_sales_tax_amount,
           (e.line->>5)::numeric AS impact_sales_tax_rate,
           (e.line->>7)::numeric AS service_fee_amount,
           (e.line->>9)::numeric AS service_fee_sales_tax_amount,
           (e.line->>8)::numeric AS service_fee_sales_tax_rate,
           (e.line->>3)::numeric AS quantity_tonnes
    FROM allocations a CROSS JOIN LATERAL jsonb_array_elements(a.entries) WITH ORDINALITY AS e(line, position)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await refuseInexact(db, toObject, toArray)
  // The function and the view exactly as migrations/2026_11_21_000400_funds_allocations.ts made them.
  await sql`
    CREATE OR REPLACE FUNCTION allocation_entries_balance(entries jsonb, credits_amount numeric, contribution_amount numeric)
    RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
      SELECT coalesce(sum(t) FILTER (WHERE k = 'credit'), 0) = coalesce(credits_amount, 0)
         AND coalesce(sum(t) FILTER (WHERE k = 'contribution'), 0) = coalesce(contribution_amount, 0)
      FROM (
        SELECT e->>'kind' AS k,
               (e->>'impactAmount')::numeric + (e->>'impactSalesTaxAmount')::numeric
             + (e->>'serviceFeeAmount')::numeric + (e->>'serviceFeeSalesTaxAmount')::numeric AS t
        FROM jsonb_array_elements(entries) AS e
      ) AS parts
    $$`.execute(db)
  await sql.raw(`UPDATE allocations a SET entries = ${converted('a.entries', toObject, 'x')}`).execute(db)
  await sql`
    CREATE OR REPLACE VIEW allocation_entries AS
    SELECT a.id AS allocation_id,
           (e.position - 1)::int AS position,
           e.entry->>'kind' AS kind,
           (e.entry->>'projectId')::uuid AS project_id,
           (e.entry->>'impactPartnerId')::uuid AS impact_partner_id,
           (e.entry->>'impactAmount')::numeric AS impact_amount,
           (e.entry->>'impactSalesTaxAmount')::numeric AS impact_sales_tax_amount,
           (e.entry->>'impactSalesTaxRate')::numeric AS impact_sales_tax_rate,
           (e.entry->>'serviceFeeAmount')::numeric AS service_fee_amount,
           (e.entry->>'serviceFeeSalesTaxAmount')::numeric AS service_fee_sales_tax_amount,
           (e.entry->>'serviceFeeSalesTaxRate')::numeric AS service_fee_sales_tax_rate,
           (e.entry->>'quantityTonnes')::numeric AS quantity_tonnes
    FROM allocations a CROSS JOIN LATERAL jsonb_array_elements(a.entries) WITH ORDINALITY AS e(entry, position)`.execute(db)
}
