// Statements run as named prepared statements on Postgres (docs/summary.md, "Speed"). A repository that runs the same
// few statement texts at a high rate registers each text once; the pool wrapper (src/db/connect.ts) sends a registered
// text as node-postgres `{ name, text, values }`, so each connection parses it once and Postgres can keep its plan.
// Only texts built from a bounded set of shapes belong here: every name lives on every connection until it closes.
import { createHash } from 'node:crypto'
import { CompiledQuery, type Kysely, type QueryResult, type RawBuilder } from 'kysely'

// Far above the summary's shapes (src/db/repositories/allocation-rollups.ts); past it a text simply runs unnamed.
const MAX_STATEMENTS = 256

const names = new Map<string, string>()

/** Registers `text` to run as a named prepared statement and returns it. The name is derived from the text alone. */
export function prepared(text: string): string {
  if (!names.has(text) && names.size < MAX_STATEMENTS) {
    names.set(text, `canopy_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`)
  }
  return text
}

/** The statement name of a registered text, or undefined (run it unnamed). */
export const preparedName = (text: string): string | undefined => names.get(text)

/** Runs `query` as a registered (named prepared) statement: for a few statement shapes run at a high rate. */
export function executePrepared<R, D>(db: Kysely<D>, query: RawBuilder<R>): Promise<QueryResult<R>> {
  const compiled = query.compile(db)
  return db.executeQuery<R>(CompiledQuery.raw(prepared(compiled.sql), [...compiled.parameters]))
}
