// Wire schemas of webhook endpoints, their deliveries and attempts.
import { Type, type Static } from '@sinclair/typebox'
import { EVENT_TYPES, WEBHOOK_FORMATS } from '../../domain/webhooks.js'
import { DEFAULT_GRACE_SECONDS, MAX_GRACE_SECONDS } from '../../services/webhooks/endpoints.js'
import { nullable, stringEnum, UuidSchema } from './common.js'

const Timestamp = Type.String({ format: 'date-time' })
const EventTypeSchema = stringEnum([...EVENT_TYPES, '*'] as const, 'An event type, or * for every type')
const FormatSchema = stringEnum(
  WEBHOOK_FORMATS,
  'standard: Standard Webhooks body and headers; ekko: ekko-compatible body and signature header as well',
)
const StatusSchema = stringEnum(['enabled', 'disabled'] as const, 'A disabled endpoint receives nothing')
const UrlSchema = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: 'https URL (http only with WEBHOOK_ALLOW_HTTP=true); no user info',
})
const EnabledEventsSchema = Type.Array(EventTypeSchema, { minItems: 1, maxItems: 10, description: 'Event types delivered, or ["*"]' })

export const WebhookEndpointSchema = Type.Object(
  {
    id: UuidSchema,
    organisationId: { ...UuidSchema, description: 'Receives the events of this organisation and of its descendants' },
    url: Type.String(),
    description: Type.String(),
    enabledEvents: Type.Array(Type.String()),
    format: FormatSchema,
    status: StatusSchema,
    disabledReason: nullable(Type.String()),
    failingSince: nullable({ ...Timestamp, description: 'Since when every attempt has failed (disabled after 5 days)' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'WebhookEndpoint' },
)
export type WebhookEndpointResponse = Static<typeof WebhookEndpointSchema>

export const CreatedWebhookEndpointSchema = Type.Object(
  { ...WebhookEndpointSchema.properties, secret: Type.String({ description: 'The signing secret (whsec_…): shown once' }) },
  { title: 'CreatedWebhookEndpoint' },
)

export const RotatedSecretSchema = Type.Object(
  {
    ...WebhookEndpointSchema.properties,
    secret: Type.String({ description: 'The new signing secret (whsec_…): shown once' }),
    previousSecretExpiresAt: { ...Timestamp, description: 'Until then both secrets sign every delivery' },
  },
  { title: 'RotatedWebhookSecret' },
)

export const WebhookEndpointListSchema = Type.Object({ data: Type.Array(WebhookEndpointSchema) }, { title: 'WebhookEndpointList' })

export const CreateWebhookEndpointBodySchema = Type.Object(
  {
    organisationId: { ...UuidSchema, description: "The caller's organisation or a descendant" },
    url: UrlSchema,
    enabledEvents: Type.Optional({ ...EnabledEventsSchema, default: ['*'] }),
    format: Type.Optional({ ...FormatSchema, default: 'standard' }),
    description: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false },
)

export const UpdateWebhookEndpointBodySchema = Type.Object(
  {
    url: Type.Optional(UrlSchema),
    enabledEvents: Type.Optional(EnabledEventsSchema),
    format: Type.Optional(FormatSchema),
    description: Type.Optional(Type.String({ maxLength: 500 })),
    status: Type.Optional({ ...StatusSchema, description: 'enabled (clears the failing streak) or disabled' }),
  },
  { additionalProperties: false, minProperties: 1 },
)

export const ListWebhookEndpointsQuerySchema = Type.Object(
  { organisationId: Type.Optional({ ...UuidSchema, description: 'One organisation of the tree (default: the whole tree)' }) },
  { additionalProperties: false },
)

export const RotateSecretBodySchema = Type.Object(
  {
    gracePeriodSeconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_GRACE_SECONDS,
        default: DEFAULT_GRACE_SECONDS,
        description: `How long the previous secret keeps signing: 0 to ${MAX_GRACE_SECONDS} (7 days); default ${DEFAULT_GRACE_SECONDS} (24 h)`,
      }),
    ),
  },
  { additionalProperties: false },
)

export const RecoverBodySchema = Type.Object(
  { since: { ...Timestamp, description: 'Redeliver every failed delivery created at or after this instant' } },
  { additionalProperties: false },
)

export const WebhookAttemptSchema = Type.Object(
  {
    id: UuidSchema,
    attemptedAt: Timestamp,
    durationMs: Type.Integer(),
    statusCode: nullable(Type.Integer()),
    error: nullable(Type.String()),
    responseBody: nullable(Type.String({ description: 'At most 4 KiB of the answer' })),
  },
  { title: 'WebhookAttempt' },
)

export const WebhookDeliverySchema = Type.Object(
  {
    id: UuidSchema,
    eventId: { ...UuidSchema, description: 'The webhook-id header of every attempt' },
    eventType: Type.String(),
    endpointId: UuidSchema,
    status: stringEnum(['pending', 'succeeded', 'failed'] as const, 'pending until a 2xx or until retries run out'),
    attemptCount: Type.Integer(),
    nextAttemptAt: nullable(Timestamp),
    lastAttemptAt: nullable(Timestamp),
    createdAt: Timestamp,
    attempts: Type.Array(WebhookAttemptSchema),
  },
  { title: 'WebhookDelivery' },
)
export type WebhookDeliveryResponse = Static<typeof WebhookDeliverySchema>

export const WebhookDeliveryListSchema = Type.Object(
  { hasMore: Type.Boolean(), data: Type.Array(WebhookDeliverySchema) },
  { title: 'WebhookDeliveryList' },
)

export const ListDeliveriesQuerySchema = Type.Object(
  {
    status: Type.Optional(stringEnum(['pending', 'succeeded', 'failed'] as const, 'Only deliveries in this state')),
    // Query strings are not coerced (one validator for bodies and queries): the limit is checked as digits.
    limit: Type.Optional(
      Type.String({
        pattern: '^(100|[1-9][0-9]?)$',
        errorMessage: { pattern: 'must be a whole number from 1 to 100' },
        description: 'Deliveries per page, 1–100 (default 20)',
      }),
    ),
    startingAfter: Type.Optional({ ...UuidSchema, description: 'A delivery id: the page after it (newest first)' }),
  },
  { additionalProperties: false },
)

export const DeliveryParamsSchema = Type.Object({ deliveryId: UuidSchema }, { additionalProperties: false })

export const TestEventSchema = Type.Object({ eventId: UuidSchema, deliveryId: UuidSchema }, { title: 'WebhookTestEvent' })
export const RecoveredSchema = Type.Object({ recovered: Type.Integer() }, { title: 'WebhookRecovery' })
