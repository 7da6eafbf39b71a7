import { sql, type Kysely } from 'kysely'

// Frozen: never edit after it has landed; add a new migration instead.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE sessions (
      id uuid PRIMARY KEY,
      organisation_id uuid NOT NULL REFERENCES organisations (id),
      quote_id uuid NOT NULL REFERENCES quotes (id),
      kind text NOT NULL CHECK (kind IN ('post-purchase', 'checkout')),
      sdk_variant text CHECK (sdk_variant IN ('embedded', 'takeover')),
      impact_type text NOT NULL CHECK (impact_type IN ('carbon', 'nature')),
      client_secret_hash bytea NOT NULL UNIQUE CHECK (octet_length(client_secret_hash) = 32),
      expires_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL,
      CHECK ((kind = 'post-purchase') = (sdk_variant IS NOT NULL)),
      CHECK (expires_at > created_at)
    )`.execute(db)
  await sql`CREATE INDEX sessions_quote_id_idx ON sessions (quote_id)`.execute(db)
  await sql`CREATE INDEX sessions_organisation_id_created_at_idx ON sessions (organisation_id, created_at)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE sessions`.execute(db)
}
