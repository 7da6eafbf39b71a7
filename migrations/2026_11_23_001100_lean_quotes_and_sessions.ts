import { sql, type Kysely } from 'kysely'

// Frozen: never edit after it has landed; add a new migration instead.
export async function up(db: Kysely<any>): Promise<void> {
  // Indexes that nothing reads cost an index insert (and its WAL) on every quote and session. Quotes and sessions
  // are read by primary key only; a session's secret is checked against that one session, so the uniqueness of
  // its hash protected nothing. Kept: primary keys, the foreign keys (a quote or session belongs to an existing
  // organisation, a session to an existing quote: tenancy), and the CHECKs.
  await sql`DROP INDEX quotes_organisation_id_created_at_idx`.execute(db)
  await sql`DROP INDEX sessions_organisation_id_created_at_idx`.execute(db)
  await sql`DROP INDEX sessions_quote_id_idx`.execute(db)
  await sql`ALTER TABLE sessions DROP CONSTRAINT sessions_client_secret_hash_key`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE sessions ADD CONSTRAINT sessions_client_secret_hash_key UNIQUE (client_secret_hash)`.execute(db)
  await sql`CREATE INDEX sessions_quote_id_idx ON sessions (quote_id)`.execute(db)
  await sql`CREATE INDEX sessions_organisation_id_created_at_idx ON sessions (organisation_id, created_at)`.execute(db)
  await sql`CREATE INDEX quotes_organisation_id_created_at_idx ON quotes (organisation_id, created_at)`.execute(db)
}
