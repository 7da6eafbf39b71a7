import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { Decimal, formatMinorUnits, roundHalfUp, toMinorUnits } from '../../../src/domain/money.js'
import { displayRatesOf, grossFactorOf, partnerRatesOf, priceQuote } from '../../../src/domain/pricing.js'
import type { QuoteInput } from '../../../src/domain/pricing.js'
import type { LockedQuote, SectionTaxRates } from '../../../src/domain/types.js'
import { DEMO_CREDIT_PROJECTS, DEMO_IMPACT_PARTNERS } from '../../../src/domain/data/demo-catalogue.js'
import { DEFAULT_EMISSION_FACTORS } from '../../../src/domain/data/emission-factors.js'
import { REFERENCE_FX_RATES } from '../../../src/domain/fx.js'
import { indexFactors } from '../../../src/domain/footprint.js'
import { CREDITS_PARTNER, exactRatesOf, partner, project, quoteInput, referenceData, sum } from './fixtures.js'
import { arbitraryProjects, arbitraryQuoteInput } from './arbitraries.js'

const UK_WOODLAND = project({ id: 'uk-woodland', price: '23.30', priceCurrency: 'GBP', location: { countryCode: 'GBR', state: null } })
const ARR_RW = project({ id: 'arr-rw', price: '25.00', priceCurrency: 'USD', priority: 50 })
const MANGROVE_LK = project({ id: 'mangrove-lk', price: '30.00', priceCurrency: 'USD', priority: 40 })
const REDD_KE = project({ id: 'redd-ke', price: '10.00', priceCurrency: 'USD', priority: 30 })

const creditsOf = (quote: LockedQuote) => {
  if (quote.credits === undefined) throw new Error('expected a credits section')
  return quote.credits
}

describe('grossFactorOf and the section rates (docs/pricing.md)', () => {
  it.each<[string, SectionTaxRates, string]>([
    ['no tax, 20% fee', { impactTax: '0', serviceFee: '0.2', serviceFeeTax: '0' }, '1.2'],
    ['UK fee VAT only (ekko example)', { impactTax: '0', serviceFee: '0.2', serviceFeeTax: '0.2' }, '1.24'],
    ['UK credits and fee', { impactTax: '0.2', serviceFee: '0.2', serviceFeeTax: '0.2' }, '1.44'],
    ['German 19%', { impactTax: '0.19', serviceFee: '0.2', serviceFeeTax: '0.19' }, '1.428'],
    ['Quebec GST+QST on the fee', { impactTax: '0', serviceFee: '0.2', serviceFeeTax: '0.14975' }, '1.22995'],
    ['no fee at all', { impactTax: '0', serviceFee: '0', serviceFeeTax: '0.2' }, '1'],
  ])('%s: D = %s, shown rates = [1, ti, f, f·tf] / D to 10 decimals, summing to exactly 1', (_, rates, gross) => {
    expect(grossFactorOf(rates).toString()).toBe(gross)
    const shown = displayRatesOf(rates)
    const exact = exactRatesOf(rates)
    for (const key of ['impact', 'impactTax', 'serviceFee', 'serviceFeeTax'] as const) {
      expect(new Decimal(shown[key]).minus(exact[key]).abs().lessThan('1e-10')).toBe(true)
    }
    expect(sum(Object.values(shown))).toBe('1')
  })

  it('gives exact shortest strings where the division is exact', () => {
    // 1 / 1.25 = 0.8, 0.25 / 1.25 = 0.2
    expect(displayRatesOf({ impactTax: '0', serviceFee: '0.25', serviceFeeTax: '0' })).toEqual({
      impact: '0.8',
      impactTax: '0',
      serviceFee: '0.2',
      serviceFeeTax: '0',
    })
  })
})

describe('priceQuote: hand-worked examples', () => {
  it('GBP 47.97 at a London florist, UK consumer, UK woodland at £23.30/t', () => {
    // Footprint: 10,833.2 g (see footprint.test.ts) → 0.0108332 t.
    // Tax (GB, 2026): ti = 0.2 (credits standard-rated since 2024-09-01), f = 0.2, tf = 0.2
    //   D = 1 + 0.2 + 0.2 × 1.2 = 1.44
    // T = 0.0108332 × 23.30 × 1.44 = 0.25241356 × 1.44 = 0.36347… → £0.36 (36p)
    // amounts: 36p × [1, 0.2, 0.2, 0.04] / 1.44 = 25 / 5 / 5 / 1 exactly → 0.25 / 0.05 / 0.05 / 0.01
    const quote = priceQuote(quoteInput({ matchConsumerLocation: true }), referenceData([UK_WOODLAND, ARR_RW]))
    expect(quote).toMatchObject({ impactType: 'carbon', currencyCode: 'GBP', minorUnits: 2, locale: 'en-GB' })
    expect(quote.footprint).toEqual({ kind: 'carbon', co2eGrams: '10833.2', co2eOunces: '382.13' })
    const credits = creditsOf(quote)
    expect(credits.taxRates).toEqual({ impactTax: '0.2', serviceFee: '0.2', serviceFeeTax: '0.2' })
    expect(credits.amounts).toEqual({ total: '0.36', impact: '0.25', impactTax: '0.05', serviceFee: '0.05', serviceFeeTax: '0.01' })
    expect(credits.unit).toEqual({ description: 'tCO2e', price: '23.30' })
    expect(credits.consumerLocationMatchAccuracy).toBe('country')
    expect(credits.projects).toMatchObject([
      { id: 'uk-woodland', unitPrice: '23.30', weight: '1', weightShare: '1', catalogue: { price: '23.30', currencyCode: 'GBP' } },
    ])
    expect(displayRatesOf(credits.taxRates).impact).toBe('0.6944444444')
    expect(quote.provenance.tax).toMatchObject({ jurisdiction: { country: 'GB', state: null, basis: 'consumer' } })
    expect(quote.contribution.taxRates).toEqual({ impactTax: '0', serviceFee: '0.2', serviceFeeTax: '0.2' })
    expect(quote.contribution.impactPartnerIds).toEqual(['contrib-a', 'contrib-b'])
  })

  it('USD 100 at a US restaurant, US consumer without a state, three USD projects', () => {
    // Footprint 18,099.2 g (2024 CPI) → 0.0180992 t.
    // unit price: (25 + 30 + 10) / 3 = 21.666… → $21.67
    // Tax: US (consumer has no state; merchant NY decides) → ti = 0, tf = 0; D = 1.2
    // T = 0.0180992 × 21.67 × 1.2 = 0.47064… → $0.47
    // amounts: 47¢ × [1, 0, 0.2, 0] / 1.2 = 39.17 / 0 / 7.83 / 0 → floors 39 + 7 = 46,
    //   the leftover cent goes to the larger remainder (.83, the fee) → 0.39 / 0.00 / 0.08 / 0.00
    const quote = priceQuote(
      quoteInput({
        amount: '100',
        currencyCode: 'USD',
        mcc: '5812',
        merchant: { countryCode: 'USA', state: 'NY' },
        consumer: { countryCode: 'USA' },
        locale: 'en-US',
        date: '2024-06-01',
      }),
      referenceData([ARR_RW, MANGROVE_LK, REDD_KE, project({ id: 'low-priority', priority: 1 })]),
    )
    expect(quote.footprint).toMatchObject({ co2eGrams: '18099.2' })
    const credits = creditsOf(quote)
    expect(credits.projects.map((p) => p.id)).toEqual(['arr-rw', 'mangrove-lk', 'redd-ke'])
    expect(credits.projects.map((p) => p.weightShare)).toEqual(['0.3333333333', '0.3333333333', '0.3333333333'])
    expect(credits.unit.price).toBe('21.67')
    expect(credits.amounts).toEqual({ total: '0.47', impact: '0.39', impactTax: '0.00', serviceFee: '0.08', serviceFeeTax: '0.00' })
    expect(credits.consumerLocationMatchAccuracy).toBe('global')
    expect(quote.provenance.tax.jurisdiction).toEqual({ country: 'US', state: 'NY', basis: 'merchant' })
    expect(quote.equivalents[0]?.description).toBe("That's about the same as driving an average gas-powered car for 46 miles.")
  })

  it('JPY 10,000 at a Japanese supermarket: no minor units', () => {
    // Footprint 23,815.4 g → 0.0238154 t. Unit price: $25 × 185.27 / 1.1794 = ¥3,927.21 → ¥3,927
    // Tax: JP is "others": ti = 0, tf = 0.1 (standard rate); D = 1 + 0.2 × 1.1 = 1.22
    // T = 0.0238154 × 3,927 × 1.22 = 114.098… → ¥114
    // amounts: 114 × [1, 0, 0.2, 0.02] / 1.22 = 93.44 / 0 / 18.69 / 1.87 → floors 93 + 18 + 1 = 112,
    //   2 leftover yen to the largest remainders (.87 fee tax, .69 fee) → 93 / 0 / 19 / 2
    const quote = priceQuote(
      quoteInput({
        amount: '10000',
        currencyCode: 'JPY',
        mcc: '5411',
        merchant: { countryCode: 'JPN' },
        consumer: { countryCode: 'JPN' },
        locale: 'ja-JP',
      }),
      referenceData([ARR_RW]),
    )
    expect(quote.minorUnits).toBe(0)
    expect(quote.locale).toBe('en-GB')
    const credits = creditsOf(quote)
    expect(credits.unit.price).toBe('3927')
    expect(credits.amounts).toEqual({ total: '114', impact: '93', impactTax: '0', serviceFee: '19', serviceFeeTax: '2' })
  })

  it('KWD 12.345 at a Kuwaiti restaurant: three minor units', () => {
    // Footprint 7,278.0 g → 0.007278 t. Unit price: $25 × 0.307 = KWD 7.675 (exact)
    // Tax: Kuwait has no VAT (an override corrects sales-tax's 5%) → tf = 0; D = 1 + 0.2 = 1.2
    // T = 0.007278 × 7.675 × 1.2 = 0.06703 → KWD 0.067 (67 fils)
    // amounts: 67 × [1, 0, 0.2, 0] / 1.2 = 55.83 / 0 / 11.17 / 0 → 55 + 11 = 66,
    //   1 leftover fils to the largest remainder (.83, impact) → 0.056 / 0.000 / 0.011 / 0.000
    const quote = priceQuote(
      quoteInput({
        amount: '12.345',
        currencyCode: 'KWD',
        mcc: '5812',
        merchant: { countryCode: 'KWT' },
        consumer: { countryCode: 'KWT' },
      }),
      referenceData([ARR_RW]),
    )
    const credits = creditsOf(quote)
    expect(quote.footprint).toMatchObject({ co2eGrams: '7278.0' })
    expect(credits.unit.price).toBe('7.675')
    expect(credits.amounts).toEqual({ total: '0.067', impact: '0.056', impactTax: '0.000', serviceFee: '0.011', serviceFeeTax: '0.000' })
  })

  it('a German consumer: 19% on credits and on the fee', () => {
    // EUR 50 at a German bakery: 50 × 0.241 kg/EUR = 12.05 kg → 12,050.0 g → 0.01205 t
    // unit price EUR 20.00; D = 1 + 0.19 + 0.2 × 1.19 = 1.428
    // T = 0.01205 × 20 × 1.428 = 0.344148 → EUR 0.34
    // amounts: 34 × [1, 0.19, 0.2, 0.038] / 1.428 = 23.81 / 4.52 / 4.76 / 0.90 → floors 23 + 4 + 4 + 0 = 31,
    //   3 leftover cents to remainders .90, .81, .76 → 24 / 4 / 5 / 1
    const quote = priceQuote(
      quoteInput({
        amount: '50',
        currencyCode: 'EUR',
        mcc: '5462',
        merchant: { countryCode: 'DEU' },
        consumer: { countryCode: 'DEU' },
        locale: 'de-DE',
      }),
      referenceData([project({ id: 'eu-project', price: '20.00', priceCurrency: 'EUR' })]),
    )
    const credits = creditsOf(quote)
    expect(quote.footprint).toMatchObject({ co2eGrams: '12050.0' })
    expect(credits.taxRates).toEqual({ impactTax: '0.19', serviceFee: '0.2', serviceFeeTax: '0.19' })
    expect(credits.amounts).toEqual({ total: '0.34', impact: '0.24', impactTax: '0.04', serviceFee: '0.05', serviceFeeTax: '0.01' })
    expect(quote.contribution.taxRates).toEqual({ impactTax: '0', serviceFee: '0.2', serviceFeeTax: '0.19' })
  })

  it('a Quebec consumer: GST + QST (14.975%) on the fee, nothing on credits or contributions', () => {
    // CAD 200 at a Canadian hotel (7011, CAN → USEEIO WORLD 0.145 kg per 2022 USD)
    // 200 × 1.1794 / 1.6118 = 146.3457 USD × 0.9329463 = 136.5326 × 0.145 = 19.7972 kg → 19,797.2 g
    // unit: $25 × 1.6118 / 1.1794 = CAD 34.1657 → 34.17; D = 1 + 0.2 × 1.14975 = 1.22995
    // T = 0.0197972 × 34.17 × 1.22995 = 0.83204 → CAD 0.83
    // amounts: 83 × [1, 0, 0.2, 0.02995] / 1.22995 = 67.48 / 0 / 13.50 / 2.02 → 67 + 13 + 2 = 82,
    //   the leftover cent to remainder .50 (fee) vs .48 (impact) → 67 / 0 / 14 / 2
    const quote = priceQuote(
      quoteInput({
        amount: '200',
        currencyCode: 'CAD',
        mcc: '7011',
        merchant: { countryCode: 'CAN', state: 'ON' },
        consumer: { countryCode: 'CAN', state: 'Québec' },
        locale: 'fr-CA',
      }),
      referenceData([ARR_RW]),
    )
    const credits = creditsOf(quote)
    expect(quote.locale).toBe('fr-FR')
    expect(quote.footprint).toMatchObject({ co2eGrams: '19797.2' })
    expect(quote.provenance.tax.jurisdiction).toEqual({ country: 'CA', state: 'QC', basis: 'consumer' })
    expect(credits.taxRates).toEqual({ impactTax: '0', serviceFee: '0.2', serviceFeeTax: '0.14975' })
    expect(credits.unit.price).toBe('34.17')
    expect(credits.amounts).toEqual({ total: '0.83', impact: '0.67', impactTax: '0.00', serviceFee: '0.14', serviceFeeTax: '0.02' })
    expect(quote.contribution.taxRates).toEqual({ impactTax: '0', serviceFee: '0.2', serviceFeeTax: '0.14975' })
    expect(sum(Object.values(displayRatesOf(quote.contribution.taxRates)))).toBe('1')
  })

  it('charges at least one minor unit for a tiny footprint', () => {
    // JPY 1 → 0.4 g → 0.0000004 t × ¥3,927 × 1.22 = ¥0.0019 → rounds to 0 → minimum ¥1, all of it impact
    const quote = priceQuote(
      quoteInput({
        amount: '1',
        currencyCode: 'JPY',
        mcc: '8398',
        merchant: { countryCode: 'USA' },
        consumer: { countryCode: 'JPN' },
        date: '2022-01-01',
      }),
      referenceData([ARR_RW]),
    )
    expect(creditsOf(quote).amounts).toEqual({ total: '1', impact: '1', impactTax: '0', serviceFee: '0', serviceFeeTax: '0' })
  })
})

describe('priceQuote: projects, weights and partners', () => {
  it('uses catalogue weights when given, with a weighted unit price', () => {
    // (2 × 25 + 1 × 10) / 3 = 20.00
    const quote = priceQuote(
      quoteInput({ currencyCode: 'USD', amount: '10' }),
      referenceData([
        project({ id: 'a', price: '25', weight: '2', priority: 2 }),
        project({ id: 'b', price: '10', weight: '1', priority: 1 }),
      ]),
    )
    const credits = creditsOf(quote)
    expect(credits.unit.price).toBe('20.00')
    expect(credits.projects.map((p) => [p.id, p.weight, p.weightShare, p.unitPrice])).toEqual([
      ['a', '2', '0.6666666667', '25.00'],
      ['b', '1', '0.3333333333', '10.00'],
    ])
  })

  it('ignores projects of partners that are missing or inactive, and projects priced in unsupported currencies', () => {
    const quote = priceQuote(
      quoteInput(),
      referenceData(
        [
          project({ id: 'stranger', impactPartnerId: 'not-allowed', priority: 9 }),
          project({ id: 'sleeping', impactPartnerId: 'inactive', priority: 8 }),
          project({ id: 'bgn', priceCurrency: 'BGN', priority: 7 }),
          project({ id: 'ok' }),
        ],
        [partner({ id: 'inactive', active: false })],
      ),
    )
    expect(creditsOf(quote).projects.map((p) => p.id)).toEqual(['ok'])
  })

  it('lists partner rates and details for every referenced partner', () => {
    const quote = priceQuote(quoteInput(), referenceData([ARR_RW, MANGROVE_LK]))
    expect(partnerRatesOf(quote).credits).toEqual([{ partnerId: 'credits-partner', rates: displayRatesOf(creditsOf(quote).taxRates) }])
    expect(partnerRatesOf(quote).contribution.map((r) => r.partnerId)).toEqual(['contrib-a', 'contrib-b'])
    expect(partnerRatesOf(quote).contribution[0]?.rates).toEqual(displayRatesOf(quote.contribution.taxRates))
    expect(quote.partners.map((p) => p.id)).toEqual(['credits-partner', 'contrib-a', 'contrib-b'])
    expect(creditsOf(quote).impactPartnerIds).toEqual(['credits-partner'])
    expect(quote.partners[0]).toEqual({
      id: 'credits-partner',
      name: 'Partner credits-partner',
      shortDescription: 'A test partner.',
      images: CREDITS_PARTNER.images,
    })
  })

  it('prices the demo catalogue for the demo organisation (GBP florist, UK consumer, matching on)', () => {
    const quote = priceQuote(quoteInput({ matchConsumerLocation: true }), {
      factors: indexFactors(DEFAULT_EMISSION_FACTORS),
      fx: REFERENCE_FX_RATES,
      partners: DEMO_IMPACT_PARTNERS,
      projects: DEMO_CREDIT_PROJECTS,
    })
    expect(creditsOf(quote).projects.map((p) => p.name)).toEqual(['UK woodland creation (demo)'])
    expect(creditsOf(quote).amounts.total).toBe('0.36')
  })

  it('prices a nature quote without a credits section', () => {
    const quote = priceQuote(quoteInput({ impactType: 'nature' }), referenceData([]))
    expect(quote.credits).toBeUndefined()
    expect(quote.footprint).toEqual({ kind: 'nature', areaSquareMetres: '22.11', areaSquareFeet: '237.97' })
    expect(quote.equivalents.map((e) => e.key)).toEqual(['parkingSpace', 'tennisCourt'])
    expect(partnerRatesOf(quote).credits).toEqual([])
    expect(quote.contribution.impactPartnerIds).toEqual(['contrib-a', 'contrib-b'])
  })

  it('refuses a carbon quote with no eligible credit project', () => {
    expect(() => priceQuote(quoteInput(), referenceData([project({ id: 'off', active: false })]))).toThrow(
      expect.objectContaining({ code: 'NO_CREDIT_PROJECTS' }),
    )
  })
})

describe('priceQuote: validation', () => {
  it.each<[string, Partial<QuoteInput>, string, string]>([
    ['an unknown currency', { currencyCode: 'XYZ' }, 'UNSUPPORTED_CURRENCY', '/transaction/currencyCode'],
    ['a currency without an FX rate', { currencyCode: 'BGN' }, 'UNSUPPORTED_CURRENCY', '/transaction/currencyCode'],
    ['a lower-case currency', { currencyCode: 'gbp' }, 'UNSUPPORTED_CURRENCY', '/transaction/currencyCode'],
    ['an unknown consumer country', { consumer: { countryCode: 'XXX' } }, 'UNKNOWN_COUNTRY', '/consumer/countryCode'],
    ['an alpha-2 merchant country', { merchant: { countryCode: 'GB' } }, 'UNKNOWN_COUNTRY', '/merchant/address/countryCode'],
    ['a 3-digit MCC', { mcc: '599' }, 'INVALID_MCC', '/merchant/mcc'],
    ['a zero amount', { amount: '0' }, 'AMOUNT_OUT_OF_RANGE', '/transaction/amount'],
    ['a negative amount', { amount: '-5' }, 'AMOUNT_OUT_OF_RANGE', '/transaction/amount'],
    ['a non-numeric amount', { amount: 'ten' }, 'AMOUNT_OUT_OF_RANGE', '/transaction/amount'],
    ['GBP with 3 decimals', { amount: '47.975' }, 'AMOUNT_PRECISION', '/transaction/amount'],
    ['JPY with decimals', { amount: '100.5', currencyCode: 'JPY' }, 'AMOUNT_PRECISION', '/transaction/amount'],
    ['KWD with 4 decimals', { amount: '1.2345', currencyCode: 'KWD' }, 'AMOUNT_PRECISION', '/transaction/amount'],
  ])('rejects %s', (_, overrides, code, path) => {
    expect(() => priceQuote(quoteInput(overrides), referenceData([ARR_RW]))).toThrow(expect.objectContaining({ code, path }))
  })

  it('accepts a KWD amount with 3 decimals and a JPY whole amount', () => {
    expect(() => priceQuote(quoteInput({ amount: '1.234', currencyCode: 'KWD' }), referenceData([ARR_RW]))).not.toThrow()
    expect(() => priceQuote(quoteInput({ amount: '100', currencyCode: 'JPY' }), referenceData([ARR_RW]))).not.toThrow()
  })
})

describe('priceQuote: properties', () => {
  it('property: total = impact + impactTax + serviceFee + serviceFeeTax, total ≥ one minor unit, rates sum to 1', () => {
    fc.assert(
      fc.property(arbitraryQuoteInput, arbitraryProjects, (input, projects) => {
        const quote = priceQuote(input, referenceData(projects))
        const credits = creditsOf(quote)
        const { total, ...parts } = credits.amounts
        expect(sum(Object.values(parts))).toBe(new Decimal(total).toString())
        const minorUnit = new Decimal(10).pow(-quote.minorUnits)
        expect(new Decimal(total).greaterThanOrEqualTo(minorUnit)).toBe(true)
        for (const value of Object.values(credits.amounts)) {
          expect(value).toMatch(quote.minorUnits === 0 ? /^\d+$/ : new RegExp(`^\\d+\\.\\d{${quote.minorUnits}}$`))
        }
        // each part is within one minor unit of total × its exact effective rate
        const exactRates = exactRatesOf(credits.taxRates)
        for (const key of ['impact', 'impactTax', 'serviceFee', 'serviceFeeTax'] as const) {
          const exact = new Decimal(total).times(exactRates[key])
          expect(new Decimal(credits.amounts[key]).minus(exact).abs().lessThan(minorUnit)).toBe(true)
        }
        expect(sum(Object.values(displayRatesOf(credits.taxRates)))).toBe('1')
        expect(sum(Object.values(displayRatesOf(quote.contribution.taxRates)))).toBe('1')
        expect(JSON.parse(JSON.stringify(quote))).toEqual(quote)
      }),
      { numRuns: 10_000 },
    )
  })
  it('property: the credits total is tonnes × unit price × D half-up to minor units, as Decimal computes it, at least one', () => {
    fc.assert(
      fc.property(arbitraryQuoteInput, arbitraryProjects, (input, projects) => {
        const quote = priceQuote(input, referenceData(projects))
        const credits = creditsOf(quote)
        if (quote.footprint.kind !== 'carbon') throw new Error('expected a carbon footprint')
        const product = new Decimal(quote.footprint.co2eGrams)
          .div(1_000_000)
          .times(credits.unit.price)
          .times(grossFactorOf(credits.taxRates))
        const rounded = toMinorUnits(roundHalfUp(product, quote.minorUnits), quote.minorUnits)
        expect(credits.amounts.total).toBe(formatMinorUnits(rounded < 1n ? 1n : rounded, quote.minorUnits))
      }),
      { numRuns: 10_000 },
    )
  })
})
