import { sql, type Kysely } from 'kysely'

// Frozen: never edit after it has landed; add a new migration instead.
// Webhooks: endpoints per organisation, their signing secrets, and the outbox (events written with the
// allocation or reversal, one delivery per subscribed endpoint, one attempt row per HTTP call).
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE webhook_endpoints (
      id uuid PRIMARY KEY,
      organisation_id uuid NOT NULL REFERENCES organisations (id),
      url text NOT NULL CHECK (char_length(url) BETWEEN 1 AND 2048),
      description text NOT NULL DEFAULT '' CHECK (char_length(description) <= 500),
      enabled_events text[] NOT NULL CHECK (cardinality(enabled_events) >= 1),
      format text NOT NULL DEFAULT 'standard' CHECK (format IN ('standard', 'ekko')),
      status text NOT NULL DEFAULT 'enabled' CHECK (status IN ('enabled', 'disabled')),
      disabled_reason text,
      failing_since timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`.execute(db)
  await sql`CREATE INDEX webhook_endpoints_organisation_id_idx ON webhook_endpoints (organisation_id)`.execute(db)
  // Secrets are kept in clear: an HMAC key must be usable. A rotated secret keeps signing until expires_at.
  await sql`
    CREATE TABLE webhook_endpoint_secrets (
      id uuid PRIMARY KEY,
      endpoint_id uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
      secret text NOT NULL,
      created_at timestamptz NOT NULL,
      expires_at timestamptz
    )`.execute(db)
  await sql`CREATE INDEX webhook_endpoint_secrets_endpoint_id_idx ON webhook_endpoint_secrets (endpoint_id)`.execute(db)
  // The body is text, not jsonb: it is signed and sent byte for byte as it was written.
  await sql`
    CREATE TABLE webhook_events (
      id uuid PRIMARY KEY,
      organisation_id uuid NOT NULL REFERENCES organisations (id),
      type text NOT NULL,
      body text NOT NULL,
      ekko_body text,
      created_at timestamptz NOT NULL
    )`.execute(db)
  await sql`CREATE INDEX webhook_events_organisation_id_created_at_idx ON webhook_events (organisation_id, created_at)`.execute(db)
  await sql`
    CREATE TABLE webhook_deliveries (
      id uuid PRIMARY KEY,
      event_id uuid NOT NULL REFERENCES webhook_events (id),
      endpoint_id uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
      attempts integer NOT NULL DEFAULT 0,
      manual boolean NOT NULL DEFAULT false,
      next_attempt_at timestamptz NOT NULL,
      locked_until timestamptz,
      last_attempt_at timestamptz,
      created_at timestamptz NOT NULL,
      UNIQUE (event_id, endpoint_id)
    )`.execute(db)
  await sql`CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`.execute(db)
  await sql`CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, created_at, id)`.execute(db)
  await sql`
    CREATE TABLE webhook_attempts (
      id uuid PRIMARY KEY,
      delivery_id uuid NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
      attempted_at timestamptz NOT NULL,
      duration_ms integer NOT NULL,
      status_code integer,
      error text,
      response_body text
    )`.execute(db)
  await sql`CREATE INDEX webhook_attempts_delivery_id_idx ON webhook_attempts (delivery_id, attempted_at)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE webhook_attempts`.execute(db)
  await sql`DROP TABLE webhook_deliveries`.execute(db)
  await sql`DROP TABLE webhook_events`.execute(db)
  await sql`DROP TABLE webhook_endpoint_secrets`.execute(db)
  await sql`DROP TABLE webhook_endpoints`.execute(db)
}
