import { sql, type Kysely } from 'kysely'

// Frozen: never edit after it has landed; add a new migration instead.
// A line of allocations.entries may now be one string instead of an array of ten (docs/write-costs.md, "Entries as one
// string per line"): the same ten values in the same order, separated by '|', an absent one (a contribution's project
// and tonnes) empty, and the two ids written as their 16 bytes in base64 without its padding (22 characters):
//   cr|<impactPartnerId>|<projectId>|<quantityTonnes>|<impactAmount>|<impactSalesTaxRate>|<impactSalesTaxAmount>|
//   <serviceFeeAmount>|<serviceFeeSalesTaxRate>|<serviceFeeSalesTaxAmount>
// An array of ten strings costs jsonb a header and ten offsets per line besides the text, and an id 36 characters; a
// line as one string saves about 70 B of WAL per line on every allocation. Rows already written keep their arrays:
// nothing is rewritten. Every SQL reader reads lines through allocation_lines(entries), which gives each line as the
// array it always was (a string is split, its ids written as uuids again), so readers name the same positions.

/**
 * The allocation_entries view (columns as migration 002400 made them) over the lines `lines` gives: allocation_lines
 * here, jsonb_array_elements before. Replaced, not dropped and made again: whatever was granted on it stays.
 */
async function replaceEntriesView(db: Kysely<any>, lines: 'allocation_lines' | 'jsonb_array_elements'): Promise<void> {
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
    FROM allocations a CROSS JOIN LATERAL ${sql.raw(lines)}(a.entries) WITH ORDINALITY AS e(line, position)`.execute(db)
}

export async function up(db: Kysely<any>): Promise<void> {
  // One line string as the array it stands for, or NULL when it does not hold exactly ten values. An id that is not 16
  // bytes in base64 fails to decode or cast. PL/pgSQL: its expressions are planned once per session, where a SQL
  // function that Postgres cannot inline (this one could not be: it names its split array eleven times) is planned again
  // by every statement that calls it.
  await sql`
    CREATE FUNCTION allocation_line(line text) RETURNS jsonb LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
    DECLARE
      p text[] := string_to_array(line, '|', '');
    BEGIN
      IF cardinality(p) <> 10 THEN
        RETURN NULL;
      END IF;
      RETURN jsonb_build_array(p[1], encode(decode(p[2] || '==', 'base64'), 'hex')::uuid::text,
        encode(decode(p[3] || '==', 'base64'), 'hex')::uuid::text, p[4], p[5], p[6], p[7], p[8], p[9], p[10]);
    END
    $$`.execute(db)
  // Each line as stored before this migration: an array as it is, a string as allocation_line reads it. Postgres inlines
  // this function into the query that calls it; OFFSET 0 keeps it a subquery there, so that a query naming several
  // positions of a line reads each line once (pulled up, the CASE would be evaluated once per position named).
  await sql`
    CREATE FUNCTION allocation_lines(entries jsonb) RETURNS SETOF jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
      SELECT CASE WHEN jsonb_typeof(e) = 'string' THEN allocation_line(e #>> '{}') ELSE e END
      FROM jsonb_array_elements(entries) AS e
      OFFSET 0
    $$`.execute(db)
  // The balance CHECK's function, as steps instead of a query (a query in a function is started and ended on every
  // call: 22 us a row for two lines, against 11-15 us this way): every line a known kind, ten values (a string's ids
  // readable), amounts present, and the lines of each kind summing to its amount paid.
  await sql`
    CREATE OR REPLACE FUNCTION allocation_entries_balance(entries jsonb, credits_amount numeric, contribution_amount numeric)
    RETURNS boolean LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
    DECLARE
      credits numeric := 0;
      contributions numeric := 0;
      line jsonb;
      p text[];
      id uuid;
      total numeric;
    BEGIN
      IF jsonb_typeof(entries) <> 'array' THEN
        RETURN false;
      END IF;
      FOR i IN 0 .. jsonb_array_length(entries) - 1 LOOP
        line := entries -> i;
        IF jsonb_typeof(line) = 'string' THEN
          p := string_to_array(line #>> '{}', '|', '');
          IF cardinality(p) <> 10 THEN
            RETURN false;
          END IF;
          id := encode(decode(p[2] || '==', 'base64'), 'hex')::uuid;
          IF p[3] IS NOT NULL THEN
            id := encode(decode(p[3] || '==', 'base64'), 'hex')::uuid;
          END IF;
        ELSIF jsonb_typeof(line) = 'array' AND jsonb_array_length(line) = 10 THEN
          p := ARRAY[line->>0, NULL, NULL, NULL, line->>4, NULL, line->>6, line->>7, NULL, line->>9];
        ELSE
          RETURN false;
        END IF;
        total := p[5]::numeric + p[7]::numeric + p[8]::numeric + p[10]::numeric;
        IF total IS NULL THEN
          RETURN false;
        ELSIF p[1] = 'cr' THEN
          credits := credits + total;
        ELSIF p[1] = 'co' THEN
          contributions := contributions + total;
        ELSE
          RETURN false;
        END IF;
      END LOOP;
      RETURN credits = coalesce(credits_amount, 0) AND contributions = coalesce(contribution_amount, 0);
    END
    $$`.execute(db)
  await replaceEntriesView(db, 'allocation_lines')
}

// Lines written as strings become the arrays they stand for (every such row is rewritten: a maintenance window on a
// large ledger); then the view and the CHECK's function as 002400 and 002500 made them.
export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    UPDATE allocations SET entries = (SELECT jsonb_agg(l.line ORDER BY l.n) FROM allocation_lines(entries) WITH ORDINALITY AS l(line, n))
    WHERE EXISTS (SELECT 1 FROM jsonb_array_elements(entries) AS e WHERE jsonb_typeof(e) = 'string')`.execute(db)
  await replaceEntriesView(db, 'jsonb_array_elements')
  await sql`
    CREATE OR REPLACE FUNCTION allocation_entries_balance(entries jsonb, credits_amount numeric, contribution_amount numeric)
    RETURNS boolean LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
    BEGIN
      RETURN (
        SELECT coalesce(sum(t) FILTER (WHERE k = 'cr'), 0) = coalesce(credits_amount, 0)
           AND coalesce(sum(t) FILTER (WHERE k = 'co'), 0) = coalesce(contribution_amount, 0)
           AND bool_and(shaped)
        FROM (
          SELECT e->>0 AS k,
                 (e->>4)::numeric + (e->>6)::numeric + (e->>7)::numeric + (e->>9)::numeric AS t,
                 CASE WHEN jsonb_typeof(e) = 'array' THEN jsonb_array_length(e) = 10 AND e->>0 IN ('cr', 'co') ELSE false END AS shaped
          FROM jsonb_array_elements(entries) AS e
        ) AS parts
      );
    END
    $$`.execute(db)
  await sql`DROP FUNCTION allocation_lines(jsonb)`.execute(db)
  await sql`DROP FUNCTION allocation_line(text)`.execute(db)
}
