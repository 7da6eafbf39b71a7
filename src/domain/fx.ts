// Currency conversion over a dated reference-rate table (pure: the table is an argument).
import type { FxTable } from './types.js'
import { Decimal, minorUnitsOf } from './money.js'
import { DomainError } from './errors.js'
import { REFERENCE_FX_RATES } from './data/fx-rates.js'

export { fxTableFromEcbRates, REFERENCE_FX_RATES } from './data/fx-rates.js'

function ratePerBase(code: string, table: FxTable): Decimal | undefined {
  if (code === table.base) return new Decimal(1)
  const rate = Object.hasOwn(table.rates, code) ? table.rates[code] : undefined
  return rate === undefined ? undefined : new Decimal(rate)
}

function crossRate(from: string, to: string, table: FxTable): { rate: Decimal; text: string } | null {
  if (!isPricedCurrency(from, table) || !isPricedCurrency(to, table)) return null
  const rate = from === to ? new Decimal(1) : (ratePerBase(to, table) as Decimal).div(ratePerBase(from, table) as Decimal)
  return { rate, text: rate.toString() }
}

/**
 * True when the currency can be quoted: it is an ISO 4217 code with minor units and the FX table
 * (default: the embedded reference rates) has a positive rate for it.
 */
export function isPricedCurrency(code: string, table: FxTable = REFERENCE_FX_RATES): boolean {
  return hasMinorUnits(code) && isPositiveRate(ratePerBase(code, table))
}

function hasMinorUnits(code: string): boolean {
  try {
    minorUnitsOf(code)
    return true
  } catch {
    return false
  }
}

function isPositiveRate(rate: Decimal | undefined): boolean {
  return rate !== undefined && rate.isFinite() && rate.greaterThan(0)
}

/**
 * Converts `amount` from one currency to another through the table's base currency.
 * `rate` is the number of `to` units per 1 `from` unit, (to per base) / (from per base), at the
 * Decimal's full precision (50 significant digits), as a string so a quote can lock it;
 * `amount` is `amount × rate`, unrounded (callers round at their own named points).
 * Identity conversions have rate "1". Throws `UNSUPPORTED_CURRENCY` when either side is not priced.
 */
export function convert(amount: Decimal, from: string, to: string, table: FxTable): { amount: Decimal; rate: string } {
  const cross = crossRate(from, to, table)
  if (cross === null) {
    const code = isPricedCurrency(from, table) ? to : from
    throw new DomainError('UNSUPPORTED_CURRENCY', `unsupported currency ${JSON.stringify(code)}`)
  }
  return from === to ? { amount, rate: '1' } : { amount: amount.times(cross.rate), rate: cross.text }
}
