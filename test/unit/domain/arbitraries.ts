// fast-check generators shared by the property tests: quote inputs over currencies with 0, 2 and 3
// minor-unit digits, and small random catalogues.
import fc from 'fast-check'
import { Decimal, minorUnitsOf } from '../../../src/domain/money.js'
import type { QuoteInput } from '../../../src/domain/pricing.js'
import type { ConsumerLocation } from '../../../src/domain/types.js'
import { project, quoteInput } from './fixtures.js'

export const CURRENCIES = ['JPY', 'GBP', 'KWD', 'USD', 'EUR', 'BHD', 'CAD', 'SEK'] as const
export const CONSUMERS: readonly ConsumerLocation[] = [
  { countryCode: 'GBR' },
  { countryCode: 'DEU' },
  { countryCode: 'FRA' },
  { countryCode: 'USA', state: 'CA' },
  { countryCode: 'USA' },
  { countryCode: 'CAN', state: 'QC' },
  { countryCode: 'CAN', state: 'ON' },
  { countryCode: 'JPN' },
  { countryCode: 'KWT' },
  { countryCode: 'HUN' },
  { countryCode: 'AUS' },
]
const MCCS = ['5992', '5812', '5541', '4511', '3010', '3400', '3600', '7011', '0742', '9999']

/** A random but valid quote input over currencies with 0, 2 and 3 minor-unit digits. */
export const arbitraryQuoteInput = fc
  .record({
    currencyCode: fc.constantFrom(...CURRENCIES),
    minor: fc.bigInt({ min: 1n, max: 10n ** 9n }),
    mcc: fc.constantFrom(...MCCS),
    merchant: fc.constantFrom('GBR', 'USA', 'DEU', 'JPN', 'KWT', 'BRA'),
    consumer: fc.constantFrom(...CONSUMERS),
    serviceFeeRate: fc.integer({ min: 0, max: 5000 }).map((n) => new Decimal(n).div(10_000).toString()),
    date: fc.constantFrom('2020-08-01', '2024-08-31', '2024-09-01', '2026-02-10'),
  })
  .map(({ currencyCode, minor, mcc, merchant, consumer, serviceFeeRate, date }): QuoteInput => {
    const digits = minorUnitsOf(currencyCode)
    return quoteInput({
      currencyCode,
      amount: new Decimal(minor.toString()).div(new Decimal(10).pow(digits)).toFixed(digits),
      mcc,
      merchant: { countryCode: merchant },
      consumer,
      serviceFeeRate,
      date,
      matchConsumerLocation: true,
    })
  })

export const arbitraryProjects = fc
  .array(
    fc.record({
      price: fc.integer({ min: 1, max: 50_000 }).map((n) => new Decimal(n).div(100).toFixed(2)),
      priceCurrency: fc.constantFrom('USD', 'GBP', 'EUR', 'JPY'),
      weight: fc.option(
        fc.integer({ min: 1, max: 1000 }).map((n) => new Decimal(n).div(10).toString()),
        { nil: null },
      ),
      country: fc.constantFrom(null, 'GBR', 'USA', 'DEU'),
    }),
    { minLength: 1, maxLength: 4 },
  )
  .map((rows) =>
    rows.map((row, i) =>
      project({
        id: `p${i}`,
        price: row.priceCurrency === 'JPY' ? new Decimal(row.price).times(100).toFixed(0) : row.price,
        priceCurrency: row.priceCurrency,
        weight: row.weight,
        location: { countryCode: row.country, state: null },
        priority: i,
      }),
    ),
  )
