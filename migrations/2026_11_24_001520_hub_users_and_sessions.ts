import { sql, type Kysely } from 'kysely'

// Frozen: never edit after it has landed; add a new migration instead.
// The Hub's people: users with a role in one organisation, their server-side sessions, one-time set-password links,
// TOTP recovery codes, the failed sign-in counters (when there is no Redis) and the outbox of Hub e-mails.
export async function up(db: Kysely<any>): Promise<void> {
  // E-mail addresses are stored lower-case and are unique across organisations: sign-in names no organisation.
  await sql`
    CREATE TABLE users (
      id uuid PRIMARY KEY,
      organisation_id uuid NOT NULL REFERENCES organisations (id),
      email text NOT NULL UNIQUE CHECK (char_length(email) BETWEEN 3 AND 254 AND email = lower(email)),
      role text NOT NULL CHECK (role IN ('admin', 'developer', 'analyst')),
      password_hash text,
      password_set_at timestamptz,
      totp_secret text,
      totp_enabled_at timestamptz,
      totp_pending_secret text,
      totp_last_step bigint,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`.execute(db)
  await sql`CREATE INDEX users_organisation_id_idx ON users (organisation_id)`.execute(db)
  // Only the SHA-256 of a session's token is stored; the cookie carries the token.
  await sql`
    CREATE TABLE hub_sessions (
      id uuid PRIMARY KEY,
      user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      token_hash bytea NOT NULL UNIQUE CHECK (octet_length(token_hash) = 32),
      csrf_token text NOT NULL,
      stage text NOT NULL CHECK (stage IN ('second_factor', 'enrol_second_factor', 'active')),
      ip text,
      user_agent text,
      created_at timestamptz NOT NULL,
      last_seen_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL
    )`.execute(db)
  await sql`CREATE INDEX hub_sessions_user_id_idx ON hub_sessions (user_id)`.execute(db)
  await sql`
    CREATE TABLE hub_password_tokens (
      id uuid PRIMARY KEY,
      user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      token_hash bytea NOT NULL UNIQUE CHECK (octet_length(token_hash) = 32),
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      used_at timestamptz
    )`.execute(db)
  await sql`CREATE INDEX hub_password_tokens_user_id_idx ON hub_password_tokens (user_id)`.execute(db)
  await sql`
    CREATE TABLE hub_recovery_codes (
      user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      code_hash bytea NOT NULL CHECK (octet_length(code_hash) = 32),
      used_at timestamptz,
      PRIMARY KEY (user_id, code_hash)
    )`.execute(db)
  // Failed sign-ins per account and per client address (used when REDIS_URL is not set).
  await sql`
    CREATE TABLE hub_sign_in_failures (
      key text PRIMARY KEY,
      failures integer NOT NULL,
      last_failure_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL
    )`.execute(db)
  // Invitations leave through this outbox (SMTP_URL); the body, which holds the one-time link, is emptied once sent.
  await sql`
    CREATE TABLE hub_emails (
      id uuid PRIMARY KEY,
      to_address text NOT NULL,
      subject text NOT NULL,
      body text NOT NULL,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'failed')),
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz NOT NULL,
      locked_until timestamptz,
      last_error text,
      sent_at timestamptz,
      created_at timestamptz NOT NULL
    )`.execute(db)
  await sql`CREATE INDEX hub_emails_due_idx ON hub_emails (next_attempt_at) WHERE status = 'pending'`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['hub_emails', 'hub_sign_in_failures', 'hub_recovery_codes', 'hub_password_tokens', 'hub_sessions', 'users']) {
    await sql`DROP TABLE ${sql.table(table)}`.execute(db)
  }
}
