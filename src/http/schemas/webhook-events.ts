// Wire schemas of the webhook events Canopy sends (docs/webhooks.md), for the OpenAPI document's `webhooks`
// section: what a receiver gets, so that typed clients can derive their event types from the contract too.
import { Type, type TSchema } from '@sinclair/typebox'
import { EKKO_EVENT_TYPES, TEST_EVENT_TYPE, type EventType } from '../../domain/webhooks.js'
import { UuidSchema } from './common.js'
import { ImpactRecordSchema } from './reconciliation.js'

const Timestamp = Type.String({ format: 'date-time' })

const envelope = <T extends string>(type: T, data: TSchema, title: string) =>
  Type.Object(
    {
      id: { ...UuidSchema, description: 'The event id: also the webhook-id header, the same on every retry' },
      type: Type.Literal(type),
      timestamp: { ...Timestamp, description: 'When the allocation or reversal was recorded (a test event: when it was asked for)' },
      organisationId: { ...UuidSchema, description: "The allocation's organisation (a test event: the endpoint's)" },
      data,
    },
    { title },
  )

export const AllocationCreatedEventSchema = envelope('allocation.created', ImpactRecordSchema, 'AllocationCreatedEvent')
export const AllocationReversedEventSchema = envelope('allocation.reversed', ImpactRecordSchema, 'AllocationReversedEvent')
export const WebhookTestEventBodySchema = envelope(
  TEST_EVENT_TYPE,
  Type.Object({ webhookEndpointId: UuidSchema, message: Type.String() }),
  'WebhookEndpointTestEvent',
)

const ekkoBody = (eventType: string, title: string) =>
  Type.Object(
    {
      footprintId: { ...UuidSchema, description: 'The quote id' },
      organisationId: UuidSchema,
      brandId: Type.Null(),
      productId: Type.Null(),
      customerId: Type.Union([Type.String(), Type.Null()], { description: "The quote's consumer.reference" }),
      eventType: Type.Literal(eventType),
      timestamp: Timestamp,
      payment: Type.Object({ amount: Type.Number(), currencyCode: Type.String(), serviceFee: Type.Number() }),
      carbon: Type.Object({ unit: Type.Literal('grams'), quote: Type.Number(), compensated: Type.Number() }),
    },
    { title },
  )

export const EkkoImpactPaymentSchema = ekkoBody(EKKO_EVENT_TYPES['allocation.created'], 'EkkoImpactPayment')
export const EkkoImpactPaymentReversalSchema = ekkoBody(EKKO_EVENT_TYPES['allocation.reversed'], 'EkkoImpactPaymentReversal')

const header = (name: string, description: string, required = true) => ({
  name,
  in: 'header',
  required,
  description,
  schema: { type: 'string' },
})

const STANDARD_HEADERS = [
  header('webhook-id', 'The event id, the same on every retry: drop duplicates by it'),
  header('webhook-timestamp', 'Unix seconds when this attempt was signed'),
  header('webhook-signature', '`v1,<base64 HMAC-SHA256 of "id.timestamp.body">` per active secret, space-separated'),
]

const operation = (summary: string, body: TSchema, ekko = false) => ({
  post: {
    summary,
    parameters: ekko
      ? [
          ...STANDARD_HEADERS,
          header('signature', "ekko's header: hex HMAC-SHA256 of the body keyed with the organisationId (not a secret)"),
        ]
      : STANDARD_HEADERS,
    requestBody: { required: true, content: { 'application/json': { schema: body } } },
    responses: { '2XX': { description: 'Received; anything else is retried (410 disables the endpoint)' } },
  },
})

/** The OpenAPI `webhooks` section: standard bodies under their event types, ekko bodies under ekko's names. */
export const webhookDocs = (): Record<string, unknown> => {
  const standard: Record<EventType | typeof TEST_EVENT_TYPE, unknown> = {
    'allocation.created': operation('An allocation was recorded (format: standard)', AllocationCreatedEventSchema),
    'allocation.reversed': operation('An allocation was reversed (format: standard)', AllocationReversedEventSchema),
    [TEST_EVENT_TYPE]: operation('POST /v3/webhook-endpoints/:id/test (to that endpoint only)', WebhookTestEventBodySchema),
  }
  return {
    ...standard,
    [EKKO_EVENT_TYPES['allocation.created']]: operation('An allocation was recorded (format: ekko)', EkkoImpactPaymentSchema, true),
    [EKKO_EVENT_TYPES['allocation.reversed']]: operation(
      'An allocation was reversed (format: ekko)',
      EkkoImpactPaymentReversalSchema,
      true,
    ),
  }
}
