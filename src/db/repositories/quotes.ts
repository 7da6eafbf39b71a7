import { CompiledQuery, type Kysely } from 'kysely'
import type { Database, NewQuoteRow, QuoteRow, QuoteSnapshotBody } from '../database.js'

const QUOTE_COLUMNS = 9

/** A quote to store, with its catalogue snapshot when the snapshot may not be stored yet. */
export interface QuoteWrite {
  row: NewQuoteRow
  snapshot: { id: string; body: string } | null
}

const statements = new Map<string, string>()

/** One INSERT for `rows` quotes, preceded by a CTE storing `snapshots` new snapshots; built once per shape. */
function insertQuotesStatement(rows: number, snapshots: number): string {
  const key = `${rows}|${snapshots}`
  let text = statements.get(key)
  if (text === undefined) {
    const values = Array.from(
      { length: rows },
      (_, r) => `(${Array.from({ length: QUOTE_COLUMNS }, (_, c) => `$${r * QUOTE_COLUMNS + c + 1}`).join(', ')})`,
    )
    const base = rows * QUOTE_COLUMNS
    const snapshotValues = Array.from({ length: snapshots }, (_, i) => `($${base + 2 * i + 1}, $${base + 2 * i + 2}::json)`)
    text =
      (snapshots > 0
        ? `WITH snapshots AS (INSERT INTO quote_snapshots (id, body) VALUES ${snapshotValues.join(', ')} ON CONFLICT (id) DO NOTHING) `
        : '') +
      'INSERT INTO quotes (id, organisation_id, impact_type, currency_code, tax_liability, request, locked, snapshot_id, created_at) ' +
      `VALUES ${values.join(', ')}`
    statements.set(key, text)
  }
  return text
}

const quoteParameters = (row: NewQuoteRow): unknown[] => [
  row.id,
  row.organisation_id,
  row.impact_type,
  row.currency_code,
  row.tax_liability,
  row.request,
  row.locked,
  row.snapshot_id,
  row.created_at,
]

/** One statement for any number of quotes and their new snapshots (the caller batches concurrent requests). */
export async function insertQuotes(db: Kysely<Database>, writes: readonly QuoteWrite[]): Promise<void[]> {
  if (writes.length > 0) {
    const snapshots = new Map<string, string>()
    for (const { snapshot } of writes) if (snapshot) snapshots.set(snapshot.id, snapshot.body)
    const params = [...writes.flatMap((w) => quoteParameters(w.row)), ...[...snapshots].flat()]
    await db.executeQuery(CompiledQuery.raw(insertQuotesStatement(writes.length, snapshots.size), params))
  }
  return writes.map(() => undefined)
}

export async function findQuoteById(
  db: Kysely<Database>,
  id: string,
): Promise<{ row: QuoteRow; snapshot: QuoteSnapshotBody | null } | undefined> {
  const found = await db
    .selectFrom('quotes')
    .leftJoin('quote_snapshots', 'quote_snapshots.id', 'quotes.snapshot_id')
    .selectAll('quotes')
    .select('quote_snapshots.body as snapshot')
    .where('quotes.id', '=', id)
    .executeTakeFirst()
  if (!found) return undefined
  const { snapshot, ...row } = found
  return { row, snapshot }
}
