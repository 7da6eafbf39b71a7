import { sql, type Kysely } from 'kysely'

// Frozen: never edit after it has landed; add a new migration instead.
// Two things every new allocation wrote and no read needed (docs/write-costs.md, "Leaner partner rows and a partial
// consumer index"):
// - an allocation's partner rows repeated its id and time as allocation_id and allocation_created_at, which are the
//   row's record_id and funds_date_time; they are now NULL for an allocation's rows (a reversal's rows still name
//   their allocation), and readers take the record's own. Rows written before keep their copies: both readings agree.
// - the consumer-reference index held every allocation and reversal, with or without a reference, and only pages
//   filtered by a reference read it (consumer_reference = $n, which implies IS NOT NULL): now a partial index.
// The indexes are built again under a lock that holds writes to those tables for the build (seconds per million rows).
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    ALTER TABLE impact_record_partners
      ALTER COLUMN allocation_id DROP NOT NULL,
      ALTER COLUMN allocation_created_at DROP NOT NULL,
      ADD CONSTRAINT impact_record_partners_allocation_pair CHECK ((allocation_id IS NULL) = (allocation_created_at IS NULL))`.execute(db)
  for (const table of ['allocations', 'allocation_reversals']) {
    await sql`DROP INDEX ${sql.id(`${table}_consumer_time_idx`)}`.execute(db)
    await sql`CREATE INDEX ${sql.id(`${table}_consumer_time_idx`)} ON ${sql.table(table)}
      (root_organisation_id, consumer_reference, created_at, id) WHERE consumer_reference IS NOT NULL`.execute(db)
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['allocations', 'allocation_reversals']) {
    await sql`DROP INDEX ${sql.id(`${table}_consumer_time_idx`)}`.execute(db)
    await sql`CREATE INDEX ${sql.id(`${table}_consumer_time_idx`)} ON ${sql.table(table)}
      (root_organisation_id, consumer_reference, created_at, id)`.execute(db)
  }
  await sql`UPDATE impact_record_partners SET allocation_id = record_id, allocation_created_at = funds_date_time
            WHERE allocation_id IS NULL`.execute(db)
  await sql`
    ALTER TABLE impact_record_partners
      DROP CONSTRAINT impact_record_partners_allocation_pair,
      ALTER COLUMN allocation_id SET NOT NULL,
      ALTER COLUMN allocation_created_at SET NOT NULL`.execute(db)
}
