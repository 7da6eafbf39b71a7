// Quotes: a locked quote is stored as one row plus its snapshot: the part many quotes share (partner details,
// priced projects, and the provenance of the footprint and tax: factor, FX rate, deflator, tax rule set and
// jurisdiction), stored once, content-addressed by the SHA-256 of its JSON. What is left per quote (inputs,
// footprint, equivalents, rates, amounts) fits a row inline, without TOAST.
import { createHash } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { LockedQuote } from '../../domain/types.js'
import type { Database, NewQuoteRow, QuoteRequestRecord, QuoteRow, QuoteSnapshotBody, StoredLockedQuote } from '../database.js'

/** A stored quote: what was asked, what was locked, and for whom. Immutable once stored. */
export interface Quote {
  id: string
  organisationId: string
  impactType: 'carbon' | 'nature'
  currencyCode: string
  taxLiability: 'platform' | 'organisation'
  createdAt: Date
  request: QuoteRequestRecord
  locked: LockedQuote
}

export interface QuoteSnapshot {
  /** SHA-256 (hex) of `body`. */
  id: string
  /** JSON of QuoteSnapshotBody. */
  body: string
}

/** The shared part of a locked quote, as stored in quote_snapshots. */
export function snapshotOf(locked: LockedQuote): QuoteSnapshot {
  const body = JSON.stringify({
    partners: locked.partners,
    projects: locked.credits?.projects ?? [],
    provenance: locked.provenance,
  } satisfies QuoteSnapshotBody)
  return { id: createHash('sha256').update(body).digest('hex'), body }
}

/** quotes.locked: the locked quote without what its snapshot holds. */
function lockedWithoutSnapshot(locked: LockedQuote): string {
  return JSON.stringify({
    ...locked,
    partners: undefined,
    provenance: undefined,
    credits: locked.credits ? { ...locked.credits, projects: undefined } : undefined,
  })
}

/** The whole locked quote again, from its row and its snapshot (older rows carry inline what they did not share). */
function joinSnapshot(stored: StoredLockedQuote, snapshot: QuoteSnapshotBody | null): LockedQuote {
  const { credits, provenance, ...rest } = stored
  const shared = snapshot?.provenance ?? provenance
  if (shared === undefined) throw new Error('stored quote has no provenance inline or in its snapshot')
  return {
    ...rest,
    provenance: shared,
    partners: snapshot?.partners ?? stored.partners ?? [],
    ...(credits ? { credits: { ...credits, projects: snapshot?.projects ?? credits.projects ?? [] } } : {}),
  }
}

export function quoteToRow(quote: Quote, snapshotId: string): NewQuoteRow {
  return {
    id: quote.id,
    organisation_id: quote.organisationId,
    impact_type: quote.impactType,
    currency_code: quote.currencyCode,
    tax_liability: quote.taxLiability,
    request: JSON.stringify(quote.request),
    locked: lockedWithoutSnapshot(quote.locked),
    snapshot_id: snapshotId,
    created_at: quote.createdAt,
  }
}

export function quoteFromRow(row: QuoteRow, snapshot: QuoteSnapshotBody | null): Quote {
  return {
    id: row.id,
    organisationId: row.organisation_id,
    impactType: row.impact_type,
    currencyCode: row.currency_code,
    taxLiability: row.tax_liability,
    createdAt: row.created_at,
    request: row.request,
    locked: joinSnapshot(row.locked, snapshot),
  }
}

/** Rows for `quotes`, and the distinct snapshots among them that `isStored` does not already know. */
export function quoteRows(
  quotes: readonly Quote[],
  isStored: (snapshotId: string) => boolean,
): { rows: NewQuoteRow[]; snapshots: QuoteSnapshot[] } {
  const snapshots = new Map<string, QuoteSnapshot>()
  const rows = quotes.map((quote) => {
    const snapshot = snapshotOf(quote.locked)
    if (!isStored(snapshot.id)) snapshots.set(snapshot.id, snapshot)
    return quoteToRow(quote, snapshot.id)
  })
  return { rows, snapshots: [...snapshots.values()] }
}

export async function findQuoteById(db: Kysely<Database>, id: string): Promise<Quote | undefined> {
  // quotes first; an allocated quote of a month retention dropped lives on in retained_quotes (docs/partitioning.md).
  const read = (table: 'quotes' | 'retained_quotes') =>
    db
      .selectFrom(`${table} as q`)
      .leftJoin('quote_snapshots', 'quote_snapshots.id', 'q.snapshot_id')
      .selectAll('q')
      .select('quote_snapshots.body as snapshot')
      .where('q.id', '=', id)
      .executeTakeFirst()
  const found = (await read('quotes')) ?? (await read('retained_quotes'))
  if (!found) return undefined
  const { snapshot, ...row } = found
  return quoteFromRow(row, snapshot)
}
