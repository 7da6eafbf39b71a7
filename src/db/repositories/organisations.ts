import { sql, type Kysely } from 'kysely'
import type { Database, NewOrganisationRow, OrganisationRow } from '../database.js'

export async function insertOrganisation(db: Kysely<Database>, row: NewOrganisationRow): Promise<OrganisationRow> {
  return db.insertInto('organisations').values(row).returningAll().executeTakeFirstOrThrow()
}

export async function findOrganisationById(db: Kysely<Database>, id: string): Promise<OrganisationRow | undefined> {
  return db.selectFrom('organisations').selectAll().where('id', '=', id).executeTakeFirst()
}

/** The organisation and all its active descendants (ids), following parent_id down the tree. */
export async function findActiveSubtreeIds(db: Kysely<Database>, rootId: string): Promise<string[]> {
  const result = await sql<{ id: string }>`
    WITH RECURSIVE subtree AS (
      SELECT id FROM organisations WHERE id = ${rootId} AND status = 'active'
      UNION ALL
      SELECT o.id FROM organisations o JOIN subtree s ON o.parent_id = s.id WHERE o.status = 'active'
    )
    SELECT id FROM subtree`.execute(db)
  return result.rows.map((r) => r.id)
}

export async function countOrganisations(db: Kysely<Database>): Promise<number> {
  const row = await db
    .selectFrom('organisations')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow()
  return Number(row.n)
}
