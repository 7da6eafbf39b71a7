import { sql, type Kysely } from 'kysely'

// Frozen: never edit after it has landed; add a new migration instead.
// The organisation time index of allocations and reversals keeps only the records of an organisation below the top of
// its tree. A record of the top (most merchants are the top of their own tree) has the same key in the root time index,
// which every read scoped to the top uses anyway, so its second entry was about 100 B of WAL per write for nothing
// (docs/write-costs.md, "One time index for the top of a tree"). Readers by organisation say
// `organisation_id <> root_organisation_id` when no organisation they ask for is a top, so Postgres can use this index.
// Building an index on a partitioned table holds writes to it: seconds per million records.

const TABLES = ['allocations', 'allocation_reversals'] as const

export async function up(db: Kysely<any>): Promise<void> {
  for (const table of TABLES) {
    await sql`DROP INDEX ${sql.id(`${table}_organisation_time_idx`)}`.execute(db)
    await sql`CREATE INDEX ${sql.id(`${table}_organisation_time_idx`)} ON ${sql.table(table)} (organisation_id, created_at, id)
      WHERE organisation_id <> root_organisation_id`.execute(db)
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of TABLES) {
    await sql`DROP INDEX ${sql.id(`${table}_organisation_time_idx`)}`.execute(db)
    await sql`CREATE INDEX ${sql.id(`${table}_organisation_time_idx`)} ON ${sql.table(table)} (organisation_id, created_at, id)`.execute(db)
  }
}
