// Sessions: a session row, and a session read together with the quote it is backed by (written with it by quote-writes.ts).
import type { Kysely } from 'kysely'
import type { Database, NewSessionRow, SessionRow } from '../database.js'
import { quoteFromRow, type Quote } from './quotes.js'

export type SessionKind = 'post-purchase' | 'checkout'
export type SdkVariant = 'embedded' | 'takeover'

export interface Session {
  id: string
  organisationId: string
  quoteId: string
  kind: SessionKind
  /** Post-purchase sessions only. */
  sdkVariant: SdkVariant | null
  impactType: 'carbon' | 'nature'
  /** SHA-256 of the client secret; the secret itself is never stored. */
  clientSecretHash: Buffer
  expiresAt: Date
  createdAt: Date
}

export const sessionToRow = (session: Session): NewSessionRow => ({
  id: session.id,
  organisation_id: session.organisationId,
  quote_id: session.quoteId,
  kind: session.kind,
  sdk_variant: session.sdkVariant,
  impact_type: session.impactType,
  client_secret_hash: session.clientSecretHash,
  expires_at: session.expiresAt,
  created_at: session.createdAt,
})

const sessionFromRow = (row: SessionRow): Session => ({
  id: row.id,
  organisationId: row.organisation_id,
  quoteId: row.quote_id,
  kind: row.kind,
  sdkVariant: row.sdk_variant,
  impactType: row.impact_type,
  clientSecretHash: Buffer.from(row.client_secret_hash),
  expiresAt: row.expires_at,
  createdAt: row.created_at,
})

/** A session with its quote, in one query. */
export async function findSessionWithQuote(db: Kysely<Database>, id: string): Promise<{ session: Session; quote: Quote } | undefined> {
  const row = await db
    .selectFrom('sessions')
    // The quote's time is the session's: the join reads one partition of quotes.
    .innerJoin('quotes', (join) => join.onRef('quotes.id', '=', 'sessions.quote_id').onRef('quotes.created_at', '=', 'sessions.created_at'))
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
    session: sessionFromRow(row),
    quote: quoteFromRow(
      {
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
      row.snapshot,
    ),
  }
}
