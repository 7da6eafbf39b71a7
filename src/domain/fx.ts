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

interface CrossRate {
  readonly rate: Decimal
  readonly text: string
}

// A quote converts with the same few pairs of one table again and again, and a 50-digit division costs more
// than the rest of the conversion: each table (immutable, replaced as a whole on import) keeps its pairs.
const crossRatesByTable = new WeakMap<FxTable, Map<string, CrossRate | null>>()

function crossRate(from: string, to: string, table: FxTable): CrossRate | null {
  let pairs = crossRatesByTable.get(table)
  if (pairs === undefined) crossRatesByTable.set(table, (pairs = new Map()))
  const key = `${from}>${to}`
  let cross = pairs.get(key)
  if (cross === undefined) {
    cross = computeCrossRate(from, to, table)
    // Codes come from requests: past a bound (far above the pairs in use), compute without keeping.
    if (pairs.size < MAX_PAIRS_PER_TABLE) pairs.set(key, cross)
  }
  return cross
}

const MAX_PAIRS_PER_TABLE = 4096

function computeCrossRate(from: string, to: string, table: FxTable): CrossRate | null {
  if (!isPriced(from, table) || !isPriced(to, table)) return null
  const rate = from === to ? new Decimal(1) : (ratePerBase(to, table) as Decimal).div(ratePerBase(from, table) as Decimal)
  return { rate, text: rate.toString() }
}

/**
 * True when the currency can be quoted: it is an ISO 4217 code with minor units and the FX table
 * (default: the embedded reference rates) has a positive rate for it.
 */
export function isPricedCurrency(code: string, table: FxTable = REFERENCE_FX_RATES): boolean {
  return crossRate(code, code, table) !== null
}

function isPriced(code: string, table: FxTable): boolean {
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
    const code = crossRate(from, from, table) === null ? from : to
    throw new DomainError('UNSUPPORTED_CURRENCY', `unsupported currency ${JSON.stringify(code)}`)
  }
  return from === to ? { amount, rate: '1' } : { amount: amount.times(cross.rate), rate: cross.text }
}
