import { sql, type Kysely } from 'kysely'

// Frozen: never edit after it has landed; add a new migration instead.
// The two functions every allocation INSERT calls, the same queries in PL/pgSQL instead of SQL. A SQL function that
// Postgres cannot inline (a recursive CTE, an aggregate) is parsed and planned again in every statement that calls it;
// PL/pgSQL keeps its plan for the session. Measured on an allocation statement: organisation_root 0.26 → 0.07 ms and
// the entries' balance CHECK 0.28 → 0.09 ms of Postgres CPU (docs/write-costs.md, "One statement per new
// allocation"). What they answer is unchanged: the queries are those of 001200 and 002400.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE OR REPLACE FUNCTION organisation_root(organisation uuid) RETURNS uuid LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
    BEGIN
      RETURN (
        WITH RECURSIVE up AS (
          SELECT id, parent_id, 0 AS depth FROM organisations WHERE id = organisation
          UNION ALL
          SELECT o.id, o.parent_id, up.depth + 1 FROM organisations o JOIN up ON o.id = up.parent_id WHERE up.depth < 32
        )
        SELECT id FROM up ORDER BY depth DESC LIMIT 1
      );
    END
    $$`.execute(db)
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
}

// Both exactly as 001200 and 002400 made them.
export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE OR REPLACE FUNCTION organisation_root(organisation uuid) RETURNS uuid LANGUAGE sql STABLE PARALLEL SAFE AS $$
      WITH RECURSIVE up AS (
        SELECT id, parent_id, 0 AS depth FROM organisations WHERE id = organisation
        UNION ALL
        SELECT o.id, o.parent_id, up.depth + 1 FROM organisations o JOIN up ON o.id = up.parent_id WHERE up.depth < 32
      )
      SELECT id FROM up ORDER BY depth DESC LIMIT 1
    $$`.execute(db)
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
}
