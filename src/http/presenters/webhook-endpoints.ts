// Webhook endpoints and deliveries → wire. A secret appears only in the answer that creates it.
import type { WebhookEndpoint } from '../../db/repositories/webhooks.js'
import type { DeliveryWithAttempts } from '../../services/webhooks/endpoints.js'
import type { WebhookDeliveryResponse, WebhookEndpointResponse } from '../schemas/webhook-endpoints.js'

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null)

export const presentWebhookEndpoint = (e: WebhookEndpoint): WebhookEndpointResponse => ({
  id: e.id,
  organisationId: e.organisationId,
  url: e.url,
  description: e.description,
  enabledEvents: e.enabledEvents,
  format: e.format,
  status: e.status,
  disabledReason: e.disabledReason,
  failingSince: iso(e.failingSince),
  createdAt: e.createdAt.toISOString(),
  updatedAt: e.updatedAt.toISOString(),
})

export const presentWebhookDelivery = (d: DeliveryWithAttempts): WebhookDeliveryResponse => ({
  id: d.id,
  eventId: d.eventId,
  eventType: d.eventType,
  endpointId: d.endpointId,
  status: d.status,
  attemptCount: d.attemptCount,
  nextAttemptAt: iso(d.nextAttemptAt),
  lastAttemptAt: iso(d.lastAttemptAt),
  createdAt: d.createdAt.toISOString(),
  attempts: d.attempts.map((a) => ({
    id: a.id,
    attemptedAt: a.attemptedAt.toISOString(),
    durationMs: a.durationMs,
    statusCode: a.statusCode,
    error: a.error,
    responseBody: a.responseBody,
  })),
})
