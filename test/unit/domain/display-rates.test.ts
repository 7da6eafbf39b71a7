import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { Decimal } from '../../../src/domain/money.js'
import { displayRatesOf } from '../../../src/domain/pricing.js'
import { exactRatesOf } from './fixtures.js'
import type { EffectiveRates, SectionTaxRates } from '../../../src/domain/types.js'

const sum = (r: EffectiveRates) => new Decimal(r.impact).plus(r.impactTax).plus(r.serviceFee).plus(r.serviceFeeTax)

describe('displayRatesOf', () => {
  it.each([
    // GB: ti 0.2, f 0.2, tf 0.2 → D = 1.44. Shares of 10^10: 6944444444.44, 1388888888.89, 1388888888.89,
    // 277777777.78 → floors sum to 9999999997; the 3 leftover units go to the remainders .89, .89, .78.
    [
      { impactTax: '0.2', serviceFee: '0.2', serviceFeeTax: '0.2' },
      { impact: '0.6944444444', impactTax: '0.1388888889', serviceFee: '0.1388888889', serviceFeeTax: '0.0277777778' },
    ],
    // US: no tax, f 0.2 → 1/1.2 = 0.8333…, 0.2/1.2 = 0.1666…
    [
      { impactTax: '0', serviceFee: '0.2', serviceFeeTax: '0' },
      { impact: '0.8333333333', impactTax: '0', serviceFee: '0.1666666667', serviceFeeTax: '0' },
    ],
    [
      { impactTax: '0', serviceFee: '0', serviceFeeTax: '0' },
      { impact: '1', impactTax: '0', serviceFee: '0', serviceFeeTax: '0' },
    ],
  ])('rounds %j to 10 decimals summing to 1', (rates, expected) => {
    expect(displayRatesOf(rates)).toEqual(expected)
    expect(sum(displayRatesOf(rates)).toString()).toBe('1')
  })

  it('property: sums to exactly 1 and stays within 1e-10 of the full-precision rates (10,000 runs)', () => {
    const rate = fc.integer({ min: 0, max: 300_000 }).map((n) => new Decimal(n).div(1_000_000).toString())
    fc.assert(
      fc.property(rate, rate, rate, (impactTax, serviceFee, serviceFeeTax) => {
        const rates: SectionTaxRates = { impactTax, serviceFee, serviceFeeTax }
        const shown = displayRatesOf(rates)
        const exact = exactRatesOf(rates)
        expect(sum(shown).toString()).toBe('1')
        for (const key of ['impact', 'impactTax', 'serviceFee', 'serviceFeeTax'] as const) {
          expect(new Decimal(shown[key]).minus(exact[key]).abs().lessThan('1e-10')).toBe(true)
        }
      }),
      { numRuns: 10_000 },
    )
  })
})
