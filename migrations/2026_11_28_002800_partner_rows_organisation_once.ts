import { sql, type Kysely } from 'kysely'

// Frozen: never edit after it has landed; add a new migration instead.
// A partner row repeated its record's organisation even when that organisation is the top of its tree, which its
// root_organisation_id already says: 16 B of heap and 16 B of primary key (an INCLUDE column) per row, two to four rows
// per allocation (docs/write-costs.md, "Partner rows name their organisation once"). Such rows now leave
// organisation_id NULL, and readers take coalesce(organisation_id, root_organisation_id). Rows written before keep
// their copy and read the same; nothing is rewritten. Dropping NOT NULL is a catalogue change only.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE impact_record_partners ALTER COLUMN organisation_id DROP NOT NULL`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`UPDATE impact_record_partners SET organisation_id = root_organisation_id WHERE organisation_id IS NULL`.execute(db)
  await sql`ALTER TABLE impact_record_partners ALTER COLUMN organisation_id SET NOT NULL`.execute(db)
}
