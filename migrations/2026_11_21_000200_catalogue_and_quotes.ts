import { sql, type Kysely } from 'kysely'

// Frozen: never edit after it has landed; add a new migration instead.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE impact_partners (
      id uuid PRIMARY KEY,
      kind text NOT NULL CHECK (kind IN ('credits', 'contribution')),
      name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
      short_description text NOT NULL,
      long_description text,
      website text,
      images jsonb NOT NULL DEFAULT '{}'::jsonb,
      priority integer NOT NULL DEFAULT 0,
      active boolean NOT NULL DEFAULT true,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db)
  await sql`
    CREATE TABLE projects (
      id uuid PRIMARY KEY,
      impact_partner_id uuid NOT NULL REFERENCES impact_partners (id),
      name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
      short_description text NOT NULL,
      long_description text,
      type text NOT NULL DEFAULT 'carbonCredits',
      country_code char(3),
      state text,
      price numeric(14, 4) NOT NULL CHECK (price >= 0),
      price_currency char(3) NOT NULL,
      priority integer NOT NULL DEFAULT 0,
      weight numeric(12, 6) CHECK (weight IS NULL OR weight > 0),
      active boolean NOT NULL DEFAULT true,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db)
  await sql`CREATE INDEX projects_impact_partner_id_idx ON projects (impact_partner_id)`.execute(db)
  await sql`
    CREATE TABLE organisation_impact_partners (
      organisation_id uuid NOT NULL REFERENCES organisations (id),
      impact_partner_id uuid NOT NULL REFERENCES impact_partners (id),
      PRIMARY KEY (organisation_id, impact_partner_id)
    )`.execute(db)
  await sql`
    CREATE TABLE emission_factors (
      id text PRIMARY KEY CHECK (char_length(id) BETWEEN 1 AND 100),
      kind text NOT NULL CHECK (kind IN ('carbon', 'nature')),
      mcc_from integer NOT NULL CHECK (mcc_from BETWEEN 0 AND 9999),
      mcc_to integer NOT NULL CHECK (mcc_to BETWEEN 0 AND 9999),
      region text NOT NULL,
      value numeric(20, 10) NOT NULL CHECK (value >= 0),
      base_currency char(3) NOT NULL,
      price_year integer NOT NULL CHECK (price_year BETWEEN 1990 AND 2100),
      source text NOT NULL,
      version text NOT NULL,
      licence text NOT NULL,
      tailpipe_value numeric(20, 10) CHECK (tailpipe_value IS NULL OR tailpipe_value >= 0),
      note text,
      imported_at timestamptz NOT NULL DEFAULT now(),
      CHECK (mcc_from <= mcc_to)
    )`.execute(db)
  await sql`
    CREATE TABLE quotes (
      id uuid PRIMARY KEY,
      organisation_id uuid NOT NULL REFERENCES organisations (id),
      impact_type text NOT NULL CHECK (impact_type IN ('carbon', 'nature')),
      currency_code char(3) NOT NULL,
      tax_liability text NOT NULL CHECK (tax_liability IN ('platform', 'organisation')),
      -- json, not jsonb: stored and read whole, never queried inside, and json is cheaper to write.
      request json NOT NULL,
      locked json NOT NULL,
      created_at timestamptz NOT NULL
    )`.execute(db)
  await sql`CREATE INDEX quotes_organisation_id_created_at_idx ON quotes (organisation_id, created_at)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE quotes`.execute(db)
  await sql`DROP TABLE emission_factors`.execute(db)
  await sql`DROP TABLE organisation_impact_partners`.execute(db)
  await sql`DROP TABLE projects`.execute(db)
  await sql`DROP TABLE impact_partners`.execute(db)
}
