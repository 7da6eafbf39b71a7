import type { Kysely } from 'kysely'
import type { Database, NewQuoteRow, QuoteRow } from '../database.js'

export async function insertQuote(db: Kysely<Database>, row: NewQuoteRow): Promise<void> {
  await db.insertInto('quotes').values(row).execute()
}

export async function findQuoteById(db: Kysely<Database>, id: string): Promise<QuoteRow | undefined> {
  return db.selectFrom('quotes').selectAll().where('id', '=', id).executeTakeFirst()
}
