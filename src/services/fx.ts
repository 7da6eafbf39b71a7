// Exchange rates without a release: operators import the ECB's published reference rates (`fx import`), which
// are validated whole and stored with their date in one transaction. New quotes use the newest rates — the latest
// stored date, or the compiled table (src/domain/data/fx-rates.ts) when nothing newer is stored. A stored quote
// keeps the rate and date it locked (provenance.fx), whatever is imported later.
import { basename } from 'node:path'
import { parse as parseCsv } from 'csv-parse/sync'
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { findLatestFxRates, upsertFxRates, type FxRate } from '../db/repositories/fx-rates.js'
import { fxTableFromEcbRates, REFERENCE_FX_RATES } from '../domain/fx.js'
import { minorUnitsOf } from '../domain/money.js'
import type { FxTable } from '../domain/types.js'
import { ImportError } from './import-error.js'

/** The table new quotes use, and where it comes from. */
export interface FxInUse {
  table: FxTable
  origin: 'stored' | 'embedded'
}

/** One day of ECB rates: units of currency per 1 EUR, as published (decimal strings). */
export interface EcbDay {
  date: string
  rates: Record<string, string>
}

/**
 * ISO 4217 codes withdrawn since the ECB began publishing (1999) that appear in its historical file: valid codes
 * of their time. They are stored with their dates but never priced (the current ISO list has no minor units for them).
 */
const WITHDRAWN_ISO_4217 = new Set(['CYP', 'EEK', 'GRD', 'HRK', 'LTL', 'LVL', 'MTL', 'ROL', 'SIT', 'SKK', 'TRL'])

const isIsoCurrency = (code: string): boolean => {
  if (WITHDRAWN_ISO_4217.has(code)) return true
  try {
    minorUnitsOf(code)
    return true
  } catch {
    return false
  }
}

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december']
const RATE = /^\d{1,12}(\.\d{1,12})?$/

/** "2026-02-06" (eurofxref-hist.csv) or "06 February 2026" (eurofxref.csv) → "2026-02-06"; undefined when not a real date. */
export function parseEcbDate(text: string): string | undefined {
  let year: number, month: number, day: number
  const iso = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text)
  const long = /^(\d{1,2}) ([A-Za-z]+) (\d{4})$/.exec(text)
  if (iso) {
    ;[year, month, day] = [Number(iso[1]), Number(iso[2]), Number(iso[3])]
  } else if (long) {
    ;[day, month, year] = [Number(long[1]), MONTHS.indexOf((long[2] ?? '').toLowerCase()) + 1, Number(long[3])]
  } else {
    return undefined
  }
  const date = new Date(Date.UTC(year, month - 1, day))
  if (month < 1 || date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return undefined
  return date.toISOString().slice(0, 10)
}

/**
 * Parses the ECB's reference-rate CSV: the daily `eurofxref.csv` (a `Date, USD, JPY, …` header and one line) or
 * the historical `eurofxref-hist.csv` (ISO dates, `N/A` where a currency was not published, many lines). Everything
 * is checked before anything is returned: every column an ISO 4217 code (once), every date real and not after
 * `today`, every rate a positive decimal, no date twice. Any problem → ImportError listing them.
 */
export function parseEcbCsv(text: string, today: string): EcbDay[] {
  let records: string[][]
  try {
    records = parseCsv(text, { trim: true, bom: true, skip_empty_lines: true, relax_column_count: true }) as string[][]
  } catch (error) {
    throw new ImportError([`not valid CSV: ${(error as Error).message}`])
  }
  const problems: string[] = []
  const [header = [], ...rows] = records
  if ((header[0] ?? '').toLowerCase() !== 'date') {
    throw new ImportError(['the first line must be the ECB header: Date, USD, JPY, … (eurofxref.csv or eurofxref-hist.csv)'])
  }
  // The ECB ends every line with a comma: one empty trailing column.
  const columns = header.slice(1)
  while (columns.length > 0 && columns[columns.length - 1] === '') columns.pop()
  const seen = new Set<string>()
  columns.forEach((code, i) => {
    const where = `header column ${i + 2}`
    if (!/^[A-Z]{3}$/.test(code) || !isIsoCurrency(code))
      problems.push(`${where}: ${JSON.stringify(code)} is not an ISO 4217 currency code`)
    else if (code === 'EUR') problems.push(`${where}: EUR is the base currency, not a rate`)
    else if (seen.has(code)) problems.push(`${where}: ${code} appears twice`)
    seen.add(code)
  })
  if (columns.length === 0) problems.push('the header names no currency')
  if (rows.length === 0) problems.push('no rates: the file has a header only')
  const dates = new Set<string>()
  const days: EcbDay[] = []
  rows.forEach((row, r) => {
    const line = `line ${r + 2}`
    const cells = row.slice(1)
    while (cells.length > columns.length && cells[cells.length - 1] === '') cells.pop()
    if (cells.length > columns.length) problems.push(`${line}: ${cells.length} values for ${columns.length} currencies`)
    const date = parseEcbDate(row[0] ?? '')
    if (date === undefined) problems.push(`${line}: ${JSON.stringify(row[0])} is not a date (YYYY-MM-DD or "06 February 2026")`)
    else if (date > today) problems.push(`${line}: ${date} is in the future`)
    else if (dates.has(date)) problems.push(`${line}: ${date} appears twice`)
    if (date !== undefined) dates.add(date)
    const rates: Record<string, string> = {}
    cells.forEach((cell, c) => {
      const code = columns[c] ?? ''
      if (cell === '' || cell.toUpperCase() === 'N/A') return
      if (!RATE.test(cell) || Number(cell) <= 0) problems.push(`${line}, ${code}: ${JSON.stringify(cell)} is not a positive decimal rate`)
      else rates[code] = cell
    })
    if (Object.keys(rates).length === 0) problems.push(`${line}: no rate at all`)
    days.push({ date: date ?? '', rates })
  })
  if (problems.length > 0) throw new ImportError(problems)
  return days
}

export interface FxImportSummary {
  file: string
  dates: number
  rates: number
  /** Rows inserted or whose rate changed (0 when the same file is imported again). */
  changed: number
  firstDate: string
  latestDate: string
}

/** Operator command: validates the whole file, then stores every rate with its date in one transaction (upsert). */
export async function importFxRates(db: Kysely<Database>, input: { csv: string; fileName: string }, now: Date): Promise<FxImportSummary> {
  const days = parseEcbCsv(input.csv, now.toISOString().slice(0, 10))
  const rows: FxRate[] = days.flatMap((day) =>
    Object.entries(day.rates).map(([currencyCode, rate]) => ({ date: day.date, currencyCode, rate })),
  )
  const file = basename(input.fileName)
  const changed = await db
    .transaction()
    .execute((trx) => upsertFxRates(trx, rows, `ECB euro foreign exchange reference rates (${file})`, now))
  const sorted = days.map((d) => d.date).sort()
  return { file, dates: days.length, rates: rows.length, changed, firstDate: sorted[0] ?? '', latestDate: sorted[sorted.length - 1] ?? '' }
}

/**
 * The rates new quotes use: the latest stored date's, unless the compiled table is newer. `previous` is returned
 * as is when nothing changed, so per-table memos (cross rates, portfolio prices) stay warm.
 */
export async function loadFxInUse(db: Kysely<Database>, previous?: FxInUse): Promise<FxInUse> {
  const stored = await findLatestFxRates(db)
  if (!stored || stored.date < REFERENCE_FX_RATES.date) return { table: REFERENCE_FX_RATES, origin: 'embedded' }
  const description = `ECB euro foreign exchange reference rates ${stored.date} (imported ${stored.importedAt.toISOString()})`
  if (previous?.origin === 'stored' && previous.table.date === stored.date && previous.table.source.startsWith(description)) return previous
  return { table: fxTableFromEcbRates(stored.date, stored.rates, description), origin: 'stored' }
}

/** Whole days between the rates' date and `now` (for the start-up warning and FX_MAX_AGE_DAYS). */
export const fxAgeDays = (table: FxTable, now: Date): number =>
  Math.floor((now.getTime() - Date.parse(`${table.date}T00:00:00Z`)) / 86_400_000)
