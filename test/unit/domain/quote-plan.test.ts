// Quote plans (src/domain/pricing.ts, planQuote): a quote priced from a plan made for another amount of the same
// context is the quote priced afresh, and the context's JSON holds every field the plan reads.
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { planQuote, priceQuote, quoteContextOf, type QuoteContext, type QuotePlan } from '../../../src/domain/pricing.js'
import { arbitraryProjects, arbitraryQuoteInput } from './arbitraries.js'
import { project, quoteInput, referenceData } from './fixtures.js'

describe('quote plans', () => {
  it('property: a quote priced from the plan of another amount of its context is the quote priced afresh (every byte)', () => {
    fc.assert(
      fc.property(
        arbitraryQuoteInput,
        arbitraryQuoteInput,
        arbitraryProjects,
        fc.constantFrom('carbon', 'nature'),
        fc.constantFrom(undefined, 'en-US', 'de-DE', 'fr', 'sv-SE'),
        (input, other, projects, impactType, locale) => {
          const first = { ...input, impactType, locale }
          const reference = referenceData(projects)
          const plan = planQuote(quoteContextOf(first), reference)
          // The same context with another amount (of the other input, rescaled to this currency's digits by pricing it).
          const second = { ...first, amount: other.currencyCode === first.currencyCode ? other.amount : first.amount }
          for (const priced of [first, second]) {
            const reused = priceQuote(priced, reference, () => plan)
            expect(JSON.stringify(reused)).toBe(JSON.stringify(priceQuote(priced, reference)))
          }
        },
      ),
      { numRuns: 300 },
    )
  })

  it('the context keeps every field pricing reads and nothing else: a change to any of them changes its JSON', () => {
    const input = quoteInput({ consumer: { countryCode: 'USA', state: 'CA', city: 'Fresno', postalCode: '93650' }, locale: 'en-US' })
    const key = (changed: Partial<QuoteContext>) => JSON.stringify(quoteContextOf({ ...input, ...changed }))
    const base = key({})
    expect(key({ amount: '1.00' } as Partial<QuoteContext>)).toBe(base)
    expect(key({ consumer: { countryCode: 'USA', state: 'CA' } })).toBe(base)
    for (const changed of [
      { impactType: 'nature' },
      { currencyCode: 'USD' },
      { mcc: '5812' },
      { merchant: { countryCode: 'USA' } },
      { merchant: { countryCode: 'GBR', state: 'ENG' } },
      { consumer: { countryCode: 'USA', state: 'NY' } },
      { consumer: { countryCode: 'CAN', state: 'CA' } },
      { locale: 'de-DE' },
      { locale: undefined },
      { matchConsumerLocation: !input.matchConsumerLocation },
      { serviceFeeRate: '0.25' },
      { date: '2026-11-24' },
    ] satisfies Partial<QuoteContext>[]) {
      expect(key(changed), JSON.stringify(changed)).not.toBe(base)
    }
  })

  it('checks the context and the amount before asking for a plan, so errors come in the same order either way', () => {
    const noPlan = (): QuotePlan => {
      throw new Error('no plan should be asked for')
    }
    const reference = referenceData([project({ id: 'p' })])
    expect(() => priceQuote(quoteInput({ amount: '1.234' }), reference, noPlan)).toThrow(
      expect.objectContaining({ code: 'AMOUNT_PRECISION' }),
    )
    expect(() => priceQuote(quoteInput({ currencyCode: 'XXX' }), reference, noPlan)).toThrow(
      expect.objectContaining({ code: 'UNSUPPORTED_CURRENCY' }),
    )
    // A state that decides the tax but is unknown, with a bad amount: the amount's error, as before plans.
    const both = quoteInput({ amount: '1.234', consumer: { countryCode: 'USA', state: 'ZZ' } })
    expect(() => priceQuote(both, reference)).toThrow(expect.objectContaining({ code: 'AMOUNT_PRECISION' }))
    expect(() => priceQuote({ ...both, amount: '1.23' }, reference)).toThrow(expect.objectContaining({ code: 'UNKNOWN_SUBDIVISION' }))
  })
})
