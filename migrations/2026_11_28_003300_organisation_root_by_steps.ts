import { sql, type Kysely } from 'kysely'

// Frozen: never edit after it has landed; add a new migration instead.
// organisation_root, which every allocation INSERT calls once per allocation, walks up the tree one indexed read per
// level instead of running a recursive CTE: the CTE's plan is kept by PL/pgSQL, but its executor is set up again on
// every call (a recursive union, a sort and a limit), which cost more than the one or two reads a tree of a merchant
// and its PSP takes (docs/write-costs.md, "The top of a tree by steps"). The answer is the same: the organisation's
// highest ancestor within 32 steps up; the organisation itself when it has no parent; the last one found when a
// parent is missing; NULL for an unknown organisation.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE OR REPLACE FUNCTION organisation_root(organisation uuid) RETURNS uuid LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
    DECLARE
      current uuid := organisation;
      parent uuid;
      next_parent uuid;
    BEGIN
      SELECT o.parent_id INTO parent FROM organisations o WHERE o.id = current;
      IF NOT FOUND THEN
        RETURN NULL;
      END IF;
      FOR step IN 1..32 LOOP
        EXIT WHEN parent IS NULL;
        SELECT o.parent_id INTO next_parent FROM organisations o WHERE o.id = parent;
        EXIT WHEN NOT FOUND;
        current := parent;
        parent := next_parent;
      END LOOP;
      RETURN current;
    END
    $$`.execute(db)
}

// As 002500 made it.
export async function down(db: Kysely<any>): Promise<void> {
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
}
