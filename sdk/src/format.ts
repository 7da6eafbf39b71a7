// Numbers for people, with Intl in the session's locale. Money is formatted from its exact decimal string.
import { fromMinor, minorUnitsOf } from './money.js'
import type { Strings } from './i18n.js'

const number = (value: number, locale: string, maximumFractionDigits: number) =>
  new Intl.NumberFormat(locale, { maximumFractionDigits }).format(value)

/** 45 GBP minor units in de-DE → "0,45 £". Always the currency's own number of decimals. */
export function formatMoney(minor: number, currencyCode: string, locale: string): string {
  const digits = minorUnitsOf(currencyCode)
  return new Intl.NumberFormat(locale, {
    style: 'currency',
    currency: currencyCode,
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  }).format(fromMinor(minor, digits) as `${number}`)
}

// No-break spaces keep a figure and its unit on one line.
const NBSP = '\u00a0'

/** A CO2e mass: g below 1 kg, kg below 1 t, t above; imperial: oz below 1 lb, else lb. */
export function formatCo2e(grams: number, ounces: number, locale: string, strings: Strings): string {
  let text: string
  if (strings.imperial) {
    text = ounces < 16 ? `${number(ounces, locale, 1)}${NBSP}oz` : `${number(ounces / 16, locale, 1)}${NBSP}lb`
  } else if (grams < 1000) {
    text = `${number(grams, locale, 0)}${NBSP}g`
  } else {
    text = grams < 1e6 ? `${number(grams / 1000, locale, 1)}${NBSP}kg` : `${number(grams / 1e6, locale, 2)}${NBSP}t`
  }
  return `${text}${NBSP}CO₂e`
}

/** An area: m² (1 decimal), or ft² (whole) for imperial locales. */
export const formatArea = (squareMetres: number, squareFeet: number, locale: string, strings: Strings): string =>
  strings.imperial ? `${number(squareFeet, locale, 0)}${NBSP}ft²` : `${number(squareMetres, locale, 1)}${NBSP}m²`

/** 0.1935 → "19.4%" (de-DE "19,4 %"). */
export const formatPercent = (ratio: number, locale: string): string =>
  new Intl.NumberFormat(locale, { style: 'percent', maximumFractionDigits: 1 }).format(ratio)

/** ["A", "B", "C"] → "A, B and C" in the locale's words. */
export const formatList = (items: readonly string[], locale: string): string =>
  typeof Intl.ListFormat === 'function' ? new Intl.ListFormat(locale, { type: 'conjunction' }).format(items) : items.join(', ')
