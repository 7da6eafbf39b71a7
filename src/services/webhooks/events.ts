// The events of allocations and reversals: a small row written by the same statement as their allocation or reversal
// (only when an endpoint subscribes), and a body rendered from the record at the first claim of each delivery, stored
// with it and sent byte for byte on every attempt (docs/webhooks.md).
import { Decimal } from '../../domain/money.js'
import type { Kysely } from 'kysely'
import type { Database } from '../../db/database.js'
import { findImpactRecordsByIds } from '../../db/repositories/impact-records.js'
import { storeDeliveryBodies, type ClaimedDelivery, type RecordEventDraft } from '../../db/repositories/webhooks.js'
import type { ImpactAmounts, ImpactLineAmounts, ImpactRecord } from '../../domain/impact-record.js'
import type { Footprint } from '../../domain/types.js'
import { ekkoEventBody, EVENT_TYPES, standardEventBody, type EventType, type WebhookFormat } from '../../domain/webhooks.js'
import { impactRecordOf } from '../reconciliation.js'

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

// Written out rather than spread from `amounts`: a page converts hundreds of lines, and the spread cost a copy each.
const lineAmounts = (a: ImpactLineAmounts) => ({
  total: Number(a.total),
  impact: Number(a.impact),
  impactTax: Number(a.impactTax),
  serviceFee: Number(a.serviceFee),
  serviceFeeTax: Number(a.serviceFeeTax),
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

/**
 * The event of an allocation (`allocation.created`) or of its reversal (`allocation.reversed`), as written with it: a
 * small row naming the record. Its body is rendered from the record when its first delivery is claimed.
 */
export function recordEvent(options: {
  id: string
  type: EventType
  organisationId: string
  sourceId: string
  createdAt: Date
  footprint: Footprint
}): RecordEventDraft {
  const { footprint, ...event } = options
  return { ...event, quoteCo2eGrams: footprint.kind === 'carbon' ? footprint.co2eGrams : null }
}

/** Both bodies of a record's event, exactly as sent: the standard one and ekko's. */
export function impactEventBodies(options: {
  id: string
  type: EventType
  record: ImpactRecord
  /** The quote's footprint in grams CO2e (null: none). */
  quoteCo2eGrams: string | null
}): { standard: string; ekko: string } {
  const { id, type, record } = options
  const timestamp = new Date(record.fundsDateTime)
  const organisationId = record.fundsOrganisationId
  const standard = standardEventBody({ id, type, timestamp, organisationId, data: impactRecordData(record) })
  // Grams of CO2e bought as credits (negative in a reversal, like every amount of its record).
  const compensated = record.credits.reduce((sum, c) => sum.plus(c.quantityTonnes), new Decimal(0)).times(1_000_000)
  const ekko = ekkoEventBody({
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
      quote: options.quoteCo2eGrams === null ? 0 : Number(options.quoteCo2eGrams),
      compensated: Number(compensated.toDecimalPlaces(1)),
    },
  })
  return { standard, ekko }
}

const isRecordEventType = (type: string): type is EventType => (EVENT_TYPES as readonly string[]).includes(type)

/**
 * Claimed deliveries with their bodies: a record's event claimed for the first time (or for the first time since its
 * endpoint changed format) gets its body rendered from the record, in the endpoint's format, and stored on the
 * delivery (the first stored wins: a delivery claimed twice, its lease having expired, sends the same bytes). A
 * delivery whose record cannot be read keeps a null body.
 */
export async function withRenderedBodies(db: Kysely<Database>, claimed: ClaimedDelivery[]): Promise<ClaimedDelivery[]> {
  const toRender = claimed.flatMap((d) =>
    d.body === null && d.toRender !== null && isRecordEventType(d.eventType) ? [{ delivery: d, type: d.eventType, ...d.toRender }] : [],
  )
  if (toRender.length === 0) return claimed
  const stored = await findImpactRecordsByIds(db, [...new Set(toRender.map((r) => r.sourceId))])
  const records = new Map(stored.map((r) => [r.id, impactRecordOf(r)]))
  const rendered: { deliveryId: string; format: WebhookFormat; body: string }[] = []
  for (const { delivery, type, sourceId, quoteCo2eGrams } of toRender) {
    const record = records.get(sourceId)
    if (!record) continue
    const bodies = impactEventBodies({ id: delivery.eventId, type, record, quoteCo2eGrams })
    rendered.push({ deliveryId: delivery.id, format: delivery.format, body: delivery.format === 'ekko' ? bodies.ekko : bodies.standard })
  }
  const bodies = await storeDeliveryBodies(db, rendered)
  return claimed.map((d) => {
    const body = bodies.get(d.id)
    return body === undefined ? d : { ...d, body }
  })
}
