import { sql, type Kysely } from 'kysely'

// Frozen: never edit after it has landed; add a new migration instead.
export async function up(db: Kysely<any>): Promise<void> {
  // The addresses API keys of this organisation (and of descendants without a list of their own) may call from:
  // {"enabled": bool, "entries": ["203.0.113.7", "10.0.0.0/8", "192.0.2.1-192.0.2.50"]}, normalised. NULL: inherit.
  await sql`ALTER TABLE organisations ADD COLUMN ip_allowlist jsonb`.execute(db)
  await sql`
    ALTER TABLE organisations ADD CONSTRAINT organisations_ip_allowlist_check
      CHECK (ip_allowlist IS NULL OR (jsonb_typeof(ip_allowlist->'enabled') = 'boolean'
        AND jsonb_typeof(ip_allowlist->'entries') = 'array' AND jsonb_array_length(ip_allowlist->'entries') <= 100))`.execute(db)
  // Every Hub user of this organisation (and of its descendants) must sign in with a second factor.
  await sql`ALTER TABLE organisations ADD COLUMN require_totp boolean NOT NULL DEFAULT false`.execute(db)
  // When the key last authenticated, to the minute (written at most once a minute per key and process).
  await sql`ALTER TABLE api_keys ADD COLUMN last_used_at timestamptz`.execute(db)
  // True when the organisation and every organisation above it are active: a deactivated organisation's whole
  // subtree stops (its keys and its users'), and comes back as it was when it is reactivated.
  await sql`
    CREATE FUNCTION organisation_active(organisation uuid) RETURNS boolean LANGUAGE sql STABLE PARALLEL SAFE AS $$
      WITH RECURSIVE up AS (
        SELECT id, parent_id, status, 0 AS depth FROM organisations WHERE id = organisation
        UNION ALL
        SELECT o.id, o.parent_id, o.status, up.depth + 1 FROM organisations o JOIN up ON o.id = up.parent_id WHERE up.depth < 32
      )
      SELECT count(*) > 0 AND bool_and(status = 'active') FROM up
    $$`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP FUNCTION organisation_active(uuid)`.execute(db)
  await sql`ALTER TABLE api_keys DROP COLUMN last_used_at`.execute(db)
  await sql`ALTER TABLE organisations DROP COLUMN require_totp`.execute(db)
  await sql`ALTER TABLE organisations DROP COLUMN ip_allowlist`.execute(db)
}
