import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { Decimal, minorUnitsOf } from '../../../src/domain/money.js'
import { priceQuote } from '../../../src/domain/pricing.js'
import { reverseAllocation, splitAllocation } from '../../../src/domain/allocation.js'
import type { AllocationEntryAmounts, AllocationSplit, LockedQuote } from '../../../src/domain/types.js'
import { DomainError } from '../../../src/domain/errors.js'
import { partner, project, quoteInput, referenceData, sum } from './fixtures.js'
import { arbitraryProjects, arbitraryQuoteInput } from './arbitraries.js'
import { splitAllocationBeforePlans } from './split-allocation-before-plans.js'

const AMOUNT_KEYS = ['impactAmount', 'impactSalesTaxAmount', 'serviceFeeAmount', 'serviceFeeSalesTaxAmount'] as const

const entryTotal = (entry: AllocationEntryAmounts): Decimal => AMOUNT_KEYS.reduce((acc, key) => acc.plus(entry[key]), new Decimal(0))
const totalOf = (entries: readonly AllocationEntryAmounts[]): string =>
  entries.reduce((acc, entry) => acc.plus(entryTotal(entry)), new Decimal(0)).toString()
const column = (entries: readonly AllocationEntryAmounts[], key: (typeof AMOUNT_KEYS)[number]): string => sum(entries.map((e) => e[key]))

const creditsOf = (quote: LockedQuote) => {
  if (quote.credits === undefined) throw new Error('expected a credits section')
  return quote.credits
}

// ekko's fee example: UK before 1 Sep 2024, so ti = 0, f = 0.2, tf = 0.2 (D = 1.24).
const ukAugust2024 = priceQuote(
  quoteInput({ date: '2024-08-31' }),
  referenceData(
    [project({ id: 'p-one', price: '20.00', priceCurrency: 'GBP' })],
    [partner({ id: 'contrib-c', kind: 'contribution', priority: 0 })],
  ),
)
const threeProjects = priceQuote(
  quoteInput({ date: '2026-02-10' }),
  referenceData([
    project({ id: 'p-a', price: '25.00', priceCurrency: 'GBP', priority: 3 }),
    project({ id: 'p-b', price: '30.00', priceCurrency: 'GBP', priority: 2 }),
    project({ id: 'p-c', price: '10.00', priceCurrency: 'GBP', priority: 1 }),
  ]),
)

describe('splitAllocation: credits', () => {
  it('splits GBP 12.40 (ekko example, one project) into 10.00 + 0.00 + 2.00 + 0.40 with raw rates', () => {
    // 1240p × [1, 0, 0.2, 0.04] / 1.24 = 1000 / 0 / 200 / 40 exactly
    const split = splitAllocation(ukAugust2024, { credits: { amount: '12.40' } })
    expect(split).toEqual({
      currencyCode: 'GBP',
      credits: [
        {
          projectId: 'p-one',
          impactPartnerId: 'credits-partner',
          impactAmount: '10.00',
          impactSalesTaxAmount: '0.00',
          impactSalesTaxRate: '0',
          serviceFeeAmount: '2.00',
          serviceFeeSalesTaxAmount: '0.40',
          serviceFeeSalesTaxRate: '0.2',
          // 10.00 / 20.00 per tonne
          quantityTonnes: '0.500000',
        },
      ],
      contributions: [],
    })
  })

  it('splits each component across three equally weighted projects, remainders to the lowest index', () => {
    // GB 2026: [1, 0.2, 0.2, 0.04] / 1.44. Paid £10.00 = 1000p → 694.44 / 138.89 / 138.89 / 27.78
    //   → floors 694 + 138 + 138 + 27 = 997; the 3 leftover pence go to the largest remainders
    //   (.89, .89, .78): 694 / 139 / 139 / 28
    // impact 694 across 3 → 232 / 231 / 231; impactTax 139 → 47 / 46 / 46; fee 139 → 47 / 46 / 46; fee tax 28 → 10 / 9 / 9
    const split = splitAllocation(threeProjects, { credits: { amount: '10.00' } })
    expect(
      split.credits.map((e) => [e.projectId, e.impactAmount, e.impactSalesTaxAmount, e.serviceFeeAmount, e.serviceFeeSalesTaxAmount]),
    ).toEqual([
      ['p-a', '2.32', '0.47', '0.47', '0.10'],
      ['p-b', '2.31', '0.46', '0.46', '0.09'],
      ['p-c', '2.31', '0.46', '0.46', '0.09'],
    ])
    expect(split.credits.every((e) => e.impactSalesTaxRate === '0.2' && e.serviceFeeSalesTaxRate === '0.2')).toBe(true)
    // quantity follows the amount paid: 2.32 / 25.00 = 0.0928, 2.31 / 30.00 = 0.077, 2.31 / 10.00 = 0.231
    expect(split.credits.map((e) => e.quantityTonnes)).toEqual(['0.092800', '0.077000', '0.231000'])
    expect(totalOf(split.credits)).toBe('10')
  })

  it("allocating exactly the quote's total reproduces its amounts", () => {
    const credits = creditsOf(threeProjects)
    const split = splitAllocation(threeProjects, { credits: { amount: credits.amounts.total } })
    expect(column(split.credits, 'impactAmount')).toBe(new Decimal(credits.amounts.impact).toString())
    expect(column(split.credits, 'impactSalesTaxAmount')).toBe(new Decimal(credits.amounts.impactTax).toString())
    expect(column(split.credits, 'serviceFeeAmount')).toBe(new Decimal(credits.amounts.serviceFee).toString())
    expect(column(split.credits, 'serviceFeeSalesTaxAmount')).toBe(new Decimal(credits.amounts.serviceFeeTax).toString())
  })

  it('splits by locked catalogue weights', () => {
    const quote = priceQuote(
      quoteInput(),
      referenceData([project({ id: 'heavy', weight: '3', priority: 2 }), project({ id: 'light', weight: '1', priority: 1 })]),
    )
    // GB 2026, paid £1.44 → 100 / 20 / 20 / 4 pence; impact 100 × 3/4 = 75, 25
    const split = splitAllocation(quote, { credits: { amount: '1.44' } })
    expect(
      split.credits.map((e) => [e.projectId, e.impactAmount, e.impactSalesTaxAmount, e.serviceFeeAmount, e.serviceFeeSalesTaxAmount]),
    ).toEqual([
      ['heavy', '0.75', '0.15', '0.15', '0.03'],
      ['light', '0.25', '0.05', '0.05', '0.01'],
    ])
  })

  it('refuses credits on a nature quote', () => {
    const nature = priceQuote(quoteInput({ impactType: 'nature' }), referenceData([]))
    expect(() => splitAllocation(nature, { credits: { amount: '1.00' } })).toThrow(
      expect.objectContaining({ code: 'NO_CREDITS_IN_QUOTE', path: '/credits' }),
    )
  })

  it.each([
    ['1.234', 'AMOUNT_PRECISION'],
    ['0', 'AMOUNT_OUT_OF_RANGE'],
    ['-1.00', 'AMOUNT_OUT_OF_RANGE'],
    ['lots', 'AMOUNT_OUT_OF_RANGE'],
  ])('rejects a credits amount of %s with %s at /credits/amount', (amount, code) => {
    expect(() => splitAllocation(threeProjects, { credits: { amount } })).toThrow(
      expect.objectContaining({ code, path: '/credits/amount' }),
    )
  })
})

describe('splitAllocation: contribution', () => {
  it('splits by [1, 0, f, f·tf] then equally across all the quote partners by default', () => {
    // GB: tf = 0.2, so 12.40 → 10.00 / 0 / 2.00 / 0.40, then across contrib-a, contrib-b, contrib-c:
    // 1000 → 334 / 333 / 333; 200 → 67 / 67 / 66; 40 → 14 / 13 / 13
    const split = splitAllocation(ukAugust2024, { contribution: { amount: '12.40' } })
    expect(split.credits).toEqual([])
    expect(split.contributions).toEqual([
      {
        impactPartnerId: 'contrib-a',
        impactAmount: '3.34',
        impactSalesTaxAmount: '0.00',
        impactSalesTaxRate: '0',
        serviceFeeAmount: '0.67',
        serviceFeeSalesTaxAmount: '0.14',
        serviceFeeSalesTaxRate: '0.2',
      },
      {
        impactPartnerId: 'contrib-b',
        impactAmount: '3.33',
        impactSalesTaxAmount: '0.00',
        impactSalesTaxRate: '0',
        serviceFeeAmount: '0.67',
        serviceFeeSalesTaxAmount: '0.13',
        serviceFeeSalesTaxRate: '0.2',
      },
      {
        impactPartnerId: 'contrib-c',
        impactAmount: '3.33',
        impactSalesTaxAmount: '0.00',
        impactSalesTaxRate: '0',
        serviceFeeAmount: '0.66',
        serviceFeeSalesTaxAmount: '0.13',
        serviceFeeSalesTaxRate: '0.2',
      },
    ])
    expect(totalOf(split.contributions)).toBe('12.4')
  })

  it('uses only the chosen partners, in quote order, ignoring duplicates', () => {
    const split = splitAllocation(ukAugust2024, {
      contribution: { amount: '5.00', impactPartnerIds: ['contrib-c', 'contrib-a', 'contrib-c'] },
    })
    expect(split.contributions.map((e) => e.impactPartnerId)).toEqual(['contrib-a', 'contrib-c'])
    expect(totalOf(split.contributions)).toBe('5')
  })

  it('treats an empty list as all the quote partners', () => {
    const split = splitAllocation(ukAugust2024, { contribution: { amount: '5.00', impactPartnerIds: [] } })
    expect(split.contributions).toHaveLength(3)
  })

  it('rejects a partner that is not in the quote with the spec message and the index in the path', () => {
    let error: unknown
    try {
      splitAllocation(ukAugust2024, { contribution: { amount: '5.00', impactPartnerIds: ['contrib-a', 'credits-partner'] } })
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(DomainError)
    expect(error).toMatchObject({
      code: 'IMPACT_PARTNER_NOT_FOUND',
      message: 'impact partner not found in quote',
      path: '/contribution/impactPartnerIds/1',
    })
  })

  it('refuses a contribution when the quote has no contribution partners', () => {
    const quote = priceQuote(quoteInput(), { ...referenceData([project({ id: 'p' })]), partners: [partner({ id: 'credits-partner' })] })
    expect(() => splitAllocation(quote, { contribution: { amount: '1.00' } })).toThrow(
      expect.objectContaining({ code: 'NO_CONTRIBUTION_PARTNERS' }),
    )
  })

  it('handles credits and contribution together', () => {
    const split = splitAllocation(threeProjects, { credits: { amount: '0.01' }, contribution: { amount: '0.01' } })
    // 1p of credits: all impact, to the first project; 1p of contribution: impact, to the first partner
    expect(split.credits.map((e) => e.impactAmount)).toEqual(['0.01', '0.00', '0.00'])
    expect(split.contributions.map((e) => e.impactAmount)).toEqual(['0.01', '0.00'])
  })
})

describe('reverseAllocation', () => {
  it('negates amounts and quantities, keeps rates, and never writes -0', () => {
    const original = splitAllocation(ukAugust2024, { credits: { amount: '12.40' }, contribution: { amount: '1.24' } })
    const reversal = reverseAllocation(original)
    expect(reversal.credits[0]).toEqual({
      projectId: 'p-one',
      impactPartnerId: 'credits-partner',
      impactAmount: '-10.00',
      impactSalesTaxAmount: '0.00',
      impactSalesTaxRate: '0',
      serviceFeeAmount: '-2.00',
      serviceFeeSalesTaxAmount: '-0.40',
      serviceFeeSalesTaxRate: '0.2',
      quantityTonnes: '-0.500000',
    })
    expect(JSON.stringify(reversal)).not.toMatch(/"-0(\.0+)?"/)
    expect(reverseAllocation(reversal)).toEqual(original)
  })
})

const allEntries = (split: AllocationSplit): AllocationEntryAmounts[] => [...split.credits, ...split.contributions]

/** A random quote with its credits section, plus random amounts paid in its currency (minor units). */
const quoteAndPayments = fc
  .tuple(
    arbitraryQuoteInput,
    arbitraryProjects,
    fc.bigInt({ min: 1n, max: 10n ** 10n }),
    fc.bigInt({ min: 1n, max: 10n ** 10n }),
    fc.subarray(['contrib-a', 'contrib-b']),
  )
  .map(([input, projects, creditsMinor, contributionMinor, partnerIds]) => {
    const quote = priceQuote(input, referenceData(projects))
    const digits = minorUnitsOf(quote.currencyCode)
    const major = (minor: bigint): string => new Decimal(minor.toString()).div(new Decimal(10).pow(digits)).toFixed(digits)
    return { quote, credits: major(creditsMinor), contribution: major(contributionMinor), partnerIds }
  })

/** 10,000 runs take a few seconds alone, and can pass 30 s on a machine busy with the rest of the suite. */
const PROPERTY_TIMEOUT_MS = 120_000

describe('splitAllocation: properties', () => {
  it(
    "property: allocating exactly a quote's total reproduces its amounts",
    () => {
      fc.assert(
        fc.property(arbitraryQuoteInput, arbitraryProjects, (input, projects) => {
          const quote = priceQuote(input, referenceData(projects))
          const credits = creditsOf(quote)
          const split = splitAllocation(quote, { credits: { amount: credits.amounts.total } })
          expect(column(split.credits, 'impactAmount')).toBe(new Decimal(credits.amounts.impact).toString())
          expect(column(split.credits, 'impactSalesTaxAmount')).toBe(new Decimal(credits.amounts.impactTax).toString())
          expect(column(split.credits, 'serviceFeeAmount')).toBe(new Decimal(credits.amounts.serviceFee).toString())
          expect(column(split.credits, 'serviceFeeSalesTaxAmount')).toBe(new Decimal(credits.amounts.serviceFeeTax).toString())
        }),
        { numRuns: 10_000 },
      )
    },
    PROPERTY_TIMEOUT_MS,
  )

  it(
    'property: entries sum to the amounts paid exactly (JPY, GBP, KWD, …), each formatted to the minor units',
    () => {
      fc.assert(
        fc.property(quoteAndPayments, ({ quote, credits, contribution, partnerIds }) => {
          const split = splitAllocation(quote, {
            credits: { amount: credits },
            contribution: { amount: contribution, impactPartnerIds: partnerIds },
          })
          expect(totalOf(split.credits)).toBe(new Decimal(credits).toString())
          expect(totalOf(split.contributions)).toBe(new Decimal(contribution).toString())
          expect(split.credits).toHaveLength(creditsOf(quote).projects.length)
          expect(split.contributions).toHaveLength(partnerIds.length === 0 ? 2 : partnerIds.length)
          const pattern = quote.minorUnits === 0 ? /^\d+$/ : new RegExp(`^\\d+\\.\\d{${quote.minorUnits}}$`)
          for (const entry of allEntries(split)) for (const key of AMOUNT_KEYS) expect(entry[key]).toMatch(pattern)
        }),
        { numRuns: 10_000 },
      )
    },
    PROPERTY_TIMEOUT_MS,
  )

  it(
    'property: a reversal sums to minus the original, entry by entry, with no -0',
    () => {
      fc.assert(
        fc.property(quoteAndPayments, ({ quote, credits, contribution }) => {
          const original = splitAllocation(quote, { credits: { amount: credits }, contribution: { amount: contribution } })
          const reversal = reverseAllocation(original)
          expect(new Decimal(totalOf(allEntries(reversal))).equals(new Decimal(totalOf(allEntries(original))).neg())).toBe(true)
          allEntries(reversal).forEach((entry, i) => {
            const before = allEntries(original)[i]
            expect(before).toBeDefined()
            if (before === undefined) return
            expect(entryTotal(entry).equals(entryTotal(before).neg())).toBe(true)
            expect(entry.impactSalesTaxRate).toBe(before.impactSalesTaxRate)
            expect(entry.serviceFeeSalesTaxRate).toBe(before.serviceFeeSalesTaxRate)
            for (const key of AMOUNT_KEYS) expect(entry[key]).not.toMatch(/^-0(\.0+)?$/)
          })
        }),
        { numRuns: 10_000 },
      )
    },
    PROPERTY_TIMEOUT_MS,
  )
})

/** A split's JSON (its bytes, key order included), or the error it threw: code, message and path, or its text. */
function outcomeOf(split: () => AllocationSplit): string {
  try {
    return JSON.stringify(split())
  } catch (error) {
    return error instanceof DomainError ? `${error.code} ${error.message} ${error.path}` : String(error)
  }
}

/** Amounts as requests write them (String of a JSON number), and texts no request sends but the function accepts. */
const amountText = fc.oneof(
  fc.tuple(fc.bigInt({ min: 0n, max: 10n ** 12n }), fc.integer({ min: 0, max: 5 })).map(([units, scale]) => {
    const text = units.toString().padStart(scale + 1, '0')
    return scale === 0 ? text : `${text.slice(0, -scale)}.${text.slice(-scale)}`
  }),
  fc.double({ min: 0, max: 1e7, noNaN: true }).map(String),
  fc.constantFrom('0', '0.000', '-1', '-0', '1e2', '1E-2', '5e-7', ' 12.50 ', '.5', '5.', '+3', '00012.10', 'abc', 'Infinity', '1e21'),
)

/** Unit prices: plain decimals of any scale (0 included), other texts Decimal reads, and figures too long for bigints to be proven. */
const unitPriceText = fc.oneof(
  fc.tuple(fc.bigInt({ min: 0n, max: 10n ** 12n }), fc.integer({ min: 0, max: 12 })).map(([units, scale]) => {
    const text = units.toString().padStart(scale + 1, '0')
    return scale === 0 ? text : `${text.slice(0, -scale)}.${text.slice(-scale)}`
  }),
  // Halves, quarters, …: quotients that land exactly on a rounding tie at the 7th decimal.
  fc.integer({ min: 0, max: 20 }).map((k) => new Decimal(2).pow(k).toString()),
  fc.integer({ min: 1, max: 20 }).map((k) => new Decimal(1).div(new Decimal(2).pow(k)).toString()),
  fc.constantFrom('0.000', '1e-3', '2.5E1', '00.50', '3', `1${'0'.repeat(45)}`, `0.${'0'.repeat(40)}7`, `7.${'3'.repeat(48)}`),
)

describe('splitAllocation: the same bytes as before its section plans (split-allocation-before-plans.ts)', () => {
  it(
    'property: every split and every refusal, for any amounts and unit prices, twice (the second from the cached plans)',
    () => {
      fc.assert(
        fc.property(
          quoteAndPayments,
          fc.array(unitPriceText, { minLength: 4, maxLength: 4 }),
          fc.option(amountText, { nil: undefined }),
          fc.option(amountText, { nil: undefined }),
          ({ quote, credits, contribution, partnerIds }, prices, creditsText, contributionText) => {
            const section = creditsOf(quote)
            const priced: LockedQuote = {
              ...quote,
              credits: { ...section, projects: section.projects.map((p, i) => ({ ...p, unitPrice: prices[i] ?? p.unitPrice })) },
            }
            const request = {
              credits: { amount: creditsText ?? credits },
              contribution: { amount: contributionText ?? contribution, impactPartnerIds: partnerIds },
            }
            const before = outcomeOf(() => splitAllocationBeforePlans(priced, request))
            expect(outcomeOf(() => splitAllocation(priced, request))).toBe(before)
            expect(outcomeOf(() => splitAllocation(priced, request))).toBe(before)
            const creditsOnly = { credits: request.credits }
            expect(outcomeOf(() => splitAllocation(priced, creditsOnly))).toBe(
              outcomeOf(() => splitAllocationBeforePlans(priced, creditsOnly)),
            )
          },
        ),
        { numRuns: 10_000 },
      )
    },
    PROPERTY_TIMEOUT_MS,
  )

  it.each([
    ['12.40', 'p-one at 20.00 a tonne: 0.500000'],
    ['0.01', 'the smallest amount'],
    ['-1', 'a negative amount (refused)'],
    ['0.00', 'zero (refused)'],
    ['12.401', 'too many decimals (refused)'],
    ['1e1', 'an exponent (read by Decimal)'],
  ])('credits %s: %s', (amount) => {
    const request = { credits: { amount }, contribution: { amount: '1.00' } }
    expect(outcomeOf(() => splitAllocation(ukAugust2024, request))).toBe(outcomeOf(() => splitAllocationBeforePlans(ukAugust2024, request)))
  })
})
