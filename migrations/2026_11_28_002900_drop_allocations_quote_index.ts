import { sql, type Kysely } from 'kysely'

// Frozen: never edit after it has landed; add a new migration instead.
// allocations_quote_id_idx served one reader: partition maintenance copying a month's allocated quotes into
// retained_quotes, inside the detach's lock on quotes. Every allocation paid its bytes (about 72 B of WAL) for a job that
// runs once a month. That copy now runs before the detach, without a lock anything waits for, reading the allocations'
// months in which one can name those quotes (docs/write-costs.md, "The quote-id index, dropped"). Dropping an index
// rewrites nothing; its down builds it again (seconds per million allocations, holding writes to allocations).
export async function up(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX allocations_quote_id_idx`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`CREATE INDEX allocations_quote_id_idx ON allocations (quote_id)`.execute(db)
}
