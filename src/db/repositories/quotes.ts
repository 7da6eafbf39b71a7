import { CompiledQuery, type Kysely } from 'kysely'
import type { Database, NewQuoteRow, QuoteRow } from '../database.js'

const QUOTE_COLUMNS = 8

const insertQuotesSql = new Map<number, string>()

/** `INSERT … VALUES ($1…$8), ($9…$16), …` for `count` rows; the text is built once per batch size. */
function insertQuotesStatement(count: number): string {
  let text = insertQuotesSql.get(count)
  if (text === undefined) {
    const rows = Array.from({ length: count }, (_, r) =>
      `(${Array.from({ length: QUOTE_COLUMNS }, (_, c) => `$${r * QUOTE_COLUMNS + c + 1}`).join(', ')})`)
    text = `INSERT INTO quotes (id, organisation_id, impact_type, currency_code, tax_liability, request, locked, created_at) VALUES ${rows.join(', ')}`
    insertQuotesSql.set(count, text)
  }
  return text
}

export const insertQuoteParameters = (row: NewQuoteRow): unknown[] =>
  [row.id, row.organisation_id, row.impact_type, row.currency_code, row.tax_liability, row.request, row.locked, row.created_at]

/** One statement for any number of quotes (the caller batches concurrent requests). */
export async function insertQuotes(db: Kysely<Database>, rows: readonly NewQuoteRow[]): Promise<void[]> {
  if (rows.length > 0) await db.executeQuery(CompiledQuery.raw(insertQuotesStatement(rows.length), rows.flatMap(insertQuoteParameters)))
  return rows.map(() => undefined)
}

export async function findQuoteById(db: Kysely<Database>, id: string): Promise<QuoteRow | undefined> {
  return db.selectFrom('quotes').selectAll().where('id', '=', id).executeTakeFirst()
}
