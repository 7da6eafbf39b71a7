// Money arithmetic for the whole service: the configured Decimal, ISO 4217 minor units, rounding at
// named points and the exact largest-remainder split (docs/pricing.md, "Money"). The only importer of decimal.js.
import { Decimal as DecimalJs } from 'decimal.js'
import currencyCodes from 'currency-codes'
import { DomainError } from './errors.js'

/**
 * The service's Decimal: 50 significant digits, ROUND_HALF_UP (ties away from zero), plain notation
 * for exponents in [-40, 40] so `toString()` never emits "1e-7" for the figures we handle.
 * Build instances from strings, bigints or other Decimals, never from JS floats.
 */
export const Decimal = DecimalJs.clone({
  precision: 50,
  rounding: DecimalJs.ROUND_HALF_UP,
  toExpNeg: -40,
  toExpPos: 40,
})
export type Decimal = DecimalJs

/**
 * 20 significant digits, ROUND_HALF_UP: for display-only ratios that are then rounded to at most
 * 2 decimal places (footprint equivalents). Never for money. Quotients of the figures involved
 * (1-dp grams or 2-dp areas over fixed constants) lie either exactly on a rounding tie or far
 * further from one than 20 digits can blur, so the rounded result equals the 50-digit one.
 */
export const DisplayDecimal = DecimalJs.clone({
  precision: 20,
  rounding: DecimalJs.ROUND_HALF_UP,
  toExpNeg: -40,
  toExpPos: 40,
})

// currency-codes' own lookup is a linear scan; index it once at load.
const DIGITS_BY_CODE: ReadonlyMap<string, number> = new Map(
  currencyCodes.data.filter((record) => Number.isInteger(record.digits)).map((record) => [record.code, record.digits]),
)

/**
 * ISO 4217 minor-unit digits of a currency (JPY 0, GBP 2, KWD 3, CLF 4), from `currency-codes`.
 * Input must be the upper-case alpha code. Throws `UNSUPPORTED_CURRENCY` for unknown codes.
 * Knowing the digits does not make a currency quotable: see `isPricedCurrency`.
 */
export function minorUnitsOf(currencyCode: string): number {
  const digits = DIGITS_BY_CODE.get(currencyCode)
  if (digits === undefined) {
    throw new DomainError('UNSUPPORTED_CURRENCY', `unsupported currency ${JSON.stringify(currencyCode)}`)
  }
  return digits
}

/**
 * Parses a decimal string (or passes a Decimal through). Throws `AMOUNT_OUT_OF_RANGE` at `path`
 * when the value is not a finite decimal number. No rounding.
 */
export function parseDecimal(value: string | Decimal, path?: string): Decimal {
  let parsed: Decimal
  try {
    parsed = typeof value === 'string' ? new Decimal(value.trim()) : value
  } catch {
    throw new DomainError('AMOUNT_OUT_OF_RANGE', 'amount must be a finite decimal number', path)
  }
  if (!parsed.isFinite()) {
    throw new DomainError('AMOUNT_OUT_OF_RANGE', 'amount must be a finite decimal number', path)
  }
  return parsed
}

const PLAIN_DECIMAL = /^(-?)(\d+)(?:\.(\d+))?$/

/**
 * A plain decimal string (as Postgres prints a numeric: "-12.3400") as an integer count of minor units, exactly, without
 * building a Decimal: the same answer and errors as toMinorUnits(parseDecimal(text)), for the hot paths that read sums
 * from the database. Anything else (an exponent, spaces) goes through decimal.js.
 */
export function decimalTextToMinorUnits(text: string, digits: number, path?: string): bigint {
  const match = PLAIN_DECIMAL.exec(text)
  if (!match) return toMinorUnits(parseDecimal(text, path), digits, path)
  const [, sign, whole = '', fraction = ''] = match
  const significant = fraction.replace(/0+$/, '')
  if (significant.length > digits) {
    throw new DomainError('AMOUNT_PRECISION', `amount must have at most ${digits} decimal places`, path)
  }
  const minor = BigInt(whole + significant.padEnd(digits, '0'))
  return sign === '-' ? -minor : minor
}

/** A non-negative plain decimal as an integer at its own scale: "12.50" is { units: 1250n, scale: 2 }. */
export interface PlainDecimal {
  readonly units: bigint
  readonly scale: number
}

const UNSIGNED_PLAIN_DECIMAL = /^(\d+)(?:\.(\d+))?$/

/** `text` as a PlainDecimal, or undefined when it is not an unsigned plain decimal (a sign, an exponent, spaces). */
export function plainDecimalOf(text: string): PlainDecimal | undefined {
  const match = UNSIGNED_PLAIN_DECIMAL.exec(text)
  if (!match) return undefined
  const [, whole = '', fraction = ''] = match
  return { units: BigInt(whole + fraction), scale: fraction.length }
}

/** Powers of ten up to 10^127, made once: the integer paths below scale by them on every quote and allocation. */
const POWERS_OF_TEN: readonly bigint[] = Array.from({ length: 128 }, (_, n) => 10n ** BigInt(n))

/** 10^n as a bigint, for n ≥ 0. */
export const pow10 = (n: number): bigint => POWERS_OF_TEN[n] ?? 10n ** BigInt(n)

/** The service Decimal's significant digits (its `precision` above). */
const DECIMAL_PRECISION = 50n
/** The least integer with more significant digits than that. */
const BEYOND_DECIMAL_PRECISION = 10n ** DECIMAL_PRECISION

/**
 * (minor / 10^digits) ÷ divisor, rounded half-up to `decimals` places and formatted with exactly that many: the text
 * formatDecimal(roundHalfUp(fromMinorUnits(minor, digits).div(divisor), decimals), decimals) gives, in bigint
 * arithmetic. Undefined where that equality is not proven (minor < 0, divisor 0, or figures too long); the caller
 * then computes it with Decimal. `precision`: the significant digits of the Decimal the caller would divide with (the
 * service Decimal's 50 unless given; DisplayDecimal's 20 for display-only ratios).
 *
 * Why they are equal: the Decimal quotient q' is the exact quotient q rounded to P = `precision` significant digits,
 * and rounding q' to `decimals` places can differ from rounding q only when q lies below a tie T = (m + ½)·10^-decimals
 * and q' reaches it. With q·10^decimals = N / D (integers), a q ≠ T is at least 10^-decimals / (2D) from T, while q' is
 * within half a unit of q's Pth digit, 0.5·10^(e−P+1) for q's exponent e. So q' cannot reach T when
 * D·10^e < 10^(P−1−decimals), which D·(r + 1) ≤ 10^(P−1) guarantees (r, the result in units of 10^-decimals, has
 * q < (r + 1)·10^-decimals). The same bound keeps every tie T that near q within P digits, so q' never rounds past one
 * either, and keeps q at least 1 / D below any whole number of units it is below.
 */
export function quotientHalfUp(
  minor: bigint,
  digits: number,
  divisor: PlainDecimal,
  decimals: number,
  precision: bigint = DECIMAL_PRECISION,
): string | undefined {
  if (minor < 0n || divisor.units === 0n) return undefined
  const numerator = minor * pow10(divisor.scale + decimals)
  const denominator = divisor.units * pow10(digits)
  const rounded = (2n * numerator + denominator) / (2n * denominator)
  if (denominator * (rounded + 1n) > pow10(Number(precision) - 1)) return undefined
  return formatMinorUnits(rounded, decimals)
}

/**
 * (minor / 10^digits) × each factor, rounded half-up once to `decimals` places and formatted with exactly that many:
 * the text formatDecimal(roundHalfUp(product, decimals), decimals) gives for the Decimal product, in bigint arithmetic.
 * Undefined where that equality is not proven (minor < 0, a factor that is not a plain decimal, or a product past 50
 * significant digits, which Decimal would round before this rounding); the caller then computes it with Decimal. Below
 * that, Decimal's product is exact.
 */
export function productHalfUp(
  minor: bigint,
  digits: number,
  factors: readonly (PlainDecimal | undefined)[],
  decimals: number,
): string | undefined {
  if (minor < 0n) return undefined
  let numerator = minor
  let scale = digits
  for (const factor of factors) {
    if (factor === undefined) return undefined
    numerator *= factor.units
    scale += factor.scale
  }
  if (numerator >= BEYOND_DECIMAL_PRECISION) return undefined
  if (scale <= decimals) return formatMinorUnits(numerator * pow10(decimals - scale), decimals)
  const denominator = pow10(scale - decimals)
  return formatMinorUnits((2n * numerator + denominator) / (2n * denominator), decimals)
}

/** One unit in the 49th decimal place: a Decimal operation's relative error is below it (see nearTieFree). */
const ONE_IN_DECIMAL_PRECISION = 10n ** (DECIMAL_PRECISION - 1n)

/**
 * (numerator ÷ denominator) rounded half-up to `decimals` places, in minor units of those places, when that is what
 * rounding any value within `operations` × 10^-49 of it (relatively) gives: undefined when the value lies that close
 * to a tie (or on one). `operations` counts the service Decimal's operations (each rounds to 50 significant digits,
 * so its result is within 10^-49 of the exact one, relatively) a Decimal computation of the same value made before
 * this rounding, plus one for their compounding: where this answers, the Decimal computation rounds to the same
 * figure, so the caller may compute the exact value in integers instead and take Decimal's path only where this
 * answers undefined. numerator ≥ 0, denominator > 0.
 */
export function exactHalfUpClearOfTies(numerator: bigint, denominator: bigint, decimals: number, operations: number): bigint | undefined {
  const scaled = numerator * pow10(decimals)
  const remainder = scaled % denominator
  // The distance to the nearest tie, |remainder − denominator / 2| ÷ denominator, against operations × 10^-49 × value.
  const gap = 2n * remainder - denominator
  if ((gap < 0n ? -gap : gap) * ONE_IN_DECIMAL_PRECISION <= 2n * BigInt(operations) * scaled) return undefined
  return (2n * scaled + denominator) / (2n * denominator)
}

/**
 * Converts an amount in major units to an integer count of minor units, exactly (no rounding).
 * Throws `AMOUNT_PRECISION` at `path` when the amount has more decimals than `digits`, and
 * `AMOUNT_OUT_OF_RANGE` when it is not finite. Negative amounts convert to negative counts.
 */
export function toMinorUnits(amount: Decimal, digits: number, path?: string): bigint {
  if (!amount.isFinite()) {
    throw new DomainError('AMOUNT_OUT_OF_RANGE', 'amount must be a finite decimal number', path)
  }
  if (amount.decimalPlaces() > digits) {
    throw new DomainError('AMOUNT_PRECISION', `amount must have at most ${digits} decimal places`, path)
  }
  return BigInt(amount.toFixed(digits).replace('.', ''))
}

/** Converts an integer count of minor units back to major units, exactly: 1260n, 2 → 12.6. */
export function fromMinorUnits(minor: bigint, digits: number): Decimal {
  return new Decimal(formatMinorUnits(minor, digits))
}

/**
 * Formats minor units as a major-unit string with exactly `digits` decimals, without going through
 * Decimal: 1260n, 2 → "12.60"; -5n, 3 → "-0.005"; 0n → "0.00" (never "-0.00").
 */
export function formatMinorUnits(minor: bigint, digits: number): string {
  const negative = minor < 0n
  let text = (negative ? -minor : minor).toString()
  if (digits > 0) {
    text = text.padStart(digits + 1, '0')
    text = `${text.slice(0, -digits)}.${text.slice(-digits)}`
  }
  return negative ? `-${text}` : text
}

/**
 * Rounds to `digits` decimal places, half-up (ties away from zero: 0.125 → 0.13, −0.125 → −0.13).
 * The single rounding primitive; callers name the point at which they round.
 */
export function roundHalfUp(value: Decimal, digits: number): Decimal {
  return value.toDecimalPlaces(digits, Decimal.ROUND_HALF_UP)
}

/**
 * Formats with exactly `digits` decimals (half-up if more are present), never in exponent notation
 * and never as a negative zero ("-0.00" becomes "0.00").
 */
export function formatDecimal(value: Decimal, digits: number): string {
  const text = value.toFixed(digits, Decimal.ROUND_HALF_UP)
  return /^-0(\.0*)?$/.test(text) ? text.slice(1) : text
}

/**
 * A rate or weight as its shortest exact decimal string: "0.20" → "0.2", "0.149750" → "0.14975",
 * "-0" → "0". Used for the raw tax rates carried on quotes and allocation entries.
 */
export function formatRate(value: Decimal | string): string {
  const decimal = typeof value === 'string' ? new Decimal(value) : value
  return decimal.isZero() ? '0' : decimal.toString()
}

/**
 * Splits `total` minor units into one part per weight so that the parts sum to `total` exactly
 * (docs/pricing.md, "Money"): each part is floor(total·wᵢ/Σw), then the leftover units go one each to the parts
 * with the largest remainders, ties to the lower index. Every part is within one minor unit of its
 * exact share, zero-weight parts get 0, and the result is deterministic.
 *
 * Weights are non-negative decimals (strings or Decimals, any scale); they are scaled to integers
 * so the arithmetic is exact bigint arithmetic. A negative total is split as −split(−total), so a
 * reversal mirrors the original exactly. Throws a RangeError when a weight is negative or not
 * finite, or when every weight is zero (a programming error, not a request error).
 */
export function splitByWeights(total: bigint, weights: readonly (Decimal | string)[]): bigint[] {
  if (total < 0n) return splitByWeights(-total, weights).map((part) => -part)
  const { scaled, sum } = scaledWeightsOf(weights)
  return splitScaled(total, scaled, sum)
}

/** Weights brought to integers of one scale (scaledWeightsOf), and their sum. */
export interface ScaledWeights {
  readonly scaled: readonly bigint[]
  readonly sum: bigint
}

/**
 * splitByWeights with the weights already scaled (scaledWeightsOf): the same parts, for callers that split many
 * totals by the same weights and so parse and scale them once.
 */
export function splitByScaledWeights(total: bigint, weights: ScaledWeights): bigint[] {
  if (total < 0n) return splitByScaledWeights(-total, weights).map((part) => -part)
  return splitScaled(total, weights.scaled, weights.sum)
}

/**
 * splitByWeights over integer weights (exact rationals brought to one denominator by the caller): the same
 * largest-remainder split, for weights whose exact decimals would not fit a Decimal's 50 digits (profit shares
 * multiply down a chain). Throws a RangeError when a weight is negative or every weight is zero.
 */
export function splitByIntegerWeights(total: bigint, weights: readonly bigint[]): bigint[] {
  if (total < 0n) return splitByIntegerWeights(-total, weights).map((part) => -part)
  if (weights.some((weight) => weight < 0n)) throw new RangeError('split weights must be non-negative')
  const sum = weights.reduce((acc, weight) => acc + weight, 0n)
  if (sum === 0n) throw new RangeError('split weights must not all be zero')
  return splitScaled(total, weights, sum)
}

function splitScaled(total: bigint, scaled: readonly bigint[], sum: bigint): bigint[] {
  const parts: bigint[] = []
  const remainders: bigint[] = []
  let allocated = 0n
  for (const weight of scaled) {
    const product = total * weight
    const part = product / sum
    parts.push(part)
    remainders.push(product - part * sum)
    allocated += part
  }
  // Fewer leftover units than parts: each goes to the largest remainder not yet given one, ties to the lower index
  // (picked in turn rather than sorted: a split has a handful of parts, and a few units to give).
  const given: boolean[] = []
  for (let leftover = total - allocated; leftover > 0n; leftover -= 1n) {
    let best = -1
    for (let i = 0; i < remainders.length; i++) {
      if (given[i] !== true && (best < 0 || (remainders[i] as bigint) > (remainders[best] as bigint))) best = i
    }
    given[best] = true
    parts[best] = (parts[best] as bigint) + 1n
  }
  return parts
}

/** The weights as integers with a common scale, and their sum (validated: finite, ≥ 0, not all 0). */
export function scaledWeightsOf(weights: readonly (Decimal | string)[]): { scaled: bigint[]; sum: bigint } {
  const decimals = weights.map((weight) => (typeof weight === 'string' ? new Decimal(weight) : weight))
  let scale = 0
  for (const weight of decimals) {
    if (!weight.isFinite() || (weight.isNegative() && !weight.isZero())) {
      throw new RangeError(`split weights must be finite and non-negative, got ${weight.toString()}`)
    }
    scale = Math.max(scale, weight.decimalPlaces())
  }
  const scaled = decimals.map((weight) => BigInt(weight.toFixed(scale).replace('.', '')))
  const sum = scaled.reduce((acc, weight) => acc + weight, 0n)
  if (sum === 0n) throw new RangeError('split weights must not all be zero')
  return { scaled, sum }
}
