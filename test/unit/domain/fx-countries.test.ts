import { describe, expect, it } from 'vitest'
import { Decimal } from '../../../src/domain/money.js'
import { REFERENCE_FX_RATES, convert, isPricedCurrency } from '../../../src/domain/fx.js'
import { isKnownCountry, normaliseSubdivision, toAlpha2 } from '../../../src/domain/countries.js'
import type { FxTable } from '../../../src/domain/types.js'

describe('REFERENCE_FX_RATES', () => {
  it('is the ECB table of 2026-02-06 (units per EUR), with USD-pegged currencies crossed through USD', () => {
    expect(REFERENCE_FX_RATES.base).toBe('EUR')
    expect(REFERENCE_FX_RATES.date).toBe('2026-02-06')
    expect(REFERENCE_FX_RATES.rates).toMatchObject({
      USD: '1.1794',
      GBP: '0.86790',
      JPY: '185.27',
      CHF: '0.9175',
      SEK: '10.6735',
      NOK: '11.4695',
      DKK: '7.4672',
      CAD: '1.6118',
      AUD: '1.6880',
      NZD: '1.9673',
      // peg × USD per EUR: 0.376 × 1.1794, 3.75 × 1.1794, 3.6725 × 1.1794, 0.307 × 1.1794 (indicative)
      BHD: '0.4434544',
      SAR: '4.42275',
      AED: '4.3313465',
      KWD: '0.3620758',
    })
  })
})

describe('isPricedCurrency', () => {
  it.each([
    ['EUR', true],
    ['GBP', true],
    ['JPY', true],
    ['KWD', true],
    ['BHD', true],
    ['BGN', false],
    ['ISK', false],
    ['XAU', false],
    ['gbp', false],
    ['ABC', false],
  ])('%s → %s', (code, expected) => {
    expect(isPricedCurrency(code)).toBe(expected)
  })

  it('uses the table it is given', () => {
    const table: FxTable = { base: 'EUR', date: '2026-01-01', source: 'test', rates: { ISK: '150' } }
    expect(isPricedCurrency('ISK', table)).toBe(true)
    expect(isPricedCurrency('USD', table)).toBe(false)
  })
})

describe('convert', () => {
  it.each([
    // GBP → EUR: 1 / 0.86790; 47.97 / 0.86790 = 55.2713…
    { amount: '47.97', from: 'GBP', to: 'EUR', rate: '1.1522064754003917502016361331950685562852863233091', converted: '55.27' },
    // USD → JPY: 185.27 / 1.1794 = 157.0883…; the reference's own cross rate is 157.08835
    { amount: '25', from: 'USD', to: 'JPY', rate: '157.08835000847888756995082245209428522977785314567', converted: '3927.21' },
    // JPY → USD: 1.1794 / 185.27
    { amount: '10000', from: 'JPY', to: 'USD', rate: '0.006365844443244993792842877961893452798618232849355', converted: '63.66' },
    // USD → KWD: 0.307 by construction of the indicative rate
    { amount: '25', from: 'USD', to: 'KWD', rate: '0.307', converted: '7.68' },
    { amount: '12.34', from: 'EUR', to: 'EUR', rate: '1', converted: '12.34' },
  ])('$amount $from → $to at $rate', ({ amount, from, to, rate, converted }) => {
    const result = convert(new Decimal(amount), from, to, REFERENCE_FX_RATES)
    expect(result.rate).toBe(rate)
    expect(result.amount.toDecimalPlaces(2).toFixed(2)).toBe(converted)
    expect(result.amount.equals(new Decimal(amount).times(rate))).toBe(true)
  })

  it.each([
    ['XYZ', 'EUR'],
    ['EUR', 'BGN'],
    ['ISK', 'USD'],
  ])('%s → %s is UNSUPPORTED_CURRENCY', (from, to) => {
    expect(() => convert(new Decimal('1'), from, to, REFERENCE_FX_RATES)).toThrow(expect.objectContaining({ code: 'UNSUPPORTED_CURRENCY' }))
  })
})

describe('countries', () => {
  it.each([
    ['GBR', 'GB'],
    ['USA', 'US'],
    ['CAN', 'CA'],
    ['DEU', 'DE'],
    ['KWT', 'KW'],
    ['JPN', 'JP'],
  ])('%s is known and maps to %s', (alpha3, alpha2) => {
    expect(isKnownCountry(alpha3)).toBe(true)
    expect(toAlpha2(alpha3)).toBe(alpha2)
  })

  it.each(['gbr', 'GB', 'XXX', 'WORLD', ''])('%j is not a known alpha-3 code', (code) => {
    expect(isKnownCountry(code)).toBe(false)
    expect(toAlpha2(code)).toBeUndefined()
  })

  it.each([
    ['USA', 'ny', 'NY'],
    ['USA', 'New York', 'NY'],
    ['USA', '  california ', 'CA'],
    ['USA', 'District of Columbia', 'DC'],
    ['USA', 'Narnia', null],
    ['USA', 'XX', null],
    ['CAN', 'qc', 'QC'],
    ['CAN', 'Québec', 'QC'],
    ['CAN', 'Quebec', 'QC'],
    ['CAN', 'british columbia', 'BC'],
    ['GBR', ' Greater London ', 'GREATER LONDON'],
    ['DEU', '', null],
    ['USA', undefined, null],
  ])('normaliseSubdivision(%s, %j) = %j', (country, state, expected) => {
    expect(normaliseSubdivision(country, state)).toBe(expected)
  })
})
