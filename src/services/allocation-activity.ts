// The Hub's record detail and dashboard: an allocation's records (its own and its reversal's), the webhook deliveries
// of its events that the caller may see, and the localised equivalents of a number of tonnes (the quote's, for a
// dashboard's headline figure).
import { Decimal } from 'decimal.js'
import { findDeliveriesOfAllocation, findReversalOf, type AllocationDeliveryRow } from '../db/repositories/allocation-activity.js'
import { findImpactRecordById } from '../db/repositories/impact-records.js'
import { describeEquivalents, resolveLocale } from '../domain/equivalents.js'
import type { ImpactRecord } from '../domain/impact-record.js'
import type { Equivalent } from '../domain/types.js'
import { notFound } from '../errors.js'
import type { Principal } from './access.js'
import { findRecord, impactRecordOf, type ReconciliationDeps } from './reconciliation.js'

const GRAMS_PER_TONNE = 1_000_000
const GRAMS_PER_OUNCE = '28.349523125'

/** The allocation of a record id (its own or its reversal's) and, when reversed, its reversal; not found otherwise. */
export async function recordsOfAllocation(deps: ReconciliationDeps, principal: Principal, id: string): Promise<ImpactRecord[]> {
  const found = await findRecord(deps, principal, id)
  if (!found) throw notFound('funds allocation')
  const allocationId = found.source.allocation.id
  const allocation = found.reversal ? await findImpactRecordById(deps.db, allocationId) : found
  const reversalId = (found.reversal ?? (await findReversalOf(deps.db, allocationId)))?.id
  const reversal = found.reversal ? found : reversalId === undefined ? undefined : await findImpactRecordById(deps.db, reversalId)
  if (!allocation) throw notFound('funds allocation')
  return [allocation, ...(reversal ? [reversal] : [])].map(impactRecordOf)
}

export type AllocationDelivery = Omit<AllocationDeliveryRow, 'endpointOrganisationId'>

/**
 * The webhook deliveries of an allocation's events (created, and reversed if it was), to the endpoints of the
 * caller's tree: an endpoint of an ancestor the caller cannot see is left out, as its other reads are.
 */
export async function deliveriesOfAllocation(deps: ReconciliationDeps, principal: Principal, id: string): Promise<AllocationDelivery[]> {
  const found = await findRecord(deps, principal, id)
  if (!found) throw notFound('funds allocation')
  const { allocation } = found.source
  const reversal = found.reversal ?? (await findReversalOf(deps.db, allocation.id))
  const rows = await findDeliveriesOfAllocation(deps.db, { id: allocation.id, reversalId: reversal?.id ?? null })
  const visible = new Map<string, boolean>()
  for (const organisationId of new Set(rows.map((r) => r.endpointOrganisationId))) {
    visible.set(organisationId, await deps.access.canSee(principal, organisationId))
  }
  return rows.filter((r) => visible.get(r.endpointOrganisationId)).map(({ endpointOrganisationId: _, ...delivery }) => delivery)
}

/** The quote's carbon equivalents of `tonnes` CO₂e (a decimal string, validated by the route), in `locale`. */
export function equivalentsOfTonnes(tonnes: string, locale: string | undefined): { locale: string; equivalents: Equivalent[] } {
  const grams = new Decimal(tonnes).times(GRAMS_PER_TONNE)
  const resolved = resolveLocale(locale)
  const footprint = { kind: 'carbon' as const, co2eGrams: grams.toString(), co2eOunces: grams.div(GRAMS_PER_OUNCE).toString() }
  return { locale: resolved, equivalents: describeEquivalents(footprint, resolved) }
}
