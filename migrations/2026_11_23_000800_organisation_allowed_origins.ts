import { sql, type Kysely } from 'kysely'

// Frozen: never edit after it has landed; add a new migration instead.
export async function up(db: Kysely<any>): Promise<void> {
  // The web origins (scheme://host[:port], normalised) whose pages may read this organisation's sessions through
  // the browser SDK (CORS). NULL: inherit the nearest ancestor's list; an empty array: no origin at all.
  await sql`ALTER TABLE organisations ADD COLUMN allowed_origins text[]`.execute(db)
  await sql`
    ALTER TABLE organisations ADD CONSTRAINT organisations_allowed_origins_check
      CHECK (allowed_origins IS NULL OR (cardinality(allowed_origins) <= 20 AND array_position(allowed_origins, NULL) IS NULL))`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE organisations DROP COLUMN allowed_origins`.execute(db)
}
