// Money in the SDK: decimal strings and integer minor units, never float arithmetic on amounts.
// The API sends money as JSON numbers at the currency's minor units (src/http/presenters/quotes.ts).

// ISO 4217 currencies whose minor unit is not 2 (mirrors currency-codes, used by src/domain/money.ts).
const ZERO_DIGITS = 'BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF'
const THREE_DIGITS = 'BHD IQD JOD KWD LYD OMR TND'
const FOUR_DIGITS = 'CLF UYW'

const CURRENCY = /^[A-Z]{3}$/
const DECIMAL = /^(\d+)(?:\.(\d+))?$/

/** ISO 4217 minor-unit digits of a currency: JPY 0, GBP 2, KWD 3. */
export function minorUnitsOf(currencyCode: string): number {
  if (!CURRENCY.test(currencyCode)) throw new RangeError(`not a currency code: ${JSON.stringify(currencyCode)}`)
  // Three-letter codes separated by spaces: a match is always a whole code.
  if (ZERO_DIGITS.includes(currencyCode)) return 0
  if (THREE_DIGITS.includes(currencyCode)) return 3
  return FOUR_DIGITS.includes(currencyCode) ? 4 : 2
}

/** True for a non-negative decimal string such as "0", "12" or "0.45" (no sign, exponent or spaces). */
export const isDecimalString = (value: unknown): value is string => typeof value === 'string' && DECIMAL.test(value)

/**
 * "0.45" → 45 at 2 digits. Exact string arithmetic: throws a RangeError for anything but a non-negative
 * decimal string, for more significant decimals than `digits` ("0.455" at 2; "0.450" is fine) and for
 * results beyond Number.MAX_SAFE_INTEGER.
 */
export function toMinor(amount: string, digits: number): number {
  const match = DECIMAL.exec(amount)
  if (!match) throw new RangeError(`not a decimal amount: ${JSON.stringify(amount)}`)
  const fraction = (match[2] ?? '').replace(/0+$/, '')
  if (fraction.length > digits) throw new RangeError(`${amount} has more than ${digits} decimal places`)
  const minor = Number(`${match[1]}${fraction.padEnd(digits, '0')}`)
  if (!Number.isSafeInteger(minor)) throw new RangeError(`${amount} is too large`)
  return minor
}

/** 45 → "0.45" at 2 digits; 1200 → "1200" at 0. Integers only. */
export function fromMinor(minor: number, digits: number): string {
  if (!Number.isSafeInteger(minor)) throw new RangeError(`not an integer amount of minor units: ${minor}`)
  const sign = minor < 0 ? '-' : ''
  const text = String(Math.abs(minor)).padStart(digits + 1, '0')
  return digits === 0 ? `${sign}${text}` : `${sign}${text.slice(0, -digits)}.${text.slice(-digits)}`
}

/**
 * A JSON number from the API (0.28) → minor units (28). `toFixed` yields the exact decimal nearest the
 * binary value; the round trip check refuses a number that is not at the currency's minor units.
 */
export function wireToMinor(value: number, digits: number): number {
  if (!Number.isFinite(value) || value < 0) throw new RangeError(`not an amount: ${value}`)
  const text = value.toFixed(digits)
  if (Number(text) !== value) throw new RangeError(`${value} is not at ${digits} decimal places`)
  return toMinor(text, digits)
}

/** Minor units to add to `totalMinor` to reach the next multiple of `incrementMinor` (0 when already there). */
export const roundUpMinor = (totalMinor: number, incrementMinor: number): number =>
  (incrementMinor - (totalMinor % incrementMinor)) % incrementMinor
