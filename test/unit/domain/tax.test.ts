import { describe, expect, it } from 'vitest'
import { Decimal } from '../../../src/domain/money.js'
import { TAX_RULE_SET, resolveJurisdiction, taxRateFor, taxRatesFor } from '../../../src/domain/tax.js'
import type { TaxRuleSet } from '../../../src/domain/tax.js'
import type { ConsumerLocation, MerchantLocation, TaxJurisdiction } from '../../../src/domain/types.js'

const F = new Decimal('0.2')
const at = (country: string, state: string | null = null): TaxJurisdiction => ({ country, state, basis: 'consumer' })

describe('resolveJurisdiction', () => {
  it.each<[string, ConsumerLocation, MerchantLocation | undefined, TaxJurisdiction]>([
    [
      'a German consumer: the country',
      { countryCode: 'DEU', state: 'Bayern' },
      { countryCode: 'GBR' },
      { country: 'DE', state: null, basis: 'consumer' },
    ],
    ['a Quebec consumer, by code', { countryCode: 'CAN', state: 'qc' }, undefined, { country: 'CA', state: 'QC', basis: 'consumer' }],
    [
      'a Quebec consumer, by name',
      { countryCode: 'CAN', state: 'Québec' },
      { countryCode: 'CAN', state: 'ON' },
      { country: 'CA', state: 'QC', basis: 'consumer' },
    ],
    [
      'a US consumer with a state',
      { countryCode: 'USA', state: 'TX' },
      { countryCode: 'USA', state: 'NY' },
      { country: 'US', state: 'TX', basis: 'consumer' },
    ],
    [
      'a US consumer without a state: the merchant state decides',
      { countryCode: 'USA' },
      { countryCode: 'USA', state: 'New York' },
      { country: 'US', state: 'NY', basis: 'merchant' },
    ],
    [
      'a US consumer, merchant abroad: no state',
      { countryCode: 'USA' },
      { countryCode: 'GBR', state: 'London' },
      { country: 'US', state: null, basis: 'consumer' },
    ],
    ['a CA consumer, no merchant: no province', { countryCode: 'CAN' }, undefined, { country: 'CA', state: null, basis: 'consumer' }],
  ])('%s', (_, consumer, merchant, expected) => {
    expect(resolveJurisdiction(consumer, merchant)).toEqual(expected)
  })

  it('refuses an unknown CA province instead of falling back to the merchant province (see subdivisions.test.ts)', () => {
    expect(() => resolveJurisdiction({ countryCode: 'CAN', state: 'Atlantis' }, { countryCode: 'CAN', state: 'BC' })).toThrow(
      expect.objectContaining({ code: 'UNKNOWN_SUBDIVISION', path: '/consumer/state' }),
    )
  })

  it('rejects an unknown consumer country with a path', () => {
    expect(() => resolveJurisdiction({ countryCode: 'XXX' }, undefined)).toThrow(
      expect.objectContaining({ code: 'UNKNOWN_COUNTRY', path: '/consumer/countryCode' }),
    )
  })
})

describe('taxRatesFor (docs/pricing.md, "Tax")', () => {
  it.each([
    // [case, jurisdiction, date, credit impact ti, service-fee tax tf]
    ['US, any state: 0 / 0 (state sales tax does not reach intangibles or the fee)', at('US', 'CA'), '2026-02-10', '0', '0'],
    ['US without a state', at('US'), '2026-02-10', '0', '0'],
    ['GB before 1 Sep 2024: credits outside scope, fee 20%', at('GB'), '2024-08-31', '0', '0.2'],
    ['GB from 1 Sep 2024: credits standard-rated 20%', at('GB'), '2024-09-01', '0.2', '0.2'],
    ['a German consumer: 19% on credits and fee', at('DE'), '2026-02-10', '0.19', '0.19'],
    ['Germany in H2 2020: the temporary 16%', at('DE'), '2020-08-15', '0.16', '0.16'],
    ['Germany on 2020-06-30: still 19%', at('DE'), '2020-06-30', '0.19', '0.19'],
    ['Germany on 2020-07-01: 16%', at('DE'), '2020-07-01', '0.16', '0.16'],
    ['Germany on 2021-01-01: back to 19%', at('DE'), '2021-01-01', '0.19', '0.19'],
    ['France 20%', at('FR'), '2026-02-10', '0.2', '0.2'],
    ['Finland on 2024-08-31: 24%', at('FI'), '2024-08-31', '0.24', '0.24'],
    ['Finland on 2024-09-01: 25.5%', at('FI'), '2024-09-01', '0.255', '0.255'],
    ['Romania on 2025-08-01: 21% (our override; sales-tax switches a day late)', at('RO'), '2025-08-01', '0.21', '0.21'],
    ['Romania on 2025-07-31: 19%', at('RO'), '2025-07-31', '0.19', '0.19'],
    ['a Quebec consumer: GST 5% + QST 9.975% on the fee, none on credits', at('CA', 'QC'), '2026-02-10', '0', '0.14975'],
    ['Ontario: HST 13% on the fee', at('CA', 'ON'), '2026-02-10', '0', '0.13'],
    ['Nova Scotia before 2025-04-01: HST 15%', at('CA', 'NS'), '2025-03-31', '0', '0.15'],
    ['Nova Scotia from 2025-04-01: HST 14%', at('CA', 'NS'), '2025-04-01', '0', '0.14'],
    ['Alberta: GST 5% only', at('CA', 'AB'), '2026-02-10', '0', '0.05'],
    ['Canada without a province: GST 5%', at('CA'), '2026-02-10', '0', '0.05'],
    ['Japan (others): the standard 10% on the fee, credits 0', at('JP'), '2026-02-10', '0', '0.1'],
    ['Switzerland (others) in 2023: 7.7% on the fee', at('CH'), '2023-06-01', '0', '0.077'],
    ['Switzerland (others) in 2024: 8.1% on the fee', at('CH'), '2024-06-01', '0', '0.081'],
    ['Hong Kong: no sales tax', at('HK'), '2026-02-10', '0', '0'],
    ['a country missing from the table: 0', at('AQ'), '2026-02-10', '0', '0'],
    ['Spain (EU): the national 21%; regions are not consulted', at('ES', 'GC'), '2026-02-10', '0.21', '0.21'],
  ])('%s', (_, jurisdiction, date, creditImpact, serviceFeeTax) => {
    const rates = taxRatesFor(jurisdiction, date, F)
    expect(rates.credits).toEqual({ impactTax: creditImpact, serviceFee: '0.2', serviceFeeTax })
    expect(rates.contribution).toEqual({ impactTax: '0', serviceFee: '0.2', serviceFeeTax })
  })

  it('carries the service fee rate f in shortest form', () => {
    expect(taxRatesFor(at('GB'), '2026-02-10', new Decimal('0.150')).credits.serviceFee).toBe('0.15')
    expect(taxRatesFor(at('GB'), '2026-02-10', new Decimal('0')).credits.serviceFee).toBe('0')
  })

  it('rejects a negative fee rate and a malformed date', () => {
    expect(() => taxRatesFor(at('GB'), '2026-02-10', new Decimal('-0.1'))).toThrow(RangeError)
    expect(() => taxRatesFor(at('GB'), '10/02/2026', F)).toThrow(RangeError)
  })

  it('applies line overrides per state before country-wide ones, within their dates', () => {
    const ruleSet: TaxRuleSet = {
      ...TAX_RULE_SET,
      overrides: [
        ...TAX_RULE_SET.overrides,
        { country: 'US', state: 'WA', line: 'serviceFee', rate: '0.065', from: '2026-01-01', to: null, note: 'test' },
        { country: 'US', state: null, line: 'serviceFee', rate: '0.01', from: '2026-01-01', to: '2026-02-01', note: 'test' },
      ],
    }
    expect(taxRateFor('serviceFee', at('US', 'WA'), '2026-02-10', ruleSet).toString()).toBe('0.065')
    expect(taxRateFor('serviceFee', at('US', 'WA'), '2025-12-31', ruleSet).toString()).toBe('0')
    expect(taxRateFor('serviceFee', at('US', 'OR'), '2026-01-15', ruleSet).toString()).toBe('0.01')
    expect(taxRateFor('serviceFee', at('US', 'OR'), '2026-02-01', ruleSet).toString()).toBe('0')
    expect(taxRateFor('creditImpact', at('US', 'WA'), '2026-02-10', ruleSet).toString()).toBe('0')
  })

  it('names its rule set and the sales-tax release in the version', () => {
    expect(TAX_RULE_SET.version).toMatch(/^canopy-tax-\d+\/sales-tax-\d+\.\d+\.\d+$/)
    expect(TAX_RULE_SET.effectiveDate).toMatch(/^\d{4}-\d{2}-\d{2}$/)
  })
})

describe('overrides of stale sales-tax data', () => {
  it.each([
    ['KW', '2026-02-10', '0'], // no VAT in Kuwait (sales-tax says 5%)
    ['QA', '2026-02-10', '0'], // no VAT in Qatar (sales-tax says 5%)
    ['BH', '2026-02-10', '0.1'], // Bahrain 10% since 2022 (sales-tax says 5%)
    ['BH', '2021-12-31', '0.05'],
    ['OM', '2026-02-10', '0.05'],
  ])('charges the service fee tax of %s on %s at %s', (country, date, rate) => {
    expect(taxRateFor('serviceFee', { country, state: null, basis: 'consumer' }, date).toString()).toBe(rate)
    expect(taxRateFor('creditImpact', { country, state: null, basis: 'consumer' }, date).toString()).toBe('0')
  })
})
