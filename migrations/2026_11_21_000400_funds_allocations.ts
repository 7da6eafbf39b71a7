import { sql, type Kysely } from 'kysely'

// Frozen: never edit after it has landed; add a new migration instead.
export async function up(db: Kysely<any>): Promise<void> {
  // An allocation is its own idempotency record: the key is unique per organisation, and the request
  // hash and the exact 201 body are kept with it, so a key is remembered as long as its allocation.
  await sql`
    CREATE TABLE allocations (
      id uuid PRIMARY KEY,
      organisation_id uuid NOT NULL REFERENCES organisations (id),
      quote_id uuid NOT NULL REFERENCES quotes (id),
      idempotency_key text NOT NULL CHECK (char_length(idempotency_key) BETWEEN 1 AND 255),
      request_hash bytea NOT NULL CHECK (octet_length(request_hash) = 32),
      currency_code char(3) NOT NULL,
      credits_amount numeric(20, 4) CHECK (credits_amount > 0),
      contribution_amount numeric(20, 4) CHECK (contribution_amount > 0),
      tax_liability text NOT NULL CHECK (tax_liability IN ('platform', 'organisation')),
      issue_tax_receipt boolean NOT NULL,
      response text NOT NULL,
      created_at timestamptz NOT NULL,
      CONSTRAINT allocations_organisation_idempotency_key_unique UNIQUE (organisation_id, idempotency_key),
      CHECK (credits_amount IS NOT NULL OR contribution_amount IS NOT NULL)
    )`.execute(db)
  await sql`CREATE INDEX allocations_quote_id_idx ON allocations (quote_id)`.execute(db)
  await sql`
    CREATE TABLE allocation_entries (
      allocation_id uuid NOT NULL REFERENCES allocations (id),
      position smallint NOT NULL,
      kind text NOT NULL CHECK (kind IN ('credit', 'contribution')),
      project_id uuid,
      impact_partner_id uuid NOT NULL,
      impact_amount numeric(20, 4) NOT NULL,
      impact_sales_tax_amount numeric(20, 4) NOT NULL,
      impact_sales_tax_rate numeric(12, 10) NOT NULL,
      service_fee_amount numeric(20, 4) NOT NULL,
      service_fee_sales_tax_amount numeric(20, 4) NOT NULL,
      service_fee_sales_tax_rate numeric(12, 10) NOT NULL,
      quantity_tonnes numeric(20, 6),
      PRIMARY KEY (allocation_id, position),
      CHECK ((kind = 'credit') = (project_id IS NOT NULL)),
      CHECK ((kind = 'credit') = (quantity_tonnes IS NOT NULL))
    )`.execute(db)
  await sql`
    CREATE TABLE allocation_reversals (
      id uuid PRIMARY KEY,
      allocation_id uuid NOT NULL UNIQUE REFERENCES allocations (id),
      organisation_id uuid NOT NULL REFERENCES organisations (id),
      response text NOT NULL,
      created_at timestamptz NOT NULL
    )`.execute(db)
  await sql`
    CREATE TABLE tax_receipts (
      id uuid PRIMARY KEY,
      allocation_id uuid NOT NULL UNIQUE REFERENCES allocations (id),
      organisation_id uuid NOT NULL REFERENCES organisations (id),
      consumer_email text NOT NULL,
      payload jsonb NOT NULL,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'failed')),
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz NOT NULL,
      locked_until timestamptz,
      last_error text,
      sent_at timestamptz,
      created_at timestamptz NOT NULL
    )`.execute(db)
  await sql`CREATE INDEX tax_receipts_pending_idx ON tax_receipts (next_attempt_at) WHERE status = 'pending'`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE tax_receipts`.execute(db)
  await sql`DROP TABLE allocation_reversals`.execute(db)
  await sql`DROP TABLE allocation_entries`.execute(db)
  await sql`DROP TABLE allocations`.execute(db)
}
