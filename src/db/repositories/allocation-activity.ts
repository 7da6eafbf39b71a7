// What happened around one allocation, for the Hub's record detail: its reversal, and the webhook deliveries
// of its events. An event names the record it announces (webhook_events.source_id, indexed): the allocation's id or
// its reversal's.
import type { Kysely } from 'kysely'
import type { Database } from '../database.js'

/** The reversal of an allocation, if it was reversed: its id and time. */
export async function findReversalOf(db: Kysely<Database>, allocationId: string): Promise<{ id: string; createdAt: Date } | undefined> {
  // The keys table is the one index by allocation (reversals are partitioned by their own time).
  const row = await db
    .selectFrom('allocation_reversal_keys')
    .select(['reversal_id', 'reversal_created_at'])
    .where('allocation_id', '=', allocationId)
    .executeTakeFirst()
  return row && { id: row.reversal_id, createdAt: row.reversal_created_at }
}

export interface AllocationDeliveryRow {
  id: string
  eventId: string
  eventType: string
  endpointId: string
  endpointOrganisationId: string
  endpointUrl: string
  status: 'pending' | 'succeeded' | 'failed'
  attempts: number
  nextAttemptAt: Date
  lastAttemptAt: Date | null
  lastStatusCode: number | null
  lastError: string | null
  createdAt: Date
}

/** The deliveries of the events of an allocation and of its reversal (when it has one). */
export async function findDeliveriesOfAllocation(
  db: Kysely<Database>,
  allocation: { id: string; reversalId: string | null },
): Promise<AllocationDeliveryRow[]> {
  const sources = allocation.reversalId ? [allocation.id, allocation.reversalId] : [allocation.id]
  const rows = await db
    .selectFrom('webhook_events as e')
    .innerJoin('webhook_deliveries as d', (join) => join.onRef('d.event_id', '=', 'e.id').onRef('d.created_at', '=', 'e.created_at'))
    .innerJoin('webhook_endpoints as ep', 'ep.id', 'd.endpoint_id')
    .select([
      'd.id',
      'e.id as event_id',
      'e.type',
      'ep.id as endpoint_id',
      'ep.organisation_id as endpoint_organisation_id',
      'ep.url',
      'd.status',
      'd.attempts',
      'd.next_attempt_at',
      'd.last_attempt_at',
      'd.created_at',
      (eb) =>
        eb
          .selectFrom('webhook_attempts as a')
          .select('a.status_code')
          .whereRef('a.delivery_id', '=', 'd.id')
          .orderBy('a.attempted_at', 'desc')
          .orderBy('a.id', 'desc')
          .limit(1)
          .as('last_status_code'),
      (eb) =>
        eb
          .selectFrom('webhook_attempts as a')
          .select('a.error')
          .whereRef('a.delivery_id', '=', 'd.id')
          .orderBy('a.attempted_at', 'desc')
          .orderBy('a.id', 'desc')
          .limit(1)
          .as('last_error'),
    ])
    .where('e.source_id', 'in', sources)
    .orderBy('d.created_at')
    .orderBy('e.type')
    .orderBy('d.id')
    .execute()
  return rows.map((r) => ({
    id: r.id,
    eventId: r.event_id,
    eventType: r.type,
    endpointId: r.endpoint_id,
    endpointOrganisationId: r.endpoint_organisation_id,
    endpointUrl: r.url,
    status: r.status as AllocationDeliveryRow['status'],
    attempts: r.attempts,
    nextAttemptAt: r.next_attempt_at,
    lastAttemptAt: r.last_attempt_at,
    lastStatusCode: r.last_status_code ?? null,
    lastError: r.last_error ?? null,
    createdAt: r.created_at,
  }))
}
