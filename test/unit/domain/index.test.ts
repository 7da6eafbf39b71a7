// The names the HTTP and service layers import from src/domain: renaming one is a breaking change.
import { describe, expect, it } from 'vitest'
import * as domain from '../../../src/domain/index.js'

describe('src/domain public API', () => {
  it.each([
    'Decimal',
    'minorUnitsOf',
    'toMinorUnits',
    'fromMinorUnits',
    'formatMinorUnits',
    'roundHalfUp',
    'splitByWeights',
    'formatDecimal',
    'formatRate',
    'parseDecimal',
    'REFERENCE_FX_RATES',
    'isPricedCurrency',
    'convert',
    'isKnownCountry',
    'toAlpha2',
    'normaliseSubdivision',
    'DEFAULT_EMISSION_FACTORS',
    'findFactor',
    'estimateFootprint',
    'SUPPORTED_LOCALES',
    'resolveLocale',
    'describeEquivalents',
    'selectCreditProjects',
    'selectContributionPartners',
    'TAX_RULE_SET',
    'resolveJurisdiction',
    'taxRatesFor',
    'effectiveRatesOf',
    'priceQuote',
    'splitAllocation',
    'reverseAllocation',
    'DomainError',
    'DEMO_CREDIT_PROJECTS',
    'DEMO_IMPACT_PARTNERS',
  ])('exports %s', (name) => {
    expect(domain).toHaveProperty(name)
    expect((domain as Record<string, unknown>)[name]).toBeDefined()
  })
})
