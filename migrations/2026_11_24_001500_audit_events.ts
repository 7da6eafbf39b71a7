import { sql, type Kysely } from 'kysely'

// Frozen: never edit after it has landed; add a new migration instead.
// The audit log: who changed keys, webhooks, origins, the IP allowlist, users and organisations, and who signed in.
// Append-only in the database itself: triggers refuse UPDATE, DELETE and TRUNCATE for every role (superusers
// included), and the role canopy_app (for deployments that run the API as a non-owner) is granted only SELECT and
// INSERT. No foreign keys: an event outlives what it describes (a removed user, a deleted endpoint).
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE audit_events (
      id uuid PRIMARY KEY,
      organisation_id uuid NOT NULL,
      type text NOT NULL CHECK (type ~ '^[a-z_]+\\.[a-z_]+$' AND char_length(type) <= 100),
      actor_type text NOT NULL CHECK (actor_type IN ('user', 'apiKey', 'operator')),
      actor_id uuid,
      actor_label text NOT NULL CHECK (char_length(actor_label) <= 320),
      ip text CHECK (char_length(ip) <= 64),
      changes jsonb NOT NULL DEFAULT '{}'::jsonb,
      created_at timestamptz NOT NULL
    )`.execute(db)
  // Pages of one organisation's events, newest first; the tree's pages read one range per organisation.
  await sql`CREATE INDEX audit_events_organisation_created_idx ON audit_events (organisation_id, created_at DESC, id DESC)`.execute(db)
  await sql`
    CREATE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'audit_events is append-only: % is refused', TG_OP USING ERRCODE = 'insufficient_privilege';
    END
    $$`.execute(db)
  await sql`
    CREATE TRIGGER audit_events_no_update_or_delete BEFORE UPDATE OR DELETE ON audit_events
      FOR EACH ROW EXECUTE FUNCTION audit_events_append_only()`.execute(db)
  await sql`
    CREATE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON audit_events
      FOR EACH STATEMENT EXECUTE FUNCTION audit_events_append_only()`.execute(db)
  await sql`REVOKE UPDATE, DELETE, TRUNCATE ON audit_events FROM PUBLIC`.execute(db)
  // A role of the cluster: created once (another database of the cluster may have made it already), skipped where
  // the migrating role may not create roles (a managed Postgres); the triggers hold either way.
  await sql`
    DO $$
    BEGIN
      BEGIN
        CREATE ROLE canopy_app NOLOGIN;
      EXCEPTION WHEN duplicate_object OR insufficient_privilege OR unique_violation THEN NULL;
      END;
      IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'canopy_app') THEN
        GRANT SELECT, INSERT ON audit_events TO canopy_app;
        REVOKE UPDATE, DELETE, TRUNCATE ON audit_events FROM canopy_app;
      END IF;
    END
    $$`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE audit_events`.execute(db)
  await sql`DROP FUNCTION audit_events_append_only()`.execute(db)
}
