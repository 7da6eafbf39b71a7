// Quotes: price with the pure domain, lock, store in one INSERT; read back identical.
import { randomUUID } from 'node:crypto'
import type { AppContext } from '../context.js'
import type { NewQuoteRow, QuoteRequestRecord, QuoteRow, QuoteSnapshotBody } from '../db/database.js'
import { findQuoteById } from '../db/repositories/quotes.js'
import { DomainError } from '../domain/errors.js'
import { minorUnitsOf, parseDecimal, toMinorUnits } from '../domain/money.js'
import { priceQuote } from '../domain/pricing.js'
import type { ImpactType, LockedQuote, QuotedProject } from '../domain/types.js'
import { notFound } from '../errors.js'
import type { Principal } from './access.js'
import { joinSnapshot, snapshotOf, storedLockedJson, type QuoteSnapshot } from './quote-snapshots.js'

export interface StoredQuote {
  id: string
  organisationId: string
  impactType: ImpactType
  currencyCode: string
  taxLiability: 'platform' | 'organisation'
  createdAt: Date
  request: QuoteRequestRecord
  locked: LockedQuote
}

/** Quotes never change once stored, so any process may keep them: a bounded in-memory map. */
export class QuoteCache {
  private readonly entries = new Map<string, StoredQuote>()
  constructor(private readonly maxEntries: number) {}

  get(id: string): StoredQuote | undefined {
    return this.entries.get(id)
  }

  set(quote: StoredQuote): void {
    if (this.maxEntries === 0) return
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value
      if (oldest !== undefined) this.entries.delete(oldest)
    }
    this.entries.set(quote.id, quote)
  }
}

/** A stored quote from its row and its catalogue snapshot. */
export const toStoredQuote = (row: QuoteRow, snapshot: QuoteSnapshotBody | null): StoredQuote => ({
  id: row.id,
  organisationId: row.organisation_id,
  impactType: row.impact_type,
  currencyCode: row.currency_code,
  taxLiability: row.tax_liability,
  createdAt: row.created_at,
  request: row.request,
  locked: joinSnapshot(row.locked, snapshot),
})

function validateOrderItems(items: QuoteRequestRecord['orderItems']): void {
  ;(items ?? []).forEach((item, i) => {
    const unitPrice = (item as { unitPrice?: { value: number; currencyCode: string } }).unitPrice
    if (!unitPrice) return
    const path = `/orderItems/${i}/unitPrice`
    let digits: number
    try {
      digits = minorUnitsOf(unitPrice.currencyCode)
    } catch {
      throw new DomainError('UNSUPPORTED_CURRENCY', `unknown currency ${JSON.stringify(unitPrice.currencyCode)}`, `${path}/currencyCode`)
    }
    toMinorUnits(parseDecimal(String(unitPrice.value), `${path}/value`), digits, `${path}/value`)
  })
}

/**
 * Prices a quote for `request.organisationId` (which must be in the caller's tree) and returns it
 * with the row to store; the caller stores it (alone, or together with a session).
 */
export async function prepareQuote(
  ctx: AppContext,
  principal: Principal,
  request: QuoteRequestRecord,
  impactType: ImpactType,
): Promise<{ quote: StoredQuote; row: NewQuoteRow; snapshot: QuoteSnapshot }> {
  await ctx.access.assertCanActOn(principal, request.organisationId)
  const { settings, reference } = await ctx.reference.forOrganisation(request.organisationId)
  const merchant = request.merchant ?? undefined
  const mcc = merchant?.mcc ?? settings.mcc
  if (!mcc) {
    throw new DomainError('MCC_REQUIRED', 'merchant is required because the organisation has no mcc set', '/merchant')
  }
  validateOrderItems(request.orderItems)
  const now = ctx.clock()
  const locked = priceQuote(
    {
      impactType,
      amount: String(request.transaction.amount),
      currencyCode: request.transaction.currencyCode,
      mcc,
      merchant: merchant
        ? { countryCode: merchant.address.countryCode, state: merchant.address.state }
        : { countryCode: settings.countryCode, state: settings.state ?? undefined },
      consumer: request.consumer,
      locale: request.locale,
      matchConsumerLocation: request.matchConsumerLocation,
      serviceFeeRate: settings.serviceFeeRate,
      date: now.toISOString().slice(0, 10),
    },
    reference,
  )
  const quote: StoredQuote = {
    id: randomUUID(),
    organisationId: request.organisationId,
    impactType,
    currencyCode: locked.currencyCode,
    taxLiability: settings.taxLiability,
    createdAt: now,
    request,
    locked,
  }
  const snapshot = snapshotOf(locked)
  const row: NewQuoteRow = {
    id: quote.id,
    organisation_id: quote.organisationId,
    impact_type: impactType,
    currency_code: quote.currencyCode,
    tax_liability: quote.taxLiability,
    request: JSON.stringify(request),
    locked: storedLockedJson(locked),
    snapshot_id: snapshot.id,
    created_at: now,
  }
  return { quote, row, snapshot }
}

export async function createQuote(
  ctx: AppContext,
  principal: Principal,
  request: QuoteRequestRecord,
  impactType: ImpactType,
): Promise<StoredQuote> {
  const { quote, row, snapshot } = await prepareQuote(ctx, principal, request, impactType)
  await ctx.quoteWriter.submit({ row, snapshot: ctx.snapshots.has(snapshot.id) ? null : snapshot })
  ctx.snapshots.add(snapshot.id)
  ctx.quotes.set(quote)
  return quote
}

/** A quote of the caller's tree; anything else is "not found". */
export async function getQuote(ctx: AppContext, principal: Principal, id: string): Promise<StoredQuote> {
  let quote = ctx.quotes.get(id)
  if (!quote) {
    const found = await findQuoteById(ctx.database.db, id)
    if (found) {
      quote = toStoredQuote(found.row, found.snapshot)
      ctx.quotes.set(quote)
    }
  }
  if (!quote || !(await ctx.access.canSee(principal, quote.organisationId))) throw notFound('quote')
  return quote
}

/** The projects a quote priced, with the weights it locked (none for nature quotes). */
export function quoteProjects(quote: StoredQuote): readonly QuotedProject[] {
  return quote.locked.credits?.projects ?? []
}
