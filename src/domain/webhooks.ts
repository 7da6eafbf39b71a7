// Webhook rules that need no I/O: event types, the retry schedule, Retry-After and the bodies sent. Time and
// randomness are parameters (docs/webhooks.md explains the policy).

export const EVENT_TYPES = ['allocation.created', 'allocation.reversed'] as const
export type EventType = (typeof EVENT_TYPES)[number]
/** Sent by POST /v3/webhook-endpoints/:id/test only; an endpoint cannot subscribe to it. */
export const TEST_EVENT_TYPE = 'webhook_endpoint.test'

/** ekko's names for the same events (reference: docs/webhooks.md, "ekko format"). */
export const EKKO_EVENT_TYPES: Record<EventType, string> = {
  'allocation.created': 'IMPACT_PAYMENT',
  'allocation.reversed': 'IMPACT_PAYMENT_REVERSAL',
}

export const WEBHOOK_FORMATS = ['standard', 'ekko'] as const
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number]

/** The Standard Webhooks schedule: delays between attempts (10 attempts over about 3 days). */
export const DEFAULT_RETRY_SCHEDULE = '5s,5m,30m,2h,5h,10h,14h,20h,24h'

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const
const DELAY = /^(\d{1,9})(ms|s|m|h|d)$/

/** "5s,5m,30m" → delays in ms; undefined when any part is not <number><ms|s|m|h|d>, or there are more than 50. */
export function parseRetrySchedule(text: string): number[] | undefined {
  const parts = text.split(',').map((p) => p.trim())
  if (parts.length === 0 || parts.length > 50) return undefined
  const delays: number[] = []
  for (const part of parts) {
    const match = DELAY.exec(part)
    if (!match) return undefined
    delays.push(Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS])
  }
  return delays
}

export const JITTER = 0.2
/** A Retry-After longer than this is cut to it: a receiver cannot park deliveries for days. */
export const RETRY_AFTER_MAX_MS = 3_600_000

/**
 * Seconds or an HTTP date → milliseconds from `now`; undefined when absent or unparsable. (A date in the past
 * is 0.)
 */
export function parseRetryAfter(value: string | undefined, now: Date): number | undefined {
  if (value === undefined) return undefined
  const trimmed = value.trim()
  if (/^\d{1,10}$/.test(trimmed)) return Number(trimmed) * 1000
  const at = Date.parse(trimmed)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now.getTime())
}

/**
 * When to try again after the `attempts`-th failed attempt (1 = the first): the schedule's delay ±20%
 * (`random` in [0, 1)), lengthened by a Retry-After up to RETRY_AFTER_MAX_MS, never shortened by it.
 * Undefined when the schedule is exhausted.
 */
export function retryDelayMs(options: {
  attempts: number
  schedule: readonly number[]
  random: number
  retryAfterMs?: number | undefined
}): number | undefined {
  const base = options.schedule[options.attempts - 1]
  if (base === undefined) return undefined
  const jittered = Math.round(base * (1 - JITTER + 2 * JITTER * options.random))
  const asked = options.retryAfterMs === undefined ? 0 : Math.min(options.retryAfterMs, RETRY_AFTER_MAX_MS)
  return Math.max(jittered, asked)
}

export type AttemptOutcome =
  | { kind: 'succeeded' }
  /** 410 Gone: the receiver asks us to stop; the endpoint is disabled. */
  | { kind: 'gone' }
  | { kind: 'failed' }

export const outcomeOfStatus = (statusCode: number | undefined): AttemptOutcome =>
  statusCode !== undefined && statusCode >= 200 && statusCode < 300
    ? { kind: 'succeeded' }
    : statusCode === 410
      ? { kind: 'gone' }
      : { kind: 'failed' }

/** An endpoint that has only failed for this long is disabled (Svix's figure). */
export const DISABLE_AFTER_FAILING_MS = 5 * 86_400_000

export interface EventEnvelope<Data> {
  id: string
  type: string
  timestamp: Date
  organisationId: string
  data: Data
}

/** The standard body, serialised once: these exact bytes are stored, signed and sent. */
export const standardEventBody = <Data>(event: EventEnvelope<Data>): string =>
  JSON.stringify({
    id: event.id,
    type: event.type,
    timestamp: event.timestamp.toISOString(),
    organisationId: event.organisationId,
    data: event.data,
  })

/** What ekko's IMPACT_PAYMENT / IMPACT_PAYMENT_REVERSAL bodies carry; amounts are numbers in currency units. */
export interface EkkoEventFields {
  eventType: EventType
  organisationId: string
  timestamp: Date
  footprintId: string
  customerId: string | null
  payment: { amount: number; currencyCode: string; serviceFee: number }
  carbon: { quote: number; compensated: number }
}

/** ekko's body, in ekko's field order; brandId and productId are legacy ekko concepts Canopy does not have. */
export const ekkoEventBody = (fields: EkkoEventFields): string =>
  JSON.stringify({
    footprintId: fields.footprintId,
    organisationId: fields.organisationId,
    brandId: null,
    productId: null,
    customerId: fields.customerId,
    eventType: EKKO_EVENT_TYPES[fields.eventType],
    timestamp: fields.timestamp.toISOString(),
    payment: fields.payment,
    carbon: { unit: 'grams', quote: fields.carbon.quote, compensated: fields.carbon.compensated },
  })
