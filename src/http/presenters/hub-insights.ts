// The Hub's own reads → wire (src/routes/hub/insights.ts).
import type { AllocationDelivery } from '../../services/allocation-activity.js'
import type { AllocationDeliveriesResponse } from '../schemas/hub-insights.js'

export const presentAllocationDelivery = (d: AllocationDelivery): AllocationDeliveriesResponse['data'][number] => ({
  id: d.id,
  eventId: d.eventId,
  eventType: d.eventType,
  endpointId: d.endpointId,
  endpointUrl: d.endpointUrl,
  status: d.status,
  attempts: d.attempts,
  nextAttemptAt: d.status === 'pending' ? d.nextAttemptAt.toISOString() : null,
  lastAttemptAt: d.lastAttemptAt?.toISOString() ?? null,
  lastStatusCode: d.lastStatusCode,
  lastError: d.lastError,
  createdAt: d.createdAt.toISOString(),
})
