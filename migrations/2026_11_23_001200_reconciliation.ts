import { sql, type Kysely } from 'kysely'

// Frozen: never edit after it has landed; add a new migration instead.
export async function up(db: Kysely<any>): Promise<void> {
  // The top of an organisation's tree (parent_id never changes once created). Called by the allocation INSERT itself,
  // so recording an allocation's tree costs no extra round trip.
  await sql`
    CREATE FUNCTION organisation_root(organisation uuid) RETURNS uuid LANGUAGE sql STABLE PARALLEL SAFE AS $$
      WITH RECURSIVE up AS (
        SELECT id, parent_id, 0 AS depth FROM organisations WHERE id = organisation
        UNION ALL
        SELECT o.id, o.parent_id, up.depth + 1 FROM organisations o JOIN up ON o.id = up.parent_id WHERE up.depth < 32
      )
      SELECT id FROM up ORDER BY depth DESC LIMIT 1
    $$`.execute(db)
  // What a reconciliation record needs that the allocation row did not keep: the tree it belongs to, the organisation
  // whose key collected the funds, and the quote's consumer reference and merchant (copied: quotes are not read).
  await sql`
    ALTER TABLE allocations
      ADD COLUMN root_organisation_id uuid,
      ADD COLUMN collection_organisation_id uuid,
      ADD COLUMN consumer_reference text,
      ADD COLUMN merchant jsonb`.execute(db)
  await sql`
    UPDATE allocations a SET
      root_organisation_id = organisation_root(a.organisation_id),
      collection_organisation_id = a.organisation_id,
      consumer_reference = q.request::json->'consumer'->>'reference',
      merchant = CASE WHEN json_typeof(q.request::json->'merchant') = 'object' THEN (q.request::json->'merchant')::jsonb END
    FROM quotes q WHERE q.id = a.quote_id`.execute(db)
  await sql`
    ALTER TABLE allocations
      ALTER COLUMN root_organisation_id SET NOT NULL,
      ALTER COLUMN collection_organisation_id SET NOT NULL`.execute(db)
  // A reversal is a record of its own: it carries what its filters need, copied from its allocation when written.
  await sql`
    ALTER TABLE allocation_reversals
      ADD COLUMN root_organisation_id uuid,
      ADD COLUMN consumer_reference text`.execute(db)
  await sql`
    UPDATE allocation_reversals r SET root_organisation_id = a.root_organisation_id, consumer_reference = a.consumer_reference
    FROM allocations a WHERE a.id = r.allocation_id`.execute(db)
  await sql`ALTER TABLE allocation_reversals ALTER COLUMN root_organisation_id SET NOT NULL`.execute(db)
  // Keyset pages in (created_at, id) order, one index per scope a list can have: the whole tree, one organisation,
  // one consumer within the tree. Each ends in (created_at, id), so a page is an index range read in order (no Sort).
  for (const table of ['allocations', 'allocation_reversals']) {
    await sql`CREATE INDEX ${sql.id(`${table}_root_time_idx`)} ON ${sql.table(table)} (root_organisation_id, created_at, id)`.execute(db)
    await sql`CREATE INDEX ${sql.id(`${table}_organisation_time_idx`)} ON ${sql.table(table)} (organisation_id, created_at, id)`.execute(db)
    await sql`CREATE INDEX ${sql.id(`${table}_consumer_time_idx`)} ON ${sql.table(table)} (root_organisation_id, consumer_reference, created_at, id)`.execute(
      db,
    )
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['allocations', 'allocation_reversals']) {
    for (const suffix of ['root_time_idx', 'organisation_time_idx', 'consumer_time_idx']) {
      await sql`DROP INDEX ${sql.id(`${table}_${suffix}`)}`.execute(db)
    }
  }
  await sql`ALTER TABLE allocation_reversals DROP COLUMN root_organisation_id, DROP COLUMN consumer_reference`.execute(db)
  await sql`
    ALTER TABLE allocations
      DROP COLUMN root_organisation_id, DROP COLUMN collection_organisation_id, DROP COLUMN consumer_reference, DROP COLUMN merchant`.execute(
    db,
  )
  await sql`DROP FUNCTION organisation_root(uuid)`.execute(db)
}
