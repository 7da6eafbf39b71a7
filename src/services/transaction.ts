// Services own transactions; a use case that may run inside another's transaction joins it instead of nesting.
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'

export function inTransaction<T>(db: Kysely<Database>, work: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
  return db.isTransaction ? work(db) : db.transaction().execute(work)
}
