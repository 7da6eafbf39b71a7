import { sql, type Kysely } from 'kysely'

// Frozen: never edit after it has landed; add a new migration instead.
// An allocation copied its quote's merchant (about 170 B of jsonb) into its row, and a merchant's allocations all
// carry the same one (docs/write-costs.md, "Merchants stored once"). The merchant is now stored once per distinct
// content in merchant_snapshots, its id a hash of that content, and an allocation names it (merchant_id). No foreign
// key: its row lock would be written on every allocation, and the allocation statement inserts the snapshot it names
// (ON CONFLICT DO NOTHING) in the same statement; snapshots are never updated or deleted. A row names its merchant
// one way or the other: rows written before keep their merchant column (merchant_id NULL), new rows leave it NULL, and
// readers take the column first. Adding a nullable column without a default rewrites nothing.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE merchant_snapshots (
      id uuid PRIMARY KEY,
      body jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db)
  await sql`ALTER TABLE allocations ADD COLUMN merchant_id uuid`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`UPDATE allocations a SET merchant = m.body FROM merchant_snapshots m WHERE m.id = a.merchant_id`.execute(db)
  await sql`ALTER TABLE allocations DROP COLUMN merchant_id`.execute(db)
  await sql`DROP TABLE merchant_snapshots`.execute(db)
}
