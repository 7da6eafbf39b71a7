// Allocation summary → wire (docs/summary.md). Sums are integer minor units (grams for tonnes) until here; each becomes
// a JSON number at the currency's precision through its exact decimal string, like every amount of the API.
import { formatMinorUnits, minorUnitsOf } from '../../domain/money.js'
import { sectionTotal, type CurrencyTotals, type SectionTotals } from '../../domain/summary.js'
import type { AllocationSummary } from '../../services/summary.js'
import type { AllocationSummaryResponse } from '../schemas/summary.js'

const QUANTITY_DIGITS = 6

const amount = (minor: bigint, digits: number) => Number(formatMinorUnits(minor, digits))

function section(s: SectionTotals, digits: number) {
  return {
    total: amount(sectionTotal(s), digits),
    impact: amount(s.impact, digits),
    impactTax: amount(s.impactTax, digits),
    serviceFee: amount(s.serviceFee, digits),
    serviceFeeTax: amount(s.serviceFeeTax, digits),
  }
}

function presentTotals(t: CurrencyTotals) {
  const digits = minorUnitsOf(t.currencyCode)
  return {
    currencyCode: t.currencyCode,
    allocations: t.allocations,
    reversals: t.reversals,
    credits: { ...section(t.credits, digits), quantityTonnes: amount(t.credits.quantityGrams, QUANTITY_DIGITS) },
    contributions: section(t.contributions, digits),
  }
}

export const presentSummary = (summary: AllocationSummary): AllocationSummaryResponse => ({
  dateTimeFrom: summary.from.toISOString(),
  dateTimeTo: summary.to.toISOString(),
  timeZone: summary.timeZone,
  groupBy: summary.groupBy,
  totals: summary.totals.map(presentTotals),
  groups: summary.groups.map((g) => ({
    key: g.key,
    ...(g.name !== undefined ? { name: g.name } : {}),
    ...(g.countryCode !== undefined ? { countryCode: g.countryCode } : {}),
    ...(g.from ? { dateTimeFrom: g.from.toISOString() } : {}),
    ...(g.to ? { dateTimeTo: g.to.toISOString() } : {}),
    totals: g.totals.map(presentTotals),
  })),
})
