// Verifying the webhooks Canopy sends (the API's docs/webhooks.md): Standard Webhooks signatures over the raw body,
// and ekko's compatibility header. node:crypto only.
import { createHmac, timingSafeEqual } from 'node:crypto'
import { CanopyWebhookVerificationError } from './errors.js'
import type { EkkoWebhookEvent, WebhookEvent } from './types.js'

/** Node's req.headers, a fetch Headers, or any record of header names (any case) to values. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>

export interface VerifyOptions {
  /** How far webhook-timestamp may be from now, either way (seconds). Default 300 (Standard Webhooks). */
  toleranceSeconds?: number
  /** The current time in ms (tests). Default Date.now. */
  now?: () => number
}

const SECRET_PREFIX = 'whsec_'
const DEFAULT_TOLERANCE_SECONDS = 300

const fail = (code: CanopyWebhookVerificationError['code'], message: string): never => {
  throw new CanopyWebhookVerificationError(code, message)
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined
  for (const [key, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (key.toLowerCase() === name) return Array.isArray(value) ? value.join(' ') : value
  }
  return undefined
}

const bytesOf = (body: string | Uint8Array): Buffer => (typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body))

function secretKey(secret: string): Buffer {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64')
  if (key.length === 0) throw new TypeError('the webhook secret is empty: pass the whsec_… secret of the endpoint')
  return key
}

const sameBytes = (a: Buffer, b: Buffer): boolean => a.length === b.length && timingSafeEqual(a, b)

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'))
  } catch {
    return fail('WEBHOOK_BODY_INVALID', 'the webhook body is not JSON')
  }
}

/**
 * Checks the Standard Webhooks signature of a delivery and returns the parsed body. Throws
 * CanopyWebhookVerificationError when a header is missing, webhook-timestamp is more than the tolerance away from
 * now, or no `v1,` signature matches any of the secrets (pass the old and the new secret during a rotation).
 */
function verifySignature(
  rawBody: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string | readonly string[],
  options: VerifyOptions = {},
): unknown {
  const id = header(headers, 'webhook-id')
  const timestamp = header(headers, 'webhook-timestamp')
  const signatures = header(headers, 'webhook-signature')
  if (!id || !timestamp || !signatures) {
    return fail('WEBHOOK_HEADERS_MISSING', 'webhook-id, webhook-timestamp and webhook-signature headers are required')
  }
  if (!/^\d{1,12}$/.test(timestamp)) return fail('WEBHOOK_TIMESTAMP_OUT_OF_TOLERANCE', 'webhook-timestamp is not Unix seconds')
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS
  const nowSeconds = Math.floor((options.now ?? Date.now)() / 1000)
  if (Math.abs(nowSeconds - Number(timestamp)) > tolerance) {
    return fail('WEBHOOK_TIMESTAMP_OUT_OF_TOLERANCE', `webhook-timestamp is more than ${tolerance} s from now`)
  }
  const body = bytesOf(rawBody)
  const signed = Buffer.concat([Buffer.from(`${id}.${timestamp}.`, 'utf8'), body])
  const expected = (Array.isArray(secret) ? secret : [secret]).map((s: string) =>
    createHmac('sha256', secretKey(s)).update(signed).digest(),
  )
  const offered = signatures
    .split(' ')
    .filter((part) => part.startsWith('v1,'))
    .map((part) => Buffer.from(part.slice(3), 'base64'))
  if (!offered.some((signature) => expected.some((digest) => sameBytes(signature, digest)))) {
    return fail('WEBHOOK_SIGNATURE_INVALID', 'no webhook-signature matches the secret')
  }
  return parseJson(body)
}

export class Webhooks {
  /**
   * Verifies a delivery to a `format: "standard"` endpoint and returns its event, typed by `type`. Pass the raw
   * body exactly as received (a string or the bytes: never a re-serialised object), the request's headers, and the
   * endpoint's secret (or both secrets during a rotation). Throws CanopyWebhookVerificationError on any mismatch.
   */
  verify(rawBody: string | Uint8Array, headers: WebhookHeaders, secret: string | readonly string[], options?: VerifyOptions): WebhookEvent {
    const event = verifySignature(rawBody, headers, secret, options) as Partial<WebhookEvent> | null
    if (typeof event !== 'object' || event === null || typeof event.type !== 'string' || typeof event.id !== 'string') {
      return fail('WEBHOOK_BODY_INVALID', 'the webhook body is not a Canopy event (a format "ekko" endpoint? use verifyEkko)')
    }
    return event as WebhookEvent
  }

  /**
   * The same for a `format: "ekko"` endpoint (ekko's IMPACT_PAYMENT / IMPACT_PAYMENT_REVERSAL body): the Standard
   * Webhooks signature is checked with the secret, as for any endpoint.
   */
  verifyEkko(
    rawBody: string | Uint8Array,
    headers: WebhookHeaders,
    secret: string | readonly string[],
    options?: VerifyOptions,
  ): EkkoWebhookEvent {
    const event = verifySignature(rawBody, headers, secret, options) as Partial<EkkoWebhookEvent> | null
    if (typeof event !== 'object' || event === null || typeof event.eventType !== 'string') {
      return fail('WEBHOOK_BODY_INVALID', 'the webhook body is not an ekko-format event')
    }
    return event as EkkoWebhookEvent
  }

  /**
   * ekko's own check, for receivers ported from ekko: the `signature` header must be the hex HMAC-SHA256 of the raw
   * body keyed with the organisationId. A compatibility aid only: the organisationId is no secret, so anyone who
   * knows it can forge this header. Prefer verifyEkko.
   */
  verifyEkkoSignature(rawBody: string | Uint8Array, headers: WebhookHeaders, organisationId: string): EkkoWebhookEvent {
    const signature = header(headers, 'signature')
    if (!signature) return fail('WEBHOOK_HEADERS_MISSING', 'the signature header is required')
    const body = bytesOf(rawBody)
    const expected = createHmac('sha256', organisationId).update(body).digest()
    if (!/^[0-9a-f]+$/i.test(signature) || !sameBytes(Buffer.from(signature, 'hex'), expected)) {
      return fail('WEBHOOK_SIGNATURE_INVALID', 'the signature header does not match the body')
    }
    const event = parseJson(body) as Partial<EkkoWebhookEvent> | null
    if (typeof event !== 'object' || event === null || typeof event.eventType !== 'string') {
      return fail('WEBHOOK_BODY_INVALID', 'the webhook body is not an ekko-format event')
    }
    return event as EkkoWebhookEvent
  }
}
