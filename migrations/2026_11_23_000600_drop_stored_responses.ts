import { sql, type Kysely } from 'kysely'

// Frozen: never edit after it has landed; add a new migration instead.
export async function up(db: Kysely<any>): Promise<void> {
  // Responses are derived from what is stored (entries, ids, times) by the same presenters as when they were
  // created, so the stored copies of the 201 bodies go: one source of truth and fewer bytes per write.
  await sql`ALTER TABLE allocations DROP COLUMN response`.execute(db)
  await sql`ALTER TABLE allocation_reversals DROP COLUMN response`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  // The bodies cannot be restored; the columns come back nullable (a later up drops them again).
  await sql`ALTER TABLE allocations ADD COLUMN response text`.execute(db)
  await sql`ALTER TABLE allocation_reversals ADD COLUMN response text`.execute(db)
}
