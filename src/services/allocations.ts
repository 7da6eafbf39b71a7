// Funds allocations: split an amount paid with a quote's locked rates and record it exactly once per
// Idempotency-Key. The whole write is one statement (allocation, entries, receipt outbox row), so a
// crash leaves either all of it or nothing, and Postgres' unique key decides concurrent duplicates.
import { createHash, randomUUID } from 'node:crypto'
import type { AppContext } from '../context.js'
import type { StoredAllocationEntry } from '../db/database.js'
import {
  findAllocationById,
  insertAllocationWithReceipt,
  insertReversal,
  type AllocationRecord,
  type NewAllocation,
} from '../db/repositories/allocations.js'
import { reverseAllocation, splitAllocation } from '../domain/allocation.js'
import { formatDecimal, formatRate, minorUnitsOf, parseDecimal } from '../domain/money.js'
import type { AllocationSplit } from '../domain/types.js'
import { AppError, notFound } from '../errors.js'
import type { Principal } from './access.js'
import { getQuote, type StoredQuote } from './quotes.js'

export interface AllocationInput {
  organisationId: string
  quoteId: string
  currencyCode?: string | undefined
  credits?: { amount: number } | null | undefined
  contribution?: { amount: number; impactPartnerIds?: string[] | undefined } | null | undefined
  issueTaxReceipt?: boolean | undefined
  consumerEmail?: string | undefined
}

export interface PresentableAllocation {
  id: string
  quoteId: string
  currencyCode: string
  split: AllocationSplit
  taxLiability: 'platform' | 'organisation'
  createdAt: Date
  reversalId?: string
}

/** Turns an allocation into its exact wire body (the route supplies it; services know no HTTP). */
export type AllocationPresenter = (allocation: PresentableAllocation) => string

export interface AllocationResult {
  body: string
  replayed: boolean
}

const ROUTE = 'POST /funds/allocations'

/** JSON with object keys sorted at every level: equal requests hash equally whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`
  }
  return JSON.stringify(value)
}

export const requestHashOf = (input: AllocationInput): Buffer =>
  createHash('sha256')
    .update(`${ROUTE}\n${canonicalJson(input)}`)
    .digest()

const isLockTimeout = (error: unknown): boolean => (error as { code?: string } | null)?.code === '55P03'

function checkShape(input: AllocationInput): void {
  if (!input.credits && !input.contribution) {
    throw new AppError('BAD_REQUEST', 'at least one of credits or contribution is required', [
      { path: '/credits', message: 'credits or contribution is required' },
      { path: '/contribution', message: 'credits or contribution is required' },
    ])
  }
  if (input.issueTaxReceipt) {
    if (!input.consumerEmail) {
      throw new AppError('BAD_REQUEST', 'consumerEmail is required when issueTaxReceipt is true', [
        { path: '/consumerEmail', message: 'is required when issueTaxReceipt is true' },
      ])
    }
    if (!input.contribution) {
      throw new AppError('BAD_REQUEST', 'a tax receipt can only be issued for a contribution', [
        { path: '/issueTaxReceipt', message: 'needs a contribution in the same request' },
      ])
    }
  }
}

async function quoteForAllocation(ctx: AppContext, principal: Principal, input: AllocationInput): Promise<StoredQuote> {
  const quote = await getQuote(ctx, principal, input.quoteId)
  // An allocation is recorded for the quote's own organisation.
  if (quote.organisationId !== input.organisationId) throw notFound('quote')
  if (input.currencyCode !== undefined && input.currencyCode !== quote.currencyCode) {
    throw new AppError('BAD_REQUEST', `currencyCode must be the quote's currency (${quote.currencyCode})`, [
      { path: '/currencyCode', message: `must be ${quote.currencyCode}` },
    ])
  }
  return quote
}

function entriesOf(split: AllocationSplit): StoredAllocationEntry[] {
  return [
    ...split.credits.map((e) => ({
      kind: 'credit' as const,
      projectId: e.projectId,
      impactPartnerId: e.impactPartnerId,
      ...amountsOf(e),
      quantityTonnes: e.quantityTonnes,
    })),
    ...split.contributions.map((e) => ({
      kind: 'contribution' as const,
      projectId: null,
      impactPartnerId: e.impactPartnerId,
      ...amountsOf(e),
      quantityTonnes: null,
    })),
  ]
}

const amountsOf = (e: AllocationSplit['credits'][number] | AllocationSplit['contributions'][number]) => ({
  impactAmount: e.impactAmount,
  impactSalesTaxAmount: e.impactSalesTaxAmount,
  impactSalesTaxRate: e.impactSalesTaxRate,
  serviceFeeAmount: e.serviceFeeAmount,
  serviceFeeSalesTaxAmount: e.serviceFeeSalesTaxAmount,
  serviceFeeSalesTaxRate: e.serviceFeeSalesTaxRate,
})

function replayOrRefuse(stored: { requestHash: Buffer; response: string }, requestHash: Buffer): AllocationResult {
  if (!stored.requestHash.equals(requestHash)) {
    throw new AppError('IDEMPOTENCY_KEY_REUSED', 'idempotency key was already used with a different request', [
      { path: 'idempotency-key', message: 'was first used with a different request; use a new key for a new request' },
    ])
  }
  return { body: stored.response, replayed: true }
}

/**
 * Allocates funds against a quote (spec 4.4, DESIGN.md §9). The same key with the same request returns
 * the original body; with a different request → IDEMPOTENCY_KEY_REUSED; a duplicate still in flight
 * after IDEMPOTENCY_LOCK_TIMEOUT_MS → IDEMPOTENCY_KEY_IN_USE. Requests that fail validation are not
 * remembered.
 */
export async function allocateFunds(
  ctx: AppContext,
  principal: Principal,
  input: AllocationInput,
  idempotencyKey: string,
  present: AllocationPresenter,
): Promise<AllocationResult> {
  await ctx.access.assertCanActOn(principal, input.organisationId)
  checkShape(input)
  const requestHash = requestHashOf(input)
  // Replays first: one indexed read (shared with concurrent requests), no pricing.
  const used = await ctx.allocationKeys.submit({ organisationId: input.organisationId, idempotencyKey })
  if (used) return replayOrRefuse(used, requestHash)

  const quote = await quoteForAllocation(ctx, principal, input)
  const split = splitAllocation(quote.locked, {
    credits: input.credits ? { amount: String(input.credits.amount) } : undefined,
    contribution: input.contribution
      ? { amount: String(input.contribution.amount), impactPartnerIds: input.contribution.impactPartnerIds }
      : undefined,
  })
  const digits = quote.locked.minorUnits
  const money = (amount: number | undefined): string | null =>
    amount === undefined ? null : formatDecimal(parseDecimal(String(amount)), digits)
  const createdAt = ctx.clock()
  const id = randomUUID()
  const response = present({ id, quoteId: quote.id, currencyCode: quote.currencyCode, split, taxLiability: quote.taxLiability, createdAt })
  const contributionAmount = money(input.contribution?.amount)
  let receipt: NewAllocation['receipt'] = null
  if (input.issueTaxReceipt && input.consumerEmail && contributionAmount !== null) {
    const names = new Map(quote.locked.partners.map((p) => [p.id, p.name]))
    const settings = await ctx.reference.organisationSettings(quote.organisationId)
    receipt = {
      id: randomUUID(),
      consumerEmail: input.consumerEmail,
      payload: {
        fundsAllocationId: id,
        organisationName: settings.tradingName,
        currencyCode: quote.currencyCode,
        totalPaid: contributionAmount,
        contributions: split.contributions.map((e) => ({
          impactPartnerName: names.get(e.impactPartnerId) ?? e.impactPartnerId,
          impactAmount: e.impactAmount,
        })),
        allocatedAt: createdAt.toISOString(),
      },
    }
  }
  const allocation: NewAllocation = {
    id,
    organisationId: input.organisationId,
    quoteId: quote.id,
    idempotencyKey,
    requestHash,
    currencyCode: quote.currencyCode,
    creditsAmount: money(input.credits?.amount),
    contributionAmount,
    taxLiability: quote.taxLiability,
    issueTaxReceipt: input.issueTaxReceipt === true,
    entries: entriesOf(split),
    response,
    createdAt,
    receipt,
  }
  // Losing a race to a duplicate means replaying its result; if that writer rolled back, try again.
  for (let attempt = 0; attempt < 3; attempt++) {
    let inserted: boolean
    try {
      // Allocations without a receipt share one multi-row INSERT with their concurrent neighbours.
      inserted = allocation.receipt
        ? await insertAllocationWithReceipt(ctx.database.db, allocation)
        : await ctx.allocationWriter.submit(allocation)
    } catch (error) {
      if (isLockTimeout(error)) throw inUse()
      throw error
    }
    if (inserted) return { body: response, replayed: false }
    const stored = await ctx.allocationKeys.submit({ organisationId: input.organisationId, idempotencyKey })
    if (stored) return replayOrRefuse(stored, requestHash)
  }
  throw inUse()
}

const inUse = (): AppError =>
  new AppError('IDEMPOTENCY_KEY_IN_USE', 'another request with this idempotency key is in progress; retry shortly', [
    { path: 'idempotency-key', message: 'is in use by a request that has not finished' },
  ])

async function allocationOfTree(ctx: AppContext, principal: Principal, id: string): Promise<AllocationRecord> {
  const record = await findAllocationById(ctx.database.db, id)
  if (!record || !(await ctx.access.canSee(principal, record.organisationId))) throw notFound('funds allocation')
  return record
}

/** The stored allocation, exactly as it was created. */
export async function getAllocation(ctx: AppContext, principal: Principal, id: string): Promise<string> {
  return (await allocationOfTree(ctx, principal, id)).response
}

/** The split of a stored allocation, amounts at the currency's minor units and rates in shortest form. */
function splitOf(record: AllocationRecord): AllocationSplit {
  const digits = minorUnitsOf(record.currencyCode)
  const money = (value: string) => formatDecimal(parseDecimal(value), digits)
  const common = (e: StoredAllocationEntry) => ({
    impactAmount: money(e.impactAmount),
    impactSalesTaxAmount: money(e.impactSalesTaxAmount),
    impactSalesTaxRate: formatRate(e.impactSalesTaxRate),
    serviceFeeAmount: money(e.serviceFeeAmount),
    serviceFeeSalesTaxAmount: money(e.serviceFeeSalesTaxAmount),
    serviceFeeSalesTaxRate: formatRate(e.serviceFeeSalesTaxRate),
  })
  return {
    currencyCode: record.currencyCode,
    credits: record.entries
      .filter((e) => e.kind === 'credit')
      .map((e) => ({
        projectId: e.projectId ?? '',
        impactPartnerId: e.impactPartnerId,
        ...common(e),
        quantityTonnes: formatDecimal(parseDecimal(e.quantityTonnes ?? '0'), 6),
      })),
    contributions: record.entries
      .filter((e) => e.kind === 'contribution')
      .map((e) => ({ impactPartnerId: e.impactPartnerId, ...common(e) })),
  }
}

/** Reverses an allocation in full (negated amounts, same rates); a second reversal → ALREADY_REVERSED. */
export async function reverseFundsAllocation(
  ctx: AppContext,
  principal: Principal,
  id: string,
  present: AllocationPresenter,
): Promise<string> {
  const record = await allocationOfTree(ctx, principal, id)
  const reversalId = randomUUID()
  const response = present({
    id: record.id,
    quoteId: record.quoteId,
    currencyCode: record.currencyCode,
    split: reverseAllocation(splitOf(record)),
    taxLiability: record.taxLiability,
    createdAt: ctx.clock(),
    reversalId,
  })
  const recorded = await insertReversal(ctx.database.db, {
    id: reversalId,
    allocationId: record.id,
    organisationId: record.organisationId,
    response,
    createdAt: ctx.clock(),
  })
  if (!recorded) throw new AppError('ALREADY_REVERSED', 'funds allocation is already reversed')
  return response
}
