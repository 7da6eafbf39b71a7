// Splits an amount paid against a locked quote into the per-project and per-partner entries of an
// allocation (docs/pricing.md, "Allocating"), exactly: Σ entries = amount paid. Also the reversal of such a split.
import type { AllocationEntryAmounts, AllocationSplit, ContributionAllocationEntry, CreditAllocationEntry, LockedQuote } from './types.js'
import {
  Decimal,
  decimalTextToMinorUnits,
  formatDecimal,
  formatMinorUnits,
  formatRate,
  fromMinorUnits,
  parseDecimal,
  plainDecimalOf,
  quotientHalfUp,
  roundHalfUp,
  scaledWeightsOf,
  splitByScaledWeights,
  toMinorUnits,
  type PlainDecimal,
  type ScaledWeights,
} from './money.js'
import { DomainError } from './errors.js'
import { splitWeightsOf } from './pricing.js'

export interface AllocationRequest {
  readonly credits?: { readonly amount: string } | undefined
  readonly contribution?: { readonly amount: string; readonly impactPartnerIds?: readonly string[] | undefined } | undefined
}

/** Decimal places of the tonnes recorded per project. */
export const QUANTITY_DECIMALS = 6

// An amount above zero written as a plain decimal: digits, at least one of them not 0, and at most one point.
const PLAIN_POSITIVE_AMOUNT = /^(?=[\d.]*[1-9])\d+(?:\.\d+)?$/

function paidMinorUnits(amount: string, digits: number, path: string): bigint {
  // The common case without building a Decimal: decimalTextToMinorUnits gives toMinorUnits' answer and errors, and
  // the pattern has already excluded what the checks below refuse first (not a number, not above zero).
  if (PLAIN_POSITIVE_AMOUNT.test(amount)) return decimalTextToMinorUnits(amount, digits, path)
  const value = parseDecimal(amount, path)
  if (!value.greaterThan(0)) throw new DomainError('AMOUNT_OUT_OF_RANGE', 'amount must be greater than 0', path)
  return toMinorUnits(value, digits, path)
}

type SectionTaxRates = { readonly impactTax: string; readonly serviceFee: string; readonly serviceFeeTax: string }

/** What splitting a section's payments needs from its rates: the same for every allocation of the quote. */
interface SectionPlan {
  /** The raw weights [1, ti, f, f·tf] (pricing.ts, splitWeightsOf), scaled. */
  readonly components: ScaledWeights
  /** The raw rates every entry carries, in shortest form. */
  readonly impactTaxRate: string
  readonly serviceFeeTaxRate: string
}

/** A credits section's plan: with its projects' weights, scaled, and their unit prices as plain decimals when they are. */
interface CreditsPlan extends SectionPlan {
  readonly projectWeights: ScaledWeights
  readonly unitPrices: readonly (PlainDecimal | undefined)[]
}

const sectionPlanOf = (rates: SectionTaxRates): SectionPlan => ({
  components: scaledWeightsOf(splitWeightsOf(rates)),
  impactTaxRate: formatRate(rates.impactTax),
  serviceFeeTaxRate: formatRate(rates.serviceFeeTax),
})

// A quote's sections never change once it is locked, and a quote being allocated stays in the quote cache
// (src/services/quote-store.ts), so its plans are made once per section object rather than per allocation. Keyed by the
// object itself: the plan of a section no longer referenced goes with it.
const creditsPlans = new WeakMap<NonNullable<LockedQuote['credits']>, CreditsPlan>()
const contributionPlans = new WeakMap<LockedQuote['contribution'], SectionPlan>()

function creditsPlanOf(section: NonNullable<LockedQuote['credits']>): CreditsPlan {
  let plan = creditsPlans.get(section)
  if (plan === undefined) {
    plan = {
      ...sectionPlanOf(section.taxRates),
      projectWeights: scaledWeightsOf(section.projects.map((project) => project.weight)),
      unitPrices: section.projects.map((project) => plainDecimalOf(project.unitPrice)),
    }
    creditsPlans.set(section, plan)
  }
  return plan
}

function contributionPlanOf(section: LockedQuote['contribution']): SectionPlan {
  let plan = contributionPlans.get(section)
  if (plan === undefined) {
    plan = sectionPlanOf(section.taxRates)
    contributionPlans.set(section, plan)
  }
  return plan
}

/** n equal weights, scaled (what scaledWeightsOf gives for n times "1"). */
function equalWeights(n: number): ScaledWeights {
  if (n === 0) throw new RangeError('split weights must not all be zero')
  return { scaled: new Array<bigint>(n).fill(1n), sum: BigInt(n) }
}

/**
 * Splits `paid` into [impact, impactTax, serviceFee, serviceFeeTax] by the section's raw weights
 * [1, ti, f, f·tf], then each component across the recipients by `recipientWeights`.
 * Returns one [impact, impactTax, serviceFee, serviceFeeTax] tuple per recipient.
 */
function splitSection(paid: bigint, components: ScaledWeights, recipientWeights: ScaledWeights): bigint[][] {
  const perComponent = splitByScaledWeights(paid, components).map((component) => splitByScaledWeights(component, recipientWeights))
  return recipientWeights.scaled.map((_, recipient) => perComponent.map((parts) => parts[recipient] ?? 0n))
}

/** One entry's amounts from its [impact, impactTax, serviceFee, serviceFeeTax] minor units, with the raw rates. */
function entryAmounts(parts: readonly bigint[] | undefined, money: (minor: bigint) => string, plan: SectionPlan): AllocationEntryAmounts {
  const [impact = 0n, impactTax = 0n, serviceFee = 0n, serviceFeeTax = 0n] = parts ?? []
  return {
    impactAmount: money(impact),
    impactSalesTaxAmount: money(impactTax),
    impactSalesTaxRate: plan.impactTaxRate,
    serviceFeeAmount: money(serviceFee),
    serviceFeeSalesTaxAmount: money(serviceFeeTax),
    serviceFeeSalesTaxRate: plan.serviceFeeTaxRate,
  }
}

/** impactAmount / unit price, half-up to QUANTITY_DECIMALS ("0.000000" if the price is 0). */
function quantityTonnesOf(impactMinor: bigint, digits: number, unitPrice: string, plainUnitPrice: PlainDecimal | undefined): string {
  if (plainUnitPrice !== undefined) {
    if (plainUnitPrice.units === 0n) return formatMinorUnits(0n, QUANTITY_DECIMALS)
    const exact = quotientHalfUp(impactMinor, digits, plainUnitPrice, QUANTITY_DECIMALS)
    if (exact !== undefined) return exact
  }
  const price = new Decimal(unitPrice)
  const quantity = price.isZero() ? new Decimal(0) : roundHalfUp(fromMinorUnits(impactMinor, digits).div(price), QUANTITY_DECIMALS)
  return formatDecimal(quantity, QUANTITY_DECIMALS)
}

/**
 * Splits the amounts paid for a quote (docs/pricing.md, "Allocating"), each in the quote currency:
 * - credits.amount → minor units (AMOUNT_PRECISION / AMOUNT_OUT_OF_RANGE at /credits/amount), split
 *   by [1, ti, f, f·tf], then each component across the quote's projects by their locked weights.
 *   `quantityTonnes` = impactAmount / project unitPrice, half-up to 6 dp ("0.000000" if the price
 *   is 0). A quote without credits (nature) → NO_CREDITS_IN_QUOTE at /credits.
 * - contribution.amount → the same by [1, 0, f, f·tf], then equally across the chosen partners:
 *   `impactPartnerIds` (duplicates ignored; omitted or empty = all the quote's contribution
 *   partners). An id not in the quote → IMPACT_PARTNER_NOT_FOUND at /contribution/impactPartnerIds/i
 *   (the first such i). Entries follow the quote's partner order, whatever the request order, so
 *   the same set always splits the same way. No partners in the quote → NO_CONTRIBUTION_PARTNERS.
 * Every entry carries the raw rates (impactSalesTaxRate = ti, serviceFeeSalesTaxRate = tf) in
 * shortest form; amounts have exactly the currency's minor-unit decimals. Σ of all credit entries
 * = credits.amount and Σ of all contribution entries = contribution.amount, exactly; allocating
 * exactly credits.amounts.total reproduces the quote's amounts.
 */
export function splitAllocation(quote: LockedQuote, request: AllocationRequest): AllocationSplit {
  const digits = quote.minorUnits
  const money = (minor: bigint): string => formatMinorUnits(minor, digits)

  let credits: CreditAllocationEntry[] = []
  if (request.credits !== undefined) {
    const section = quote.credits
    if (section === undefined) throw new DomainError('NO_CREDITS_IN_QUOTE', 'the quote has no credits section', '/credits')
    const paid = paidMinorUnits(request.credits.amount, digits, '/credits/amount')
    const plan = creditsPlanOf(section)
    const parts = splitSection(paid, plan.components, plan.projectWeights)
    credits = section.projects.map((project, i) => ({
      projectId: project.id,
      impactPartnerId: project.impactPartnerId,
      ...entryAmounts(parts[i], money, plan),
      quantityTonnes: quantityTonnesOf(parts[i]?.[0] ?? 0n, digits, project.unitPrice, plan.unitPrices[i]),
    }))
  }

  let contributions: ContributionAllocationEntry[] = []
  if (request.contribution !== undefined) {
    const section = quote.contribution
    const paid = paidMinorUnits(request.contribution.amount, digits, '/contribution/amount')
    if (section.impactPartnerIds.length === 0) {
      throw new DomainError('NO_CONTRIBUTION_PARTNERS', 'the quote has no contribution partners', '/contribution')
    }
    const requested = request.contribution.impactPartnerIds ?? []
    requested.forEach((id, i) => {
      if (!section.impactPartnerIds.includes(id)) {
        throw new DomainError('IMPACT_PARTNER_NOT_FOUND', 'impact partner not found in quote', `/contribution/impactPartnerIds/${i}`)
      }
    })
    const chosen = requested.length === 0 ? section.impactPartnerIds : section.impactPartnerIds.filter((id) => requested.includes(id))
    const plan = contributionPlanOf(section)
    const parts = splitSection(paid, plan.components, equalWeights(chosen.length))
    contributions = chosen.map((impactPartnerId, i) => ({ impactPartnerId, ...entryAmounts(parts[i], money, plan) }))
  }

  return { currencyCode: quote.currencyCode, credits, contributions }
}

/** Negates a formatted amount without reformatting it; zero stays unsigned ("0.00", never "-0.00"). */
function negate(amount: string): string {
  if (amount.startsWith('-')) return amount.slice(1)
  return new Decimal(amount).isZero() ? amount : `-${amount}`
}

/**
 * The reversal of an allocation (docs/pricing.md, "Allocating"): the same entries in the same order with every
 * amount and quantity negated, rates unchanged, zero amounts unsigned. Σ of the reversal = −Σ of
 * the original exactly, and reversing twice gives the original back.
 */
export function reverseAllocation(split: AllocationSplit): AllocationSplit {
  const amounts = <
    T extends { impactAmount: string; impactSalesTaxAmount: string; serviceFeeAmount: string; serviceFeeSalesTaxAmount: string },
  >(
    entry: T,
  ): T => ({
    ...entry,
    impactAmount: negate(entry.impactAmount),
    impactSalesTaxAmount: negate(entry.impactSalesTaxAmount),
    serviceFeeAmount: negate(entry.serviceFeeAmount),
    serviceFeeSalesTaxAmount: negate(entry.serviceFeeSalesTaxAmount),
  })
  return {
    currencyCode: split.currencyCode,
    credits: split.credits.map((entry) => ({ ...amounts(entry), quantityTonnes: negate(entry.quantityTonnes) })),
    contributions: split.contributions.map(amounts),
  }
}
