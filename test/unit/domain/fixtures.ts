// Shared builders for the domain tests: a small catalogue and quote inputs with sensible defaults.
import type { CreditProject, ImpactPartner, SectionTaxRates } from '../../../src/domain/types.js'
import type { QuoteInput, ReferenceData } from '../../../src/domain/pricing.js'
import { DEFAULT_EMISSION_FACTORS } from '../../../src/domain/data/emission-factors.js'
import { DEMO_CREDIT_PROJECTS, DEMO_IMPACT_PARTNERS } from '../../../src/domain/data/demo-catalogue.js'
import { REFERENCE_FX_RATES } from '../../../src/domain/fx.js'
import { indexFactors } from '../../../src/domain/footprint.js'
import { Decimal } from '../../../src/domain/money.js'

export function partner(overrides: Partial<ImpactPartner> & Pick<ImpactPartner, 'id'>): ImpactPartner {
  return {
    kind: 'credits',
    name: `Partner ${overrides.id}`,
    shortDescription: 'A test partner.',
    images: { logos: [{ path: `/img/${overrides.id}.png`, type: 'default', width: 64, height: 64 }] },
    priority: 0,
    active: true,
    ...overrides,
  }
}

export function project(overrides: Partial<CreditProject> & Pick<CreditProject, 'id'>): CreditProject {
  return {
    impactPartnerId: 'credits-partner',
    name: `Project ${overrides.id}`,
    shortDescription: 'A test project.',
    type: 'carbonCredits',
    location: { countryCode: null, state: null },
    price: '25.00',
    priceCurrency: 'USD',
    priority: 0,
    weight: null,
    active: true,
    ...overrides,
  }
}

export const CREDITS_PARTNER = partner({ id: 'credits-partner', kind: 'credits' })
export const CONTRIBUTION_PARTNERS = [
  partner({ id: 'contrib-a', kind: 'contribution', priority: 2 }),
  partner({ id: 'contrib-b', kind: 'contribution', priority: 1 }),
]

/** One credits partner with the given projects, two contribution partners, default factors and FX. */
export function referenceData(projects: readonly CreditProject[], extraPartners: readonly ImpactPartner[] = []): ReferenceData {
  return {
    factors: indexFactors(DEFAULT_EMISSION_FACTORS),
    fx: REFERENCE_FX_RATES,
    partners: [CREDITS_PARTNER, ...CONTRIBUTION_PARTNERS, ...extraPartners],
    projects,
  }
}

/** The demo catalogue (what `catalogue import --demo` loads) with default factors and FX, as pricing reads it. */
export const DEMO_REFERENCE: ReferenceData = {
  factors: indexFactors(DEFAULT_EMISSION_FACTORS),
  fx: REFERENCE_FX_RATES,
  partners: DEMO_IMPACT_PARTNERS,
  projects: DEMO_CREDIT_PROJECTS,
}

export function quoteInput(overrides: Partial<QuoteInput> = {}): QuoteInput {
  return {
    impactType: 'carbon',
    amount: '47.97',
    currencyCode: 'GBP',
    mcc: '5992',
    merchant: { countryCode: 'GBR' },
    consumer: { countryCode: 'GBR' },
    locale: 'en-GB',
    matchConsumerLocation: false,
    serviceFeeRate: '0.2',
    date: '2026-02-10',
    ...overrides,
  }
}

/** Exact sum of decimal strings. */
export function sum(values: readonly string[]): string {
  return values.reduce((acc, value) => acc.plus(value), new Decimal(0)).toString()
}

/** Replaces the no-break spaces Intl uses (U+00A0, U+202F) with plain spaces. */
export function plainSpaces(text: string): string {
  return text.replace(/[\u00a0\u202f]/g, ' ')
}

/**
 * Reference oracle: the exact effective rates of a section, [1, ti, f, f·tf] / D with D = 1 + ti + f·(1 + tf), at
 * the Decimal's 50 significant digits. The service shows rounded rates (displayRatesOf); tests compare them to these.
 */
export function exactRatesOf(rates: SectionTaxRates): Record<'impact' | 'impactTax' | 'serviceFee' | 'serviceFeeTax', Decimal> {
  const gross = new Decimal(1).plus(rates.impactTax).plus(new Decimal(rates.serviceFee).times(new Decimal(1).plus(rates.serviceFeeTax)))
  return {
    impact: new Decimal(1).div(gross),
    impactTax: new Decimal(rates.impactTax).div(gross),
    serviceFee: new Decimal(rates.serviceFee).div(gross),
    serviceFeeTax: new Decimal(rates.serviceFee).times(rates.serviceFeeTax).div(gross),
  }
}
