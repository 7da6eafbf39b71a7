// The service's plan cache (src/services/quote-plans.ts): a plan is reused for its organisation and context only with
// the very ReferenceData object it was made from; any other object (a reload of the catalogue, the rates or the
// organisation) gets a fresh plan.
import { describe, expect, it } from 'vitest'
import { quoteContextOf } from '../../src/domain/pricing.js'
import { QuotePlans } from '../../src/services/quote-plans.js'
import { project, quoteInput, referenceData } from './domain/fixtures.js'

const context = quoteContextOf(quoteInput())
const projects = [project({ id: 'p', price: '25.00' })]

describe('QuotePlans', () => {
  it('reuses a plan for the same organisation, context and ReferenceData object', () => {
    const plans = new QuotePlans(10)
    const reference = referenceData(projects)
    const plan = plans.planFor('org-1', reference, context)
    expect(plans.planFor('org-1', reference, { ...context })).toBe(plan)
  })

  it('plans afresh for another ReferenceData object, even an equal one, and then prices from it', () => {
    const plans = new QuotePlans(10)
    const before = plans.planFor('org-1', referenceData(projects), context)
    const equal = plans.planFor('org-1', referenceData(projects), context)
    expect(equal).not.toBe(before)
    expect(equal).toEqual(before)
    const repriced = plans.planFor('org-1', referenceData([project({ id: 'p', price: '50.00' })]), context)
    expect(repriced.credits?.section.unit.price).not.toBe(before.credits?.section.unit.price)
  })

  it('keeps plans apart by organisation and by context', () => {
    const plans = new QuotePlans(10)
    const reference = referenceData(projects)
    const plan = plans.planFor('org-1', reference, context)
    expect(plans.planFor('org-2', reference, context)).not.toBe(plan)
    const fee = plans.planFor('org-1', reference, { ...context, serviceFeeRate: '0' })
    expect(fee).not.toBe(plan)
    expect(fee.credits?.section.taxRates.serviceFee).toBe('0')
  })

  it('with room for none, plans every quote afresh', () => {
    const plans = new QuotePlans(0)
    const reference = referenceData(projects)
    expect(plans.planFor('org-1', reference, context)).not.toBe(plans.planFor('org-1', reference, context))
  })
})
