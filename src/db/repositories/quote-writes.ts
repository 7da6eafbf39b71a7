// The write of quotes with the sessions some of them back: one statement for concurrent quotes, their new
// snapshots and their sessions (src/services/quote-store.ts coalesces them). Its own module because it spans
// both repositories: sessions.ts reads a session with its quote, so quotes.ts cannot import sessions.ts.
import { CompiledQuery, type Kysely } from 'kysely'
import type { Database, NewQuoteRow, NewSessionRow } from '../database.js'
import { quoteRows, type Quote, type QuoteSnapshot } from './quotes.js'
import { sessionToRow, type Session } from './sessions.js'
import { runAgainOnDeadlock } from '../failures.js'

/** A quote to store, with the session it backs when it was created for one. */
export interface QuoteWrite {
  quote: Quote
  session: Session | null
}

const SNAPSHOT_COLUMNS = ['id', 'body'] as const satisfies readonly (keyof QuoteSnapshot)[]
const QUOTE_COLUMNS = [
  'id',
  'organisation_id',
  'impact_type',
  'currency_code',
  'tax_liability',
  'request',
  'locked',
  'snapshot_id',
  'created_at',
] as const satisfies readonly (keyof Required<NewQuoteRow>)[]
const SESSION_COLUMNS = [
  'id',
  'organisation_id',
  'quote_id',
  'kind',
  'sdk_variant',
  'impact_type',
  'client_secret_hash',
  'expires_at',
  'created_at',
] as const satisfies readonly (keyof Required<NewSessionRow>)[]

/** `insert into "table" ("a", "b") values ($n, $n+1), …` for `rows` rows, its parameters numbered from `first`. */
function insertText(table: string, columns: readonly string[], rows: number, first: number): string {
  const tuples: string[] = []
  for (let row = 0, n = first; row < rows; row++) {
    const params: string[] = []
    for (let c = 0; c < columns.length; c++) params.push(`$${n++}`)
    tuples.push(`(${params.join(', ')})`)
  }
  return `insert into "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) values ${tuples.join(', ')}`
}

/**
 * The statement for `snapshots` new snapshots, `quotes` quotes and `sessions` sessions: exactly the text Kysely's
 * builder gives (test/http/quote-writes.test.ts compares them), written once per shape instead of built and compiled
 * per batch. Snapshots only when some may be new; sessions only when some quotes back one.
 */
function statementText(snapshots: number, quotes: number, sessions: number): string {
  const snapshotsCte = `"snapshots" as (${insertText('quote_snapshots', SNAPSHOT_COLUMNS, snapshots, 1)} on conflict ("id") do nothing)`
  const quotesFrom = 1 + snapshots * SNAPSHOT_COLUMNS.length
  const insertQuotesText = insertText('quotes', QUOTE_COLUMNS, quotes, quotesFrom)
  if (sessions === 0) return snapshots === 0 ? insertQuotesText : `with ${snapshotsCte} ${insertQuotesText}`
  const insertSessionsText = insertText('sessions', SESSION_COLUMNS, sessions, quotesFrom + quotes * QUOTE_COLUMNS.length)
  const quotesCte = `"quotes_written" as (${insertQuotesText})`
  return `with ${snapshots === 0 ? '' : `${snapshotsCte}, `}${quotesCte} ${insertSessionsText}`
}

/** A timestamp as ISO text (the same instant for a timestamptz column; pg's own Date conversion is slower), else as is. */
const parameterOf = (value: unknown): unknown => (value instanceof Date ? value.toISOString() : value)

/** Statement texts by shape; batches are at most 100 quotes, and few shapes recur. */
const statements = new Map<string, string>()
const STATEMENTS_MAX = 1_000

function statementFor(snapshots: number, quotes: number, sessions: number): string {
  const shape = `${snapshots} ${quotes} ${sessions}`
  let text = statements.get(shape)
  if (text === undefined) {
    text = statementText(snapshots, quotes, sessions)
    if (statements.size < STATEMENTS_MAX) statements.set(shape, text)
  }
  return text
}

/**
 * The statement that stores quotes (and the sessions some of them back), with its parameters: data-modifying CTEs
 * insert the snapshots that may not be stored yet (ON CONFLICT DO NOTHING: snapshots are immutable) and the quotes;
 * the sessions' foreign key to their quote is checked at the end of the statement, when the quotes exist.
 */
export function quoteWritesStatement(
  writes: readonly QuoteWrite[],
  isStored: (snapshotId: string) => boolean,
): { statement: CompiledQuery; snapshots: QuoteSnapshot[] } {
  const { rows, snapshots } = quoteRows(
    writes.map((w) => w.quote),
    isStored,
  )
  const sessions = writes.flatMap((w) => (w.session ? [sessionToRow(w.session)] : []))
  const parameters: unknown[] = []
  for (const snapshot of snapshots) parameters.push(snapshot.id, snapshot.body)
  for (const row of rows) for (const column of QUOTE_COLUMNS) parameters.push(parameterOf(row[column]))
  for (const row of sessions) for (const column of SESSION_COLUMNS) parameters.push(parameterOf(row[column]))
  const text = statementFor(snapshots.length, rows.length, sessions.length)
  return { statement: CompiledQuery.raw(text, parameters), snapshots }
}

/** Stores quotes (and the sessions some of them back) in ONE statement. Returns the ids of the snapshots it wrote or found. */
export async function insertQuotes(
  db: Kysely<Database>,
  writes: readonly QuoteWrite[],
  isStored: (snapshotId: string) => boolean,
): Promise<string[]> {
  if (writes.length === 0) return []
  const { statement, snapshots } = quoteWritesStatement(writes, isStored)
  await runAgainOnDeadlock(db.isTransaction, () => db.executeQuery(statement))
  return snapshots.map((s) => s.id)
}
