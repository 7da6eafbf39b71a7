// The events of allocations and reversals: built before the write (ids and times are known), stored by the same
// statement as their allocation or reversal, and sent byte for byte as built here (docs/webhooks.md).
import { Decimal } from '../../domain/money.js'
import type { WebhookEventDraft } from '../../db/repositories/webhooks.js'
import type { ImpactAmounts, ImpactLineAmounts, ImpactRecord } from '../../domain/impact-record.js'
import type { Footprint } from '../../domain/types.js'
import { ekkoEventBody, standardEventBody, type EventType } from '../../domain/webhooks.js'

/** Wakes this process's webhook worker once events are committed. */
export interface WebhookWake {
  wake(): void
}

export const noWebhookWake: WebhookWake = { wake: () => {} }

const amounts = (a: ImpactAmounts) => ({
  total: Number(a.total),
  impact: Number(a.impact),
  impactTax: Number(a.impactTax),
  serviceFee: Number(a.serviceFee),
  serviceFeeTax: Number(a.serviceFeeTax),
})

const lineAmounts = (a: ImpactLineAmounts) => ({
  ...amounts(a),
  impactTaxRate: Number(a.impactTaxRate),
  serviceFeeTaxRate: Number(a.serviceFeeTaxRate),
})

/** The record as GET /v3/funds/allocations/:id/impact shows it: amounts as JSON numbers at the currency's precision. */
export function impactRecordData(r: ImpactRecord): Record<string, unknown> {
  return {
    fundsAllocationId: r.fundsAllocationId,
    ...(r.reversalId !== undefined ? { reversalId: r.reversalId } : {}),
    quoteId: r.quoteId,
    fundsDateTime: r.fundsDateTime,
    consumerReference: r.consumerReference,
    fundsOrganisationId: r.fundsOrganisationId,
    fundsOrganisationReference: r.fundsOrganisationReference,
    collectionOrganisationId: r.collectionOrganisationId,
    fundsCurrencyCode: r.fundsCurrencyCode,
    reversal: r.reversal,
    taxLiability: r.taxLiability,
    amounts: amounts(r.amounts),
    merchant: r.merchant,
    credits: r.credits.map((c) => ({
      impactPartnerId: c.impactPartnerId,
      projectId: c.projectId,
      quantityTonnes: Number(c.quantityTonnes),
      amounts: lineAmounts(c.amounts),
    })),
    contributions: r.contributions.map((c) => ({ impactPartnerId: c.impactPartnerId, amounts: lineAmounts(c.amounts) })),
  }
}

/** The event of an allocation (`allocation.created`) or of its reversal (`allocation.reversed`), both bodies built. */
export function impactEvent(options: { id: string; type: EventType; record: ImpactRecord; footprint: Footprint }): WebhookEventDraft {
  const { id, type, record } = options
  const timestamp = new Date(record.fundsDateTime)
  const organisationId = record.fundsOrganisationId
  const body = standardEventBody({ id, type, timestamp, organisationId, data: impactRecordData(record) })
  // Grams of CO2e bought as credits (negative in a reversal, like every amount of its record).
  const compensated = record.credits.reduce((sum, c) => sum.plus(c.quantityTonnes), new Decimal(0)).times(1_000_000)
  const ekkoBody = ekkoEventBody({
    eventType: type,
    organisationId,
    timestamp,
    footprintId: record.quoteId,
    customerId: record.consumerReference,
    payment: {
      amount: Number(record.amounts.total),
      currencyCode: record.fundsCurrencyCode,
      serviceFee: Number(record.amounts.serviceFee),
    },
    carbon: {
      quote: options.footprint.kind === 'carbon' ? Number(options.footprint.co2eGrams) : 0,
      compensated: Number(compensated.toDecimalPlaces(1)),
    },
  })
  return { id, organisationId, type, body, ekkoBody, createdAt: timestamp }
}
