// Funds allocations: split an amount paid with a quote's locked rates and record it exactly once per
// Idempotency-Key. The whole write is one statement (allocation, entries, receipt outbox row), so a crash
// leaves either all of it or nothing, and Postgres' unique key decides concurrent duplicates.
import { hash } from 'node:crypto'
import type { Clock } from '../clock.js'
import type { Allocation, AllocationDraft, NewTaxReceipt } from '../db/repositories/allocations.js'
import { reverseAllocation, splitAllocation } from '../domain/allocation.js'
import { decimalTextToMinorUnits, formatMinorUnits } from '../domain/money.js'
import { serviceFeeOf, splitProfitShare, type ProfitShareSplit } from '../domain/profit-share.js'
import type { AllocationSplit } from '../domain/types.js'
import { DomainError } from '../domain/errors.js'
import { AppError, notFound } from '../errors.js'
import type { Metrics } from '../metrics.js'
import type { AccessResolver, Principal } from './access.js'
import type { AllocationStore, AllocationWrite } from './allocation-store.js'
import type { QuoteStore } from './quote-store.js'
import { getQuote } from './quotes.js'
import type { ReferenceDataCache } from './reference-data.js'
import { newId } from '../ids.js'
import { isPastQuoteRetention } from '../domain/partitions.js'
import { recordEvent, type WebhookWake } from './webhooks/events.js'

export interface AllocationDeps {
  readonly access: AccessResolver
  readonly quotes: QuoteStore
  readonly allocations: AllocationStore
  readonly reference: ReferenceDataCache
  readonly clock: Clock
  readonly metrics: Metrics
  /** Told when an allocation or reversal (and so its webhook event) has been committed. */
  readonly webhooks: WebhookWake
  /**
   * QUOTE_RETENTION_DAYS: a quote older than this is not allocated (404, as once retention has dropped it), even while
   * this process still caches it, so that no allocation names a quote retention may already have dropped.
   */
  readonly quoteRetentionDays: number
}

export interface AllocationInput {
  organisationId: string
  quoteId: string
  currencyCode?: string | undefined
  credits?: { amount: number } | null | undefined
  contribution?: { amount: number; impactPartnerIds?: string[] | undefined } | null | undefined
  issueTaxReceipt?: boolean | undefined
  consumerEmail?: string | undefined
}

/**
 * What an allocation or a reversal answers with. A reversal is the allocation's split negated, with its own id
 * and time; both are derived from what is stored, so a replay or a read answers exactly what the creation did.
 */
export interface AllocationView {
  id: string
  quoteId: string
  currencyCode: string
  split: AllocationSplit
  taxLiability: 'platform' | 'organisation'
  createdAt: Date
  reversalId?: string
}

export interface AllocationResult {
  allocation: AllocationView
  replayed: boolean
}

const ROUTE = 'POST /funds/allocations'

/**
 * JSON with object keys sorted at every level: equal requests hash equally whatever their key order. Keys whose value
 * is undefined are left out; an array element JSON cannot write (undefined, a function) is written as nothing, and such
 * an object value as `undefined`, as this function has always written them (stored request hashes depend on it).
 * Built by appending to one string: every allocation request is hashed, and arrays of entries built per level cost more
 * than the hash itself.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) {
    let text = '['
    for (let i = 0; i < value.length; i++) {
      if (i > 0) text += ','
      const item = canonicalJson(value[i]) as string | undefined
      if (item !== undefined) text += item
    }
    return `${text}]`
  }
  if (value !== null && typeof value === 'object') {
    // The default sort compares UTF-16 code units, as `<` does on strings.
    const keys = Object.keys(value).sort()
    let text = '{'
    for (const key of keys) {
      const item = (value as Record<string, unknown>)[key]
      if (item === undefined) continue
      if (text.length > 1) text += ','
      text += `${JSON.stringify(key)}:${canonicalJson(item)}`
    }
    return `${text}}`
  }
  return JSON.stringify(value)
}

/** The keys of an AllocationInput in canonicalJson's order (sorted by UTF-16 code units), and of its sections. */
const INPUT_KEYS: ReadonlySet<string> = new Set([
  'consumerEmail',
  'contribution',
  'credits',
  'currencyCode',
  'issueTaxReceipt',
  'organisationId',
  'quoteId',
])
const CONTRIBUTION_KEYS: ReadonlySet<string> = new Set(['amount', 'impactPartnerIds'])
const CREDITS_KEYS: ReadonlySet<string> = new Set(['amount'])

const hasOnlyKeys = (value: object, keys: ReadonlySet<string>): boolean => {
  for (const key in value) if (!keys.has(key)) return false
  return true
}

/** A member of canonical JSON: `,"key":value` (or `"key":value` first), nothing for undefined. */
const member = (text: string, key: string, value: string | undefined): string =>
  value === undefined ? text : `${text.length > 1 ? `${text},` : text}"${key}":${value}`

/**
 * canonicalJson(input) for an allocation request of the route's shape, written field by field in its key order
 * rather than by sorting each object's keys (every allocation is hashed); anything else goes through canonicalJson.
 * test/unit/request-hash.test.ts holds both to the same text.
 */
function canonicalInputJson(input: AllocationInput): string {
  const { credits, contribution } = input
  if (
    !hasOnlyKeys(input, INPUT_KEYS) ||
    (credits != null && !hasOnlyKeys(credits, CREDITS_KEYS)) ||
    (contribution != null &&
      (!hasOnlyKeys(contribution, CONTRIBUTION_KEYS) ||
        (contribution.impactPartnerIds !== undefined && !Array.isArray(contribution.impactPartnerIds))))
  ) {
    return canonicalJson(input)
  }
  const section = (value: AllocationInput['credits'] | AllocationInput['contribution']): string | undefined => {
    if (value === undefined) return undefined
    if (value === null) return 'null'
    let text = member('{', 'amount', JSON.stringify(value.amount))
    if ('impactPartnerIds' in value)
      text = member(text, 'impactPartnerIds', value.impactPartnerIds && canonicalJson(value.impactPartnerIds))
    return `${text}}`
  }
  let text = member('{', 'consumerEmail', JSON.stringify(input.consumerEmail))
  text = member(text, 'contribution', section(contribution))
  text = member(text, 'credits', section(credits))
  text = member(text, 'currencyCode', JSON.stringify(input.currencyCode))
  text = member(text, 'issueTaxReceipt', JSON.stringify(input.issueTaxReceipt))
  text = member(text, 'organisationId', JSON.stringify(input.organisationId))
  text = member(text, 'quoteId', JSON.stringify(input.quoteId))
  return `${text}}`
}

/** SHA-256 (hex) of the route and the canonical request; crypto.hash, one call, into a string (the same digest). */
export const requestHashOf = (input: AllocationInput): string => hash('sha256', `${ROUTE}\n${canonicalInputJson(input)}`, 'hex')

const isLockTimeout = (error: unknown): boolean => (error as { code?: string } | null)?.code === '55P03'

function checkShape(input: AllocationInput): void {
  if (!input.credits && !input.contribution) {
    throw new AppError('CREDITS_OR_CONTRIBUTION_REQUIRED', 'at least one of credits or contribution is required', [
      { path: '/credits', message: 'credits or contribution is required' },
      { path: '/contribution', message: 'credits or contribution is required' },
    ])
  }
  if (input.issueTaxReceipt) {
    if (!input.consumerEmail) {
      throw new AppError('CONSUMER_EMAIL_REQUIRED', 'consumerEmail is required when issueTaxReceipt is true', [
        { path: '/consumerEmail', message: 'is required when issueTaxReceipt is true' },
      ])
    }
    if (!input.contribution) {
      throw new AppError('TAX_RECEIPT_REQUIRES_CONTRIBUTION', 'a tax receipt can only be issued for a contribution', [
        { path: '/issueTaxReceipt', message: 'needs a contribution in the same request' },
      ])
    }
  }
}

function replayOrRefuse(stored: Allocation, requestHash: string, metrics: Metrics): AllocationResult {
  if (stored.requestHash !== requestHash) {
    throw new AppError('IDEMPOTENCY_KEY_REUSED', 'idempotency key was already used with a different request', [
      { path: 'idempotency-key', message: 'was first used with a different request; use a new key for a new request' },
    ])
  }
  metrics.allocationReplayed(stored.currencyCode)
  return { allocation: stored, replayed: true }
}

const inUse = (): AppError =>
  new AppError('IDEMPOTENCY_KEY_IN_USE', 'another request with this idempotency key is in progress; retry shortly', [
    { path: 'idempotency-key', message: 'is in use by a request that has not finished' },
  ])

/**
 * Allocates funds against a quote (docs/api-contract.md, "Funds allocations"). The same key with the same
 * request returns the original allocation; with a different request → IDEMPOTENCY_KEY_REUSED; a duplicate
 * still in flight after the lock timeout → IDEMPOTENCY_KEY_IN_USE. Requests that fail validation are not
 * remembered.
 *
 * New keys are written first: the write itself finds a key already used, so a new allocation costs one statement
 * (docs/write-costs.md, "One statement per new allocation"). A key this process has seen used is a replay for certain
 * and is answered from its stored allocation at once. Any other replay is priced again before the write finds its key
 * used, so anything pricing refuses (the quote past its retention, say) is refused only once the key is known to be
 * unused: a replay answers what its first request was answered, whatever has changed since.
 */
export async function allocateFunds(
  deps: AllocationDeps,
  principal: Principal,
  input: AllocationInput,
  idempotencyKey: string,
): Promise<AllocationResult> {
  if (!deps.access.seesAtOnce(principal, input.organisationId)) await deps.access.assertCanActOn(principal, input.organisationId)
  checkShape(input)
  const requestHash = requestHashOf(input)
  const keyRef = { organisationId: input.organisationId, idempotencyKey }
  if (deps.allocations.isKnownUsed(keyRef)) {
    const used = await deps.allocations.findByKey(keyRef)
    if (used) return replayOrRefuse(used, requestHash, deps.metrics)
  }
  let priced: { draft: AllocationDraft; receipt: NewTaxReceipt | null }
  try {
    priced = await draftAllocation(deps, principal, input, idempotencyKey, requestHash)
  } catch (error) {
    // A refusal of this request (not a failure to price it) is given only to a key not used yet.
    if (error instanceof AppError || error instanceof DomainError) {
      const used = await deps.allocations.findByKey(keyRef)
      if (used) return replayOrRefuse(used, requestHash, deps.metrics)
    }
    throw error
  }
  const { draft, receipt } = priced
  const { allocation } = draft
  // Losing a race to a duplicate means replaying its result; if that writer rolled back, try again.
  for (let attempt = 0; attempt < 3; attempt++) {
    let written: AllocationWrite
    try {
      written = await deps.allocations.insert(draft, receipt)
    } catch (error) {
      if (isLockTimeout(error)) throw inUse()
      throw error
    }
    if (written.written) {
      // Only a statement that wrote deliveries has anything for the worker to send now.
      if (written.deliveries) deps.webhooks.wake()
      deps.metrics.allocationCreated(allocation.currencyCode)
      return { allocation, replayed: false }
    }
    const stored = await deps.allocations.findByKey(keyRef)
    if (stored) return replayOrRefuse(stored, requestHash, deps.metrics)
  }
  throw inUse()
}

/** The allocation a request makes (with its event and, when asked for, its tax receipt), or the refusal of its pricing. */
async function draftAllocation(
  deps: AllocationDeps,
  principal: Principal,
  input: AllocationInput,
  idempotencyKey: string,
  requestHash: string,
): Promise<{ draft: AllocationDraft; receipt: NewTaxReceipt | null }> {
  const quote = await getQuote(deps, principal, input.quoteId)
  // An allocation is recorded for the quote's own organisation, within the quote's retention.
  if (quote.organisationId !== input.organisationId) throw notFound('quote')
  if (isPastQuoteRetention(quote.createdAt, deps.clock(), deps.quoteRetentionDays)) throw notFound('quote')
  if (input.currencyCode !== undefined && input.currencyCode !== quote.currencyCode) {
    throw new AppError('CURRENCY_MISMATCH', `currencyCode must be the quote's currency (${quote.currencyCode})`, [
      { path: '/currencyCode', message: `must be ${quote.currencyCode}` },
    ])
  }
  const split = splitAllocation(quote.locked, {
    credits: input.credits ? { amount: String(input.credits.amount) } : undefined,
    contribution: input.contribution
      ? { amount: String(input.contribution.amount), impactPartnerIds: input.contribution.impactPartnerIds }
      : undefined,
  })
  // The split has checked both amounts: a plain decimal of at most the currency's digits goes to text without a Decimal.
  const digits = quote.locked.minorUnits
  const money = (amount: number | undefined): string | null =>
    amount === undefined ? null : formatMinorUnits(decimalTextToMinorUnits(String(amount), digits), digits)
  const createdAt = deps.clock()
  const allocation: Allocation = {
    id: newId(),
    organisationId: input.organisationId,
    quoteId: quote.id,
    idempotencyKey,
    requestHash,
    currencyCode: quote.currencyCode,
    creditsAmount: money(input.credits?.amount),
    contributionAmount: money(input.contribution?.amount),
    taxLiability: quote.taxLiability,
    issueTaxReceipt: input.issueTaxReceipt === true,
    split,
    createdAt,
    collectionOrganisationId: principal.organisationId,
    consumerReference: quote.request.consumer.reference,
    merchant: quote.request.merchant ?? null,
    profitShare: await profitShareFor(deps, quote.organisationId, split, createdAt),
  }
  let receipt: NewTaxReceipt | null = null
  if (input.issueTaxReceipt && input.consumerEmail && allocation.contributionAmount !== null) {
    const names = new Map(quote.locked.partners.map((p) => [p.id, p.name]))
    const settings = await deps.reference.organisationSettings(quote.organisationId)
    receipt = {
      id: newId(),
      consumerEmail: input.consumerEmail,
      payload: {
        fundsAllocationId: allocation.id,
        organisationName: settings.tradingName,
        currencyCode: quote.currencyCode,
        totalPaid: allocation.contributionAmount,
        contributions: split.contributions.map((e) => ({
          impactPartnerName: names.get(e.impactPartnerId) ?? e.impactPartnerId,
          impactAmount: e.impactAmount,
        })),
        allocatedAt: allocation.createdAt.toISOString(),
      },
    }
  }
  const event = recordEvent({
    id: newId(),
    type: 'allocation.created',
    organisationId: allocation.organisationId,
    sourceId: allocation.id,
    createdAt: allocation.createdAt,
    footprint: quote.locked.footprint,
  })
  return { draft: { allocation, event }, receipt }
}

/**
 * Who receives how much of the allocation's service fee (docs/pricing.md, "Profit share"), from its organisation's
 * chain as this process knows it (cached like organisation settings) and the exchange rates in use; null when no
 * organisation of the chain keeps a share, which is the common case and costs a cache read.
 */
async function profitShareFor(
  deps: Pick<AllocationDeps, 'reference'>,
  organisationId: string,
  split: AllocationSplit,
  at: Date,
): Promise<ProfitShareSplit | null> {
  const chain = deps.reference.cachedProfitShareChain(organisationId) ?? (await deps.reference.profitShareChain(organisationId))
  if (!chain.anyShare) return null
  return splitProfitShare({
    fee: serviceFeeOf(split),
    fundsCurrencyCode: split.currencyCode,
    chain: chain.beneficiaries,
    settlementModel: chain.settlementModel,
    date: at.toISOString().slice(0, 10),
    fx: (deps.reference.cachedFxInUse() ?? (await deps.reference.fxInUse())).table,
  })
}

async function allocationOfTree(
  deps: Pick<AllocationDeps, 'access' | 'allocations'>,
  principal: Principal,
  id: string,
): Promise<Allocation> {
  const allocation = await deps.allocations.findById(id)
  if (!allocation || !(await deps.access.canSee(principal, allocation.organisationId))) throw notFound('funds allocation')
  return allocation
}

/** A stored allocation of the caller's tree. */
export function getAllocation(deps: Pick<AllocationDeps, 'access' | 'allocations'>, principal: Principal, id: string): Promise<Allocation> {
  return allocationOfTree(deps, principal, id)
}

/** Reverses an allocation in full (negated amounts, same rates); a second reversal → ALREADY_REVERSED. */
export async function reverseFundsAllocation(
  deps: Pick<AllocationDeps, 'access' | 'allocations' | 'quotes' | 'reference' | 'clock' | 'metrics' | 'webhooks'>,
  principal: Principal,
  id: string,
): Promise<AllocationView> {
  const allocation = await allocationOfTree(deps, principal, id)
  const reversal = { id: newId(), allocationId: allocation.id, organisationId: allocation.organisationId, createdAt: deps.clock() }
  const quote = await getQuote(deps, principal, allocation.quoteId)
  const event = recordEvent({
    id: newId(),
    type: 'allocation.reversed',
    organisationId: allocation.organisationId,
    sourceId: reversal.id,
    createdAt: reversal.createdAt,
    footprint: quote.locked.footprint,
  })
  if (!(await deps.allocations.insertReversal(reversal, event)))
    throw new AppError('ALREADY_REVERSED', 'funds allocation is already reversed')
  deps.webhooks.wake()
  deps.metrics.allocationReversed(allocation.currencyCode)
  return { ...allocation, split: reverseAllocation(allocation.split), createdAt: reversal.createdAt, reversalId: reversal.id }
}
