// When a failed attempt is tried again, and after how long. Pure functions: the request loop (http.ts) feeds them.

/**
 * How a call may be retried:
 * - `idempotent`: doing it twice is the same as once (GET, PATCH and DELETE; an allocation with its Idempotency-Key;
 *   a reversal, a key revocation, a recovery, which the API refuses or repeats harmlessly the second time). Retried
 *   after any failure that may pass: no answer at all, 409 IDEMPOTENCY_KEY_IN_USE, 429, 502, 503, 504.
 * - `unsafe`: every call creates something new (a quote, a session, an API key, an endpoint). Retried only when the
 *   API certainly did nothing: 429 (the rate limit answers before any route runs) and a connection that never
 *   opened (refused, or a name that does not resolve), never after a request may have reached the API.
 */
export type RetryPolicy = 'idempotent' | 'unsafe'

export type AttemptFailure =
  | { kind: 'response'; status: number; code?: string | undefined }
  /** `sent: false` only when the request certainly never left (the connection never opened). */
  | { kind: 'network'; sent: boolean }

const RETRIED_STATUSES = new Set([502, 503, 504])

export function isRetryable(policy: RetryPolicy, failure: AttemptFailure): boolean {
  if (failure.kind === 'network') return policy === 'idempotent' || !failure.sent
  if (failure.status === 429) return true
  if (policy === 'unsafe') return false
  if (failure.status === 409) return failure.code === 'IDEMPOTENCY_KEY_IN_USE'
  return RETRIED_STATUSES.has(failure.status)
}

/** Error codes of Node's fetch (undici) for a connection that never opened: the request was not sent. */
const NEVER_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT'])

/** Whether a fetch failure certainly happened before the request was sent. */
export function neverSent(error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code
    if (typeof code === 'string' && NEVER_SENT.has(code)) return true
    // AggregateError of a dual-stack connect: every address refused.
    const errors = (current as { errors?: unknown }).errors
    if (Array.isArray(errors) && errors.length > 0 && errors.every((e) => neverSent(e))) return true
    current = (current as { cause?: unknown }).cause
  }
  return false
}

export interface BackoffSettings {
  /** The first retry waits about this long (ms). */
  initialDelayMs: number
  /** No wait is longer than this, except what Retry-After asks for (ms). */
  maxDelayMs: number
}

export const DEFAULT_BACKOFF: BackoffSettings = { initialDelayMs: 500, maxDelayMs: 8_000 }

/**
 * The wait before retry number `retry` (1 = the first retry): exponential from initialDelayMs, capped at maxDelayMs,
 * with jitter between half and all of it (so that clients that failed together do not come back together), never
 * less than initialDelayMs; at least what Retry-After asked for. `random` is in [0, 1).
 */
export function backoffDelayMs(retry: number, settings: BackoffSettings, random: number, retryAfterMs?: number): number {
  const exponential = Math.min(settings.initialDelayMs * 2 ** (retry - 1), settings.maxDelayMs)
  const jittered = Math.max(settings.initialDelayMs, exponential * (0.5 + random / 2))
  return Math.round(retryAfterMs === undefined ? jittered : Math.max(jittered, retryAfterMs))
}

/** Retry-After (seconds, or an HTTP date) in milliseconds from `now`; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (value === null) return undefined
  const trimmed = value.trim()
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000
  const at = Date.parse(trimmed)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}
