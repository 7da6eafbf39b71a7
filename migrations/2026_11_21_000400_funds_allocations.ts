import { sql, type Kysely } from 'kysely'

// Frozen: never edit after it has landed; add a new migration instead.
export async function up(db: Kysely<any>): Promise<void> {
  // True when the entries of each section sum exactly (impact + taxes + fee) to the amount paid for it;
  // one pass over the array. Used by a CHECK, so Postgres itself refuses an unbalanced allocation.
  await sql`
    CREATE FUNCTION allocation_entries_balance(entries jsonb, credits_amount numeric, contribution_amount numeric)
    RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
      SELECT coalesce(sum(t) FILTER (WHERE k = 'credit'), 0) = coalesce(credits_amount, 0)
         AND coalesce(sum(t) FILTER (WHERE k = 'contribution'), 0) = coalesce(contribution_amount, 0)
      FROM (
        SELECT e->>'kind' AS k,
               (e->>'impactAmount')::numeric + (e->>'impactSalesTaxAmount')::numeric
             + (e->>'serviceFeeAmount')::numeric + (e->>'serviceFeeSalesTaxAmount')::numeric AS t
        FROM jsonb_array_elements(entries) AS e
      ) AS parts
    $$`.execute(db)
  // An allocation is its own idempotency record: the key is unique per organisation, and the request
  // hash and the exact 201 body are kept with it, so a key is remembered as long as its allocation.
  // Its entries are one jsonb array (one row per allocation, written in one statement); the CHECK makes
  // Postgres itself refuse an allocation whose entries do not sum exactly to the amounts paid.
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
      entries jsonb NOT NULL CHECK (jsonb_typeof(entries) = 'array' AND jsonb_array_length(entries) > 0),
      response text NOT NULL,
      created_at timestamptz NOT NULL,
      CONSTRAINT allocations_organisation_idempotency_key_unique UNIQUE (organisation_id, idempotency_key),
      CONSTRAINT allocations_paid_amount_present CHECK (credits_amount IS NOT NULL OR contribution_amount IS NOT NULL),
      CONSTRAINT allocations_entries_balance CHECK (allocation_entries_balance(entries, credits_amount, contribution_amount))
    )`.execute(db)
  await sql`CREATE INDEX allocations_quote_id_idx ON allocations (quote_id)`.execute(db)
  // The entries as rows, for reconciliation and reporting.
  await sql`
    CREATE VIEW allocation_entries AS
    SELECT a.id AS allocation_id,
           (e.position - 1)::int AS position,
           e.entry->>'kind' AS kind,
           (e.entry->>'projectId')::uuid AS project_id,
           (e.entry->>'impactPartnerId')::uuid AS impact_partner_id,
           (e.entry->>'impactAmount')::numeric AS impact_amount,
           (e.entry->>'impactSalesTaxAmount')::numeric AS impact_sales_tax_amount,
           (e.entry->>'impactSalesTaxRate')::numeric AS impact_sales_tax_rate,
           (e.entry->>'serviceFeeAmount')::numeric AS service_fee_amount,
           (e.entry->>'serviceFeeSalesTaxAmount')::numeric AS service_fee_sales_tax_amount,
           (e.entry->>'serviceFeeSalesTaxRate')::numeric AS service_fee_sales_tax_rate,
           (e.entry->>'quantityTonnes')::numeric AS quantity_tonnes
    FROM allocations a CROSS JOIN LATERAL jsonb_array_elements(a.entries) WITH ORDINALITY AS e(entry, position)`.execute(db)
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
  await sql`DROP VIEW allocation_entries`.execute(db)
  await sql`DROP TABLE allocations`.execute(db)
  await sql`DROP FUNCTION allocation_entries_balance(jsonb, numeric, numeric)`.execute(db)
}
