import { sql, type Kysely } from 'kysely'

// Frozen: never edit after it has landed; add a new migration instead.
// The partner rows' key becomes two unique indexes on the same columns, split by whether a row names anything beyond
// its key. An allocation's own rows of the top of its tree (most rows: migrations 002600 and 002800) name nothing:
// their organisation, allocation id and time are NULL, so the primary key's INCLUDE columns gave each entry a null
// bitmap (8 B) for three NULLs. Their index now has no INCLUDE: 64 B an entry instead of 72, and a leaf split about
// every 60 rows instead of 53 (the rows of a partner arrive in time order in the middle of the index, so each split
// leaves half a page behind): about 15 B of WAL per partner row (docs/write-costs.md, "A key without NULLs for the
// partner rows"). The rows that name something (a child's, a reversal's, rows written before 002600) keep the INCLUDE
// columns. A partner page reads both in order (Merge Append), each index-only. A record's rows are all of one kind (its
// writer decides), so the two indexes together still hold each (partner, tree, time, record) once.
// Building an index on a partitioned table holds writes to it: seconds per million rows.

const KEY = 'impact_partner_id, root_organisation_id, funds_date_time, record_id'
const LEAN = 'organisation_id IS NULL AND allocation_id IS NULL'

export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE impact_record_partners DROP CONSTRAINT impact_record_partners_pkey`.execute(db)
  await sql.raw(`CREATE UNIQUE INDEX impact_record_partners_lean_key ON impact_record_partners (${KEY}) WHERE ${LEAN}`).execute(db)
  await sql
    .raw(
      `CREATE UNIQUE INDEX impact_record_partners_named_key ON impact_record_partners (${KEY})
       INCLUDE (organisation_id, allocation_id, allocation_created_at) WHERE NOT (${LEAN})`,
    )
    .execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX impact_record_partners_lean_key`.execute(db)
  await sql`DROP INDEX impact_record_partners_named_key`.execute(db)
  await sql
    .raw(
      `ALTER TABLE impact_record_partners ADD CONSTRAINT impact_record_partners_pkey PRIMARY KEY (${KEY})
       INCLUDE (organisation_id, allocation_id, allocation_created_at)`,
    )
    .execute(db)
}
