// Currency conversion over a dated reference-rate table (pure: the table is an argument).
import type { FxTable } from './types.js'
import { Decimal, minorUnitsOf } from './money.js'
import { DomainError } from './errors.js'
import { REFERENCE_FX_RATES } from './data/fx-rates.js'

export { REFERENCE_FX_RATES } from './data/fx-rates.js'

function ratePerBase(code: string, table: FxTable): Decimal | undefined {
  if (code === table.base) return new Decimal(1)
  const rate = Object.hasOwn(table.rates, code) ? table.rates[code] : undefined
  return rate === undefined ? undefined : new Decimal(rate)
}

/**
 * True when the currency can be quoted: it is an ISO 4217 code with minor units and the FX table
 * (default: the embedded reference rates) has a positive rate for it.
 */
export function isPricedCurrency(code: string, table: FxTable = REFERENCE_FX_RATES): boolean {
  try {
    minorUnitsOf(code)
  } catch {
    return false
  }
  const rate = ratePerBase(code, table)
  return rate !== undefined && rate.isFinite() && rate.isPositive() && !rate.isZero()
}

/**
 * Converts `amount` from one currency to another through the table's base currency.
 * `rate` is the number of `to` units per 1 `from` unit, (to per base) / (from per base), at the
 * Decimal's full precision (50 significant digits), as a string so a quote can lock it;
 * `amount` is `amount × rate`, unrounded (callers round at their own named points).
 * Identity conversions have rate "1". Throws `UNSUPPORTED_CURRENCY` when either side is not priced.
 */
export function convert(amount: Decimal, from: string, to: string, table: FxTable): { amount: Decimal; rate: string } {
  for (const code of [from, to]) {
    if (!isPricedCurrency(code, table)) {
      throw new DomainError('UNSUPPORTED_CURRENCY', `unsupported currency ${JSON.stringify(code)}`)
    }
  }
  if (from === to) return { amount, rate: '1' }
  const rate = (ratePerBase(to, table) as Decimal).div(ratePerBase(from, table) as Decimal)
  return { amount: amount.times(rate), rate: rate.toString() }
}
