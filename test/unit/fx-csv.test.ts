// The ECB's reference-rate CSVs (daily eurofxref.csv, historical eurofxref-hist.csv), validated whole; and the
// table built from one day of them (USD pegs crossed through the ECB USD rate).
import { describe, expect, it } from 'vitest'
import { fxTableFromEcbRates, convert, isPricedCurrency } from '../../src/domain/fx.js'
import { Decimal } from '../../src/domain/money.js'
import { parseEcbCsv, parseEcbDate } from '../../src/services/fx.js'
import { ImportError } from '../../src/services/import-error.js'
import { DAILY, HISTORY } from '../helpers/fx-files.js'

const problemsOf = (text: string, today = '2026-11-23'): string[] => {
  try {
    parseEcbCsv(text, today)
  } catch (error) {
    expect(error).toBeInstanceOf(ImportError)
    return (error as ImportError).problems
  }
  throw new Error('expected the file to be refused')
}

describe('parseEcbCsv', () => {
  it('reads the daily file: one date, every currency as published', () => {
    const days = parseEcbCsv(DAILY, '2026-11-23')
    expect(days).toHaveLength(1)
    expect(days[0]!.date).toBe('2026-11-20')
    expect(Object.keys(days[0]!.rates)).toHaveLength(29)
    expect(days[0]!.rates).toMatchObject({ USD: '1.1520', JPY: '178.50', GBP: '0.88120', IDR: '19210.10' })
  })

  it('reads the historical file: ISO dates, N/A skipped, withdrawn ISO codes kept with their dates', () => {
    const days = parseEcbCsv(HISTORY, '2026-11-23')
    expect(days.map((d) => d.date)).toEqual(['2026-11-19', '2026-11-18', '2007-12-31'])
    expect(days[0]!.rates).toEqual({ USD: '1.1500', JPY: '178.10', GBP: '0.88000', PLN: '4.2200' })
    expect(days[2]!.rates).toMatchObject({ BGN: '1.9558', CYP: '0.585274', HRK: '7.3308' })
  })

  it('accepts a file without the trailing commas, with CRLF line ends and a byte-order mark', () => {
    const days = parseEcbCsv('\uFEFFDate,USD,GBP\r\n2026-11-19,1.15,0.88\r\n', '2026-11-23')
    expect(days).toEqual([{ date: '2026-11-19', rates: { USD: '1.15', GBP: '0.88' } }])
  })

  it.each([
    ['a header that is not the ECB one', 'Day,USD\n2026-11-19,1.1\n', /first line must be the ECB header/],
    ['a header only', 'Date,USD,\n', /header only/],
    ['a code that is not ISO 4217', 'Date,USD,XXY,\n2026-11-19,1.1,2,\n', /"XXY" is not an ISO 4217/],
    ['a lower-case code', 'Date,usd,\n2026-11-19,1.1,\n', /"usd" is not an ISO 4217/],
    ['EUR as a column', 'Date,EUR,\n2026-11-19,1,\n', /EUR is the base currency/],
    ['a currency twice', 'Date,USD,USD,\n2026-11-19,1.1,1.1,\n', /USD appears twice/],
    ['a zero rate', 'Date,USD,\n2026-11-19,0,\n', /"0" is not a positive decimal rate/],
    ['a negative rate', 'Date,USD,\n2026-11-19,-1.1,\n', /"-1.1" is not a positive decimal rate/],
    ['a rate in exponent form', 'Date,USD,\n2026-11-19,1e3,\n', /"1e3" is not a positive decimal rate/],
    ['text for a rate', 'Date,USD,\n2026-11-19,abc,\n', /"abc" is not a positive decimal rate/],
    ['an impossible date', 'Date,USD,\n2026-02-30,1.1,\n', /"2026-02-30" is not a date/],
    ['a date in the future', 'Date,USD,\n2026-11-24,1.1,\n', /2026-11-24 is in the future/],
    ['a date twice', 'Date,USD,\n2026-11-19,1.1,\n2026-11-19,1.2,\n', /2026-11-19 appears twice/],
    ['a day without any rate', 'Date,USD,\n2026-11-19,N/A,\n', /no rate at all/],
    ['more values than currencies', 'Date,USD,\n2026-11-19,1.1,1.2,\n', /2 values for 1 currencies/],
    ['a line that is not CSV', 'Date,USD\n"2026-11-19,1.1\n', /not valid CSV/],
  ])('refuses %s', (_label, text, problem) => {
    expect(problemsOf(text).join('\n')).toMatch(problem)
  })

  it('reports every problem of the file at once', () => {
    const problems = problemsOf('Date,USD,XXY,\n2026-02-30,0,1,\n2026-11-19,1.1,abc,\n')
    expect(problems).toHaveLength(4)
  })
})

describe('parseEcbDate', () => {
  it.each([
    ['2026-02-06', '2026-02-06'],
    ['06 February 2026', '2026-02-06'],
    ['6 february 2026', '2026-02-06'],
    ['29 February 2024', '2024-02-29'],
    ['29 February 2026', undefined],
    ['2026-13-01', undefined],
    ['06 Febr 2026', undefined],
    ['06/02/2026', undefined],
    ['', undefined],
  ])('%s → %s', (text, expected) => {
    expect(parseEcbDate(text)).toBe(expected)
  })
})

describe('fxTableFromEcbRates', () => {
  it('adds the USD pegs (and indicative KWD) crossed through the ECB USD rate of that day', () => {
    const table = fxTableFromEcbRates('2026-11-20', { USD: '1.2', GBP: '0.9' }, 'ECB 2026-11-20')
    expect(table).toMatchObject({ base: 'EUR', date: '2026-11-20', source: 'ECB 2026-11-20; BHD, SAR, AED via USD pegs, KWD indicative' })
    expect(table.rates).toEqual({ USD: '1.2', GBP: '0.9', BHD: '0.4512', SAR: '4.5', AED: '4.407', KWD: '0.3684' })
    expect(convert(new Decimal('3.6725'), 'AED', 'USD', table).amount.toString()).toBe('1')
  })

  it('without a USD rate that day, the pegged currencies are not priced', () => {
    const table = fxTableFromEcbRates('2026-11-20', { GBP: '0.9' }, 'ECB 2026-11-20')
    expect(table.source).toBe('ECB 2026-11-20')
    expect(isPricedCurrency('AED', table)).toBe(false)
    expect(isPricedCurrency('GBP', table)).toBe(true)
  })
})
