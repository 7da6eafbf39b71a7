// Quotes: price a purchase with the pure domain, lock the result, store it; read it back unchanged.
import type { Clock } from '../clock.js'
import type { QuoteRequestRecord } from '../db/database.js'
import type { Quote } from '../db/repositories/quotes.js'
import { DomainError } from '../domain/errors.js'
import { decimalTextToMinorUnits, minorUnitsOf } from '../domain/money.js'
import { priceQuote, type QuoteContext } from '../domain/pricing.js'
import { explainQuote, type QuoteExplanation } from '../domain/explain.js'
import type { ImpactType, QuotedProject } from '../domain/types.js'
import { notFound } from '../errors.js'
import type { Metrics } from '../metrics.js'
import type { AccessResolver, Principal } from './access.js'
import type { QuoteStore } from './quote-store.js'
import type { ReferenceDataCache } from './reference-data.js'
import { newId } from '../ids.js'

export interface QuoteDeps {
  readonly access: AccessResolver
  readonly reference: ReferenceDataCache
  readonly quotes: QuoteStore
  readonly clock: Clock
  readonly metrics: Metrics
}

/** Order items are not priced, but a unit price must still be money in a known currency. */
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
    // The same answer and errors as toMinorUnits(parseDecimal(…)), without building a Decimal for a plain number.
    decimalTextToMinorUnits(String(unitPrice.value), digits, `${path}/value`)
  })
}

/**
 * Prices a new quote for `request.organisationId`, which must be in the caller's tree (else FORBIDDEN), with the
 * organisation's settings and catalogue. Not stored: the caller stores it alone or with a session.
 */
export async function priceNewQuote(
  deps: Pick<QuoteDeps, 'access' | 'reference' | 'clock'>,
  principal: Principal,
  request: QuoteRequestRecord,
  impactType: ImpactType,
): Promise<Quote> {
  // What is cached is read without awaiting a promise (most quotes); the rest with the reads.
  if (!deps.access.seesAtOnce(principal, request.organisationId)) await deps.access.assertCanActOn(principal, request.organisationId)
  const { settings, reference } =
    deps.reference.cachedForOrganisation(request.organisationId) ?? (await deps.reference.forOrganisation(request.organisationId))
  const merchant = request.merchant ?? undefined
  const mcc = merchant?.mcc ?? settings.mcc
  if (!mcc) {
    throw new DomainError('MCC_REQUIRED', 'merchant is required because the organisation has no mcc set', '/merchant')
  }
  validateOrderItems(request.orderItems)
  const now = deps.clock()
  const planOf = (context: QuoteContext) => deps.reference.plans.planFor(request.organisationId, reference, context)
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
    planOf,
  )
  return {
    id: newId(),
    organisationId: request.organisationId,
    impactType,
    currencyCode: locked.currencyCode,
    taxLiability: settings.taxLiability,
    createdAt: now,
    request,
    locked,
  }
}

export async function createQuote(
  deps: QuoteDeps,
  principal: Principal,
  request: QuoteRequestRecord,
  impactType: ImpactType,
): Promise<Quote> {
  const quote = await priceNewQuote(deps, principal, request, impactType)
  await deps.quotes.save(quote)
  deps.metrics.quoteCreated(impactType, request.origin)
  return quote
}

/** A quote of the caller's tree; anything else is "not found". */
export async function getQuote(deps: Pick<QuoteDeps, 'access' | 'quotes'>, principal: Principal, id: string): Promise<Quote> {
  // A quote this process keeps, of the caller's own organisation or cached tree, is had without awaiting a promise.
  const quote = deps.quotes.cached(id) ?? (await deps.quotes.find(id))
  if (!quote || !(deps.access.seesAtOnce(principal, quote.organisationId) || (await deps.access.canSee(principal, quote.organisationId)))) {
    throw notFound('quote')
  }
  return quote
}

/** The projects a quote priced, with the weights it locked (none for nature quotes). */
export function quoteProjects(quote: Quote): readonly QuotedProject[] {
  return quote.locked.credits?.projects ?? []
}

/** Where every figure of a quote of the caller's tree came from, read from what it locked. */
export async function getQuoteExplanation(
  deps: Pick<QuoteDeps, 'access' | 'quotes'>,
  principal: Principal,
  id: string,
): Promise<QuoteExplanation> {
  const quote = await getQuote(deps, principal, id)
  return explainQuote({
    quoteId: quote.id,
    createdAt: quote.createdAt,
    transaction: quote.request.transaction,
    requestMerchantCountryCode: quote.request.merchant?.address.countryCode ?? null,
    locked: quote.locked,
  })
}
