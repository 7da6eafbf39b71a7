import type { Insertable, Kysely, Selectable } from 'kysely'
import type { Database, NewQuoteRow, QuoteRow, QuoteSnapshotBody, SessionsTable } from '../database.js'

export type SessionRow = Selectable<SessionsTable>
export type NewSessionRow = Insertable<SessionsTable>

/**
 * Stores a quote and the session it backs in one statement (one round trip): a data-modifying CTE
 * inserts the quote, and the session's foreign key is checked at the end of the statement.
 */
export async function insertQuoteWithSession(
  db: Kysely<Database>,
  quote: NewQuoteRow,
  session: NewSessionRow,
  snapshot: { id: string; body: string } | null,
): Promise<void> {
  const withQuote = db.with('quote', (qb) => qb.insertInto('quotes').values(quote).returning('id'))
  if (!snapshot) {
    await withQuote.insertInto('sessions').values(session).execute()
    return
  }
  await withQuote
    .with('snapshot', (qb) =>
      qb
        .insertInto('quote_snapshots')
        .values({ id: snapshot.id, body: snapshot.body })
        .onConflict((oc) => oc.column('id').doNothing())
        .returning('id'),
    )
    .insertInto('sessions')
    .values(session)
    .execute()
}

/** A session with its quote, in one query. */
export async function findSessionWithQuote(
  db: Kysely<Database>,
  id: string,
): Promise<{ session: SessionRow; quote: QuoteRow; snapshot: QuoteSnapshotBody | null } | undefined> {
  const row = await db
    .selectFrom('sessions')
    .innerJoin('quotes', 'quotes.id', 'sessions.quote_id')
    .leftJoin('quote_snapshots', 'quote_snapshots.id', 'quotes.snapshot_id')
    .select([
      'sessions.id',
      'sessions.organisation_id',
      'sessions.quote_id',
      'sessions.kind',
      'sessions.sdk_variant',
      'sessions.impact_type',
      'sessions.client_secret_hash',
      'sessions.expires_at',
      'sessions.created_at',
      'quotes.organisation_id as quote_organisation_id',
      'quotes.impact_type as quote_impact_type',
      'quotes.currency_code as quote_currency_code',
      'quotes.tax_liability as quote_tax_liability',
      'quotes.request as quote_request',
      'quotes.locked as quote_locked',
      'quotes.created_at as quote_created_at',
      'quotes.snapshot_id as quote_snapshot_id',
      'quote_snapshots.body as snapshot',
    ])
    .where('sessions.id', '=', id)
    .executeTakeFirst()
  if (!row) return undefined
  return {
    session: {
      id: row.id,
      organisation_id: row.organisation_id,
      quote_id: row.quote_id,
      kind: row.kind,
      sdk_variant: row.sdk_variant,
      impact_type: row.impact_type,
      client_secret_hash: row.client_secret_hash,
      expires_at: row.expires_at,
      created_at: row.created_at,
    },
    quote: {
      id: row.quote_id,
      organisation_id: row.quote_organisation_id,
      impact_type: row.quote_impact_type,
      currency_code: row.quote_currency_code,
      tax_liability: row.quote_tax_liability,
      request: row.quote_request,
      locked: row.quote_locked,
      snapshot_id: row.quote_snapshot_id,
      created_at: row.quote_created_at,
    },
    snapshot: row.snapshot,
  }
}
