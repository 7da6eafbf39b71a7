import { sql, type Kysely } from 'kysely'

// Frozen: never edit after it has landed; add a new migration instead.
// An allocation's or a reversal's webhook event becomes a small row (docs/webhooks.md, "Events"): the record it
// announces (source_id), its type and time, and the one figure of its body that the ledger does not keep (the quote's
// footprint, for ekko-format bodies). Its body is rendered from the record when its first delivery is claimed and is
// stored on that delivery, so every retry sends the same bytes. Such an event is written only when an endpoint
// subscribes to it. Events written before keep their bodies (bodies stay nullable for them and for test events).
// The (organisation_id, created_at) index served only the Hub's lookup of an allocation's events, which now reads
// source_id.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE webhook_events ADD COLUMN source_id uuid, ADD COLUMN quote_co2e_grams numeric`.execute(db)
  await sql`ALTER TABLE webhook_events ALTER COLUMN body DROP NOT NULL`.execute(db)
  await sql`
    UPDATE webhook_events
    SET source_id = COALESCE(body::jsonb->'data'->>'reversalId', body::jsonb->'data'->>'fundsAllocationId')::uuid
    WHERE type IN ('allocation.created', 'allocation.reversed')`.execute(db)
  // An event has its body or the record to render it from.
  await sql`ALTER TABLE webhook_events ADD CONSTRAINT webhook_events_body_or_source CHECK (body IS NOT NULL OR source_id IS NOT NULL)`.execute(
    db,
  )
  await sql`DROP INDEX webhook_events_organisation_id_created_at_idx`.execute(db)
  await sql`CREATE INDEX webhook_events_source_id_idx ON webhook_events (source_id)`.execute(db)
  // The body is stored with the format it was rendered in: an endpoint switched to another format gets it re-rendered.
  await sql`ALTER TABLE webhook_deliveries ADD COLUMN body text, ADD COLUMN body_format text CHECK (body_format IN ('standard', 'ekko'))`.execute(
    db,
  )
}

export async function down(db: Kysely<any>): Promise<void> {
  // The old schema requires a body on every event, and only this version can render one: refuse before changing anything.
  const missing = await sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_events WHERE body IS NULL`.execute(db)
  if ((missing.rows[0]?.n ?? 0) > 0) {
    throw new Error('webhook events without a stored body exist: this migration cannot be undone on this database')
  }
  await sql`ALTER TABLE webhook_deliveries DROP COLUMN body, DROP COLUMN body_format`.execute(db)
  await sql`DROP INDEX webhook_events_source_id_idx`.execute(db)
  await sql`CREATE INDEX webhook_events_organisation_id_created_at_idx ON webhook_events (organisation_id, created_at)`.execute(db)
  await sql`ALTER TABLE webhook_events DROP CONSTRAINT webhook_events_body_or_source`.execute(db)
  await sql`ALTER TABLE webhook_events ALTER COLUMN body SET NOT NULL`.execute(db)
  await sql`ALTER TABLE webhook_events DROP COLUMN source_id, DROP COLUMN quote_co2e_grams`.execute(db)
}
