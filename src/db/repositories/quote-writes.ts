// The write of quotes with the sessions some of them back: one statement for concurrent quotes, their new
// snapshots and their sessions (src/services/quote-store.ts coalesces them). Its own module because it spans
// both repositories: sessions.ts reads a session with its quote, so quotes.ts cannot import sessions.ts.
import type { Kysely, QueryCreator } from 'kysely'
import type { Database } from '../database.js'
import { quoteRows, type Quote } from './quotes.js'
import { sessionToRow, type Session } from './sessions.js'

/** A quote to store, with the session it backs when it was created for one. */
export interface QuoteWrite {
  quote: Quote
  session: Session | null
}

/**
 * Stores quotes (and the sessions some of them back) in ONE statement: data-modifying CTEs insert the quotes and
 * the snapshots that may not be stored yet (ON CONFLICT DO NOTHING: snapshots are immutable); the sessions'
 * foreign key to their quote is checked at the end of the statement, when the quotes exist. Returns the ids of
 * the snapshots it wrote or found.
 */
export async function insertQuotes(
  db: Kysely<Database>,
  writes: readonly QuoteWrite[],
  isStored: (snapshotId: string) => boolean,
): Promise<string[]> {
  if (writes.length === 0) return []
  const { rows, snapshots } = quoteRows(
    writes.map((w) => w.quote),
    isStored,
  )
  const sessions = writes.flatMap((w) => (w.session ? [sessionToRow(w.session)] : []))
  const insertSnapshots = (qb: QueryCreator<Database>) =>
    qb
      .insertInto('quote_snapshots')
      .values(snapshots)
      .onConflict((oc) => oc.column('id').doNothing())
  // Snapshots only when some may be new; sessions only when some quotes back one.
  if (sessions.length === 0 && snapshots.length === 0) {
    await db.insertInto('quotes').values(rows).execute()
  } else if (sessions.length === 0) {
    await db.with('snapshots', insertSnapshots).insertInto('quotes').values(rows).execute()
  } else if (snapshots.length === 0) {
    await db
      .with('quotes_written', (qb) => qb.insertInto('quotes').values(rows))
      .insertInto('sessions')
      .values(sessions)
      .execute()
  } else {
    await db
      .with('snapshots', insertSnapshots)
      .with('quotes_written', (qb) => qb.insertInto('quotes').values(rows))
      .insertInto('sessions')
      .values(sessions)
      .execute()
  }
  return snapshots.map((s) => s.id)
}
