import { sql, type Kysely } from 'kysely'
import type { Database } from '../../src/db/database.js'

/** Every rollup row, in one fixed order: what two ways of rolling up are compared by. */
export const rollupRows = async (db: Kysely<Database>): Promise<Record<string, unknown>[]> =>
  (
    await sql<
      Record<string, unknown>
    >`SELECT * FROM allocation_rollups ORDER BY root_organisation_id, dimension, organisation_id, grain, period_start, group_id, currency_code`.execute(
      db,
    )
  ).rows
