import { sql, type Kysely } from 'kysely'

// Frozen: never edit after it has landed; add a new migration instead.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE organisations (
      id uuid PRIMARY KEY,
      parent_id uuid REFERENCES organisations (id),
      trading_name text NOT NULL CHECK (char_length(trading_name) BETWEEN 1 AND 200),
      legal_name text NOT NULL CHECK (char_length(legal_name) BETWEEN 1 AND 200),
      organisation_reference text,
      address jsonb NOT NULL,
      country_code char(3) NOT NULL,
      currency_code char(3) NOT NULL,
      website text,
      mcc char(4) CHECK (mcc ~ '^[0-9]{4}$'),
      service_fee_rate numeric(9, 6) NOT NULL DEFAULT 0.2 CHECK (service_fee_rate >= 0 AND service_fee_rate <= 1),
      tax_liability text NOT NULL DEFAULT 'platform' CHECK (tax_liability IN ('platform', 'organisation')),
      status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'inactive')),
      created_at timestamptz NOT NULL DEFAULT now(),
      CHECK (parent_id IS NULL OR parent_id <> id)
    )`.execute(db)
  await sql`CREATE INDEX organisations_parent_id_idx ON organisations (parent_id)`.execute(db)
  await sql`
    CREATE TABLE api_keys (
      id uuid PRIMARY KEY,
      organisation_id uuid NOT NULL REFERENCES organisations (id),
      mode text NOT NULL CHECK (mode IN ('live', 'test')),
      key_hash bytea NOT NULL UNIQUE CHECK (octet_length(key_hash) = 32),
      prefix text NOT NULL UNIQUE,
      created_at timestamptz NOT NULL DEFAULT now(),
      revoked_at timestamptz
    )`.execute(db)
  await sql`CREATE INDEX api_keys_organisation_id_idx ON api_keys (organisation_id)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE api_keys`.execute(db)
  await sql`DROP TABLE organisations`.execute(db)
}
