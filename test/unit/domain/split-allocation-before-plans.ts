// splitAllocation (src/domain/allocation.ts) as it computed every allocation before its per-section plans and its
// bigint quantities: parsing the rates, weights and unit prices for each allocation, and dividing with Decimal. Kept
// only as the reference the property tests compare the current function with, byte for byte.
import type {
  AllocationEntryAmounts,
  AllocationSplit,
  ContributionAllocationEntry,
  CreditAllocationEntry,
  LockedQuote,
} from '../../../src/domain/types.js'
import {
  Decimal,
  formatDecimal,
  formatMinorUnits,
  formatRate,
  fromMinorUnits,
  parseDecimal,
  roundHalfUp,
  splitByWeights,
  toMinorUnits,
} from '../../../src/domain/money.js'
import { DomainError } from '../../../src/domain/errors.js'
import { splitWeightsOf } from '../../../src/domain/pricing.js'
import type { AllocationRequest } from '../../../src/domain/allocation.js'

/** Decimal places of the tonnes recorded per project. */
const QUANTITY_DECIMALS = 6

function paidMinorUnits(amount: string, digits: number, path: string): bigint {
  const value = parseDecimal(amount, path)
  if (!value.greaterThan(0)) throw new DomainError('AMOUNT_OUT_OF_RANGE', 'amount must be greater than 0', path)
  return toMinorUnits(value, digits, path)
}

/**
 * Splits `paid` into [impact, impactTax, serviceFee, serviceFeeTax] by the section's raw weights
 * [1, ti, f, f·tf], then each component across the recipients by `recipientWeights`.
 * Returns one [impact, impactTax, serviceFee, serviceFeeTax] tuple per recipient.
 */
function splitSection(
  paid: bigint,
  rates: { readonly impactTax: string; readonly serviceFee: string; readonly serviceFeeTax: string },
  recipientWeights: readonly string[],
): bigint[][] {
  const components = splitByWeights(paid, splitWeightsOf(rates))
  const perComponent = components.map((component) => splitByWeights(component, recipientWeights))
  return recipientWeights.map((_, recipient) => perComponent.map((parts) => parts[recipient] ?? 0n))
}

/** One entry's amounts from its [impact, impactTax, serviceFee, serviceFeeTax] minor units, with the raw rates. */
function entryAmounts(
  parts: readonly bigint[] | undefined,
  money: (minor: bigint) => string,
  rates: { readonly impactTax: string; readonly serviceFeeTax: string },
): AllocationEntryAmounts {
  const [impact = 0n, impactTax = 0n, serviceFee = 0n, serviceFeeTax = 0n] = parts ?? []
  return {
    impactAmount: money(impact),
    impactSalesTaxAmount: money(impactTax),
    impactSalesTaxRate: formatRate(rates.impactTax),
    serviceFeeAmount: money(serviceFee),
    serviceFeeSalesTaxAmount: money(serviceFeeTax),
    serviceFeeSalesTaxRate: formatRate(rates.serviceFeeTax),
  }
}

/** splitAllocation as it was (see the header). */
export function splitAllocationBeforePlans(quote: LockedQuote, request: AllocationRequest): AllocationSplit {
  const digits = quote.minorUnits
  const money = (minor: bigint): string => formatMinorUnits(minor, digits)

  let credits: CreditAllocationEntry[] = []
  if (request.credits !== undefined) {
    const section = quote.credits
    if (section === undefined) throw new DomainError('NO_CREDITS_IN_QUOTE', 'the quote has no credits section', '/credits')
    const paid = paidMinorUnits(request.credits.amount, digits, '/credits/amount')
    const parts = splitSection(
      paid,
      section.taxRates,
      section.projects.map((project) => project.weight),
    )
    credits = section.projects.map((project, i) => {
      const amounts = entryAmounts(parts[i], money, section.taxRates)
      const impactAmount = fromMinorUnits(parts[i]?.[0] ?? 0n, digits)
      const unitPrice = new Decimal(project.unitPrice)
      const quantity = unitPrice.isZero() ? new Decimal(0) : roundHalfUp(impactAmount.div(unitPrice), QUANTITY_DECIMALS)
      return {
        projectId: project.id,
        impactPartnerId: project.impactPartnerId,
        ...amounts,
        quantityTonnes: formatDecimal(quantity, QUANTITY_DECIMALS),
      }
    })
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
    const parts = splitSection(
      paid,
      section.taxRates,
      chosen.map(() => '1'),
    )
    contributions = chosen.map((impactPartnerId, i) => ({ impactPartnerId, ...entryAmounts(parts[i], money, section.taxRates) }))
  }

  return { currencyCode: quote.currencyCode, credits, contributions }
}
