import { sql, type Kysely } from 'kysely'

// Frozen: never edit after it has landed; add a new migration instead.
export async function up(db: Kysely<any>): Promise<void> {
  // The catalogue part of a quote (partner details and the priced projects) is identical for every
  // quote priced from the same catalogue and portfolio: it is stored once, content-addressed by the
  // SHA-256 of its JSON, and immutable. quotes.snapshot_id has no foreign key on purpose: every quote
  // would take a KEY SHARE lock on the same few snapshot rows, serialising inserts on them; the writer
  // stores a snapshot in the same statement as its first quote, and snapshots are never deleted.
  await sql`
    CREATE TABLE quote_snapshots (
      id char(64) PRIMARY KEY CHECK (id ~ '^[0-9a-f]{64}$'),
      body json NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db)
  await sql`ALTER TABLE quotes ADD COLUMN snapshot_id char(64)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE quotes DROP COLUMN snapshot_id`.execute(db)
  await sql`DROP TABLE quote_snapshots`.execute(db)
}
