// The dashboard's and the allocations browser's figures: summary types, windows of local days, amounts summed in
// minor units (integers: never a float sum of money) and formatted with Intl in the reader's locale and the record's
// currency.
import { locale } from './ui'

export interface SectionTotals {
  total: number
  impact: number
  impactTax: number
  serviceFee: number
  serviceFeeTax: number
}

export interface CurrencyTotals {
  currencyCode: string
  allocations: number
  reversals: number
  credits: SectionTotals & { quantityTonnes: number }
  contributions: SectionTotals
}

export interface SummaryGroup {
  key: string
  name?: string
  countryCode?: string
  dateTimeFrom?: string
  dateTimeTo?: string
  totals: CurrencyTotals[]
}

export interface Summary {
  dateTimeFrom: string
  dateTimeTo: string
  timeZone: string
  groupBy: string
  totals: CurrencyTotals[]
  groups: SummaryGroup[]
}

export interface LineAmounts extends SectionTotals {
  impactTaxRate: number
  serviceFeeTaxRate: number
}

export interface ImpactRecord {
  fundsAllocationId: string
  reversalId?: string
  quoteId: string
  fundsDateTime: string
  consumerReference: string | null
  fundsOrganisationId: string
  fundsOrganisationReference: string | null
  collectionOrganisationId: string
  fundsCurrencyCode: string
  reversal: boolean
  taxLiability: 'platform' | 'organisation'
  amounts: SectionTotals
  merchant: { name: string; mcc: string | null }
  credits: { impactPartnerId: string; projectId: string; quantityTonnes: number; amounts: LineAmounts }[]
  contributions: { impactPartnerId: string; amounts: LineAmounts }[]
}

/** The browser's IANA time zone: the dashboard's days are the reader's. */
export const timeZone = (): string => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC'

const digitsCache = new Map<string, number>()
/** The currency's minor-unit digits as Intl knows them (2 for GBP, 0 for JPY). */
export function currencyDigits(currencyCode: string): number {
  let digits = digitsCache.get(currencyCode)
  if (digits === undefined) {
    digits = new Intl.NumberFormat('en', { style: 'currency', currency: currencyCode }).resolvedOptions().maximumFractionDigits ?? 2
    digitsCache.set(currencyCode, digits)
  }
  return digits
}

/** An amount of the API (a JSON number at the currency's precision) as an integer of minor units. */
export const toMinor = (amount: number, currencyCode: string): number => Math.round(amount * 10 ** currencyDigits(currencyCode))

/** The sum of amounts, exact: added as integers of minor units. */
export const sumAmounts = (amounts: number[], currencyCode: string): number =>
  amounts.reduce((sum, amount) => sum + toMinor(amount, currencyCode), 0) / 10 ** currencyDigits(currencyCode)

export const formatMoney = (amount: number, currencyCode: string): string =>
  new Intl.NumberFormat(locale(), { style: 'currency', currency: currencyCode }).format(amount)

export const formatCount = (n: number): string => new Intl.NumberFormat(locale()).format(n)

export const formatTonnes = (tonnes: number): string =>
  `${new Intl.NumberFormat(locale(), { maximumFractionDigits: tonnes !== 0 && Math.abs(tonnes) < 10 ? 3 : 1 }).format(tonnes)} t CO₂e`

/** Allocated in a currency: credits and contributions. */
export const allocated = (t: CurrencyTotals): number => sumAmounts([t.credits.total, t.contributions.total], t.currencyCode)

// Local days as YYYY-MM-DD, read and written in the browser's time zone (Date's local fields).
const pad = (n: number) => String(n).padStart(2, '0')
export const localDate = (d: Date): string => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`
export function parseLocalDate(text: string | null): Date | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text ?? '')
  if (!match) return undefined
  const date = new Date(Number(match[1]), Number(match[2]) - 1, Number(match[3]))
  return localDate(date) === text ? date : undefined
}
export const addDays = (d: Date, days: number): Date => new Date(d.getFullYear(), d.getMonth(), d.getDate() + days)

export const WINDOWS = [
  { value: '7d', label: 'Last 7 days' },
  { value: '30d', label: 'Last 30 days' },
  { value: '90d', label: 'Last 90 days' },
  { value: 'this-month', label: 'This month' },
  { value: 'last-month', label: 'Last month' },
  { value: 'custom', label: 'Custom' },
] as const
export type WindowChoice = (typeof WINDOWS)[number]['value']

/** A window of whole local days: [from, to) with `to` the midnight after its last day. */
export interface DayWindow {
  from: Date
  to: Date
}

/** The window a choice names today (custom: its first and last days, inclusive); undefined when a custom one is unusable. */
export function windowOf(
  choice: WindowChoice,
  today: Date,
  custom: { from?: string | null; to?: string | null } = {},
): DayWindow | undefined {
  const start = new Date(today.getFullYear(), today.getMonth(), today.getDate())
  const tomorrow = addDays(start, 1)
  switch (choice) {
    case '7d':
      return { from: addDays(start, -6), to: tomorrow }
    case '30d':
      return { from: addDays(start, -29), to: tomorrow }
    case '90d':
      return { from: addDays(start, -89), to: tomorrow }
    case 'this-month':
      return { from: new Date(start.getFullYear(), start.getMonth(), 1), to: tomorrow }
    case 'last-month':
      return { from: new Date(start.getFullYear(), start.getMonth() - 1, 1), to: new Date(start.getFullYear(), start.getMonth(), 1) }
    case 'custom': {
      const from = parseLocalDate(custom.from ?? null)
      const last = parseLocalDate(custom.to ?? null)
      return from && last && from <= last ? { from, to: addDays(last, 1) } : undefined
    }
  }
}

/** Days in a window (23- and 25-hour days count as one). */
export const daysIn = (w: DayWindow): number => Math.round((w.to.getTime() - w.from.getTime()) / 86_400_000)

/** The allocations browser's link for records of [from, to) (instants), with more filters. */
export function recordsLink(from: Date, to: Date, filters: Record<string, string | undefined> = {}): string {
  const params = new URLSearchParams({ from: localDate(from), to: localDate(new Date(to.getTime() - 1)) })
  for (const [key, value] of Object.entries(filters)) if (value) params.set(key, value)
  return `/hub/allocations?${params.toString()}`
}
