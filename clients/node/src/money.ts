// Exact money helpers. The API takes and gives amounts in major units (47.97 GBP) as JSON numbers at the currency's
// precision; integer arithmetic in your code is in minor units (4797 pence). Convert through decimal digits, never
// with `amount * 100` (0.29 * 100 is 28.999999999999996).
import { CURRENCY_DIGITS } from './generated/contract.js'

/** ISO 4217 minor-unit digits of a currency, as the API applies them: GBP 2, JPY 0, KWD 3. */
export function minorUnitDigits(currencyCode: string): number {
  const digits = CURRENCY_DIGITS[currencyCode]
  if (digits === undefined) throw new RangeError(`unknown currency ${JSON.stringify(currencyCode)}`)
  return digits
}

/** The decimal digits of an amount: numbers through their shortest round-trip form (0.07 → "0.07"). */
function decimalText(amount: number | string): string {
  const text = typeof amount === 'number' ? (Number.isFinite(amount) ? String(amount) : '') : amount.trim()
  if (!/^-?\d+(\.\d+)?$/.test(text)) throw new RangeError(`${JSON.stringify(amount)} is not a plain decimal amount`)
  return text
}

/**
 * An amount in major units (number or decimal string) as an integer count of minor units, exactly:
 * `toMinorUnits(47.97, 'GBP')` is 4797, `toMinorUnits('0.29', 'GBP')` 29. Throws a RangeError when the amount has
 * more decimals than the currency has (the API would refuse it: AMOUNT_PRECISION).
 */
export function toMinorUnits(amount: number | string, currencyCode: string): number {
  const digits = minorUnitDigits(currencyCode)
  const text = decimalText(amount)
  const negative = text.startsWith('-')
  const [whole = '0', fraction = ''] = text.replace('-', '').split('.')
  const significant = fraction.replace(/0+$/, '')
  if (significant.length > digits) throw new RangeError(`${text} has more than ${digits} decimals for ${currencyCode}`)
  const minor = Number(whole + fraction.padEnd(digits, '0').slice(0, digits))
  if (!Number.isSafeInteger(minor)) throw new RangeError(`${text} ${currencyCode} is too large for exact minor units`)
  return negative && minor !== 0 ? -minor : minor
}

/**
 * Minor units as the decimal string the API takes: `fromMinorUnits(4797, 'GBP')` is "47.97", `(5, 'JPY')` "5".
 * Pass the string wherever the client takes an amount: it is sent as that exact number.
 */
export function fromMinorUnits(minor: number | bigint, currencyCode: string): string {
  const digits = minorUnitDigits(currencyCode)
  if (typeof minor === 'number' && !Number.isSafeInteger(minor)) throw new RangeError(`${minor} is not a whole number of minor units`)
  const value = BigInt(minor)
  const negative = value < 0n
  const text = (negative ? -value : value).toString().padStart(digits + 1, '0')
  const major = digits === 0 ? text : `${text.slice(0, -digits)}.${text.slice(-digits)}`
  return negative ? `-${major}` : major
}
