import { sql, type Kysely } from 'kysely'

// Frozen: never edit after it has landed; add a new migration instead.
export async function up(db: Kysely<any>): Promise<void> {
  // Key rotation: the old key keeps working until expires_at, and points at the key that replaced it.
  await sql`ALTER TABLE api_keys ADD COLUMN expires_at timestamptz`.execute(db)
  await sql`ALTER TABLE api_keys ADD COLUMN replaced_by_id uuid REFERENCES api_keys (id)`.execute(db)
  await sql`
    ALTER TABLE api_keys ADD CONSTRAINT api_keys_replaced_key_expires
      CHECK (replaced_by_id IS NULL OR expires_at IS NOT NULL)`.execute(db)
  // Reference exchange rates imported by operators (ECB: units of currency per 1 EUR), one row per day and currency.
  await sql`
    CREATE TABLE fx_rates (
      rate_date date NOT NULL,
      currency_code char(3) NOT NULL CHECK (currency_code ~ '^[A-Z]{3}$' AND currency_code <> 'EUR'),
      rate numeric NOT NULL CHECK (rate > 0),
      source text NOT NULL,
      imported_at timestamptz NOT NULL,
      PRIMARY KEY (rate_date, currency_code)
    )`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE fx_rates`.execute(db)
  await sql`ALTER TABLE api_keys DROP CONSTRAINT api_keys_replaced_key_expires`.execute(db)
  await sql`ALTER TABLE api_keys DROP COLUMN replaced_by_id`.execute(db)
  await sql`ALTER TABLE api_keys DROP COLUMN expires_at`.execute(db)
}
