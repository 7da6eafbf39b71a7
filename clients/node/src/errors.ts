// One error hierarchy for everything the client throws. API errors are keyed by the API's `code` (the codes and
// their statuses come from the OpenAPI document, src/generated/contract.ts): the class follows the code's status.
import { ERROR_CODE_STATUS } from './generated/contract.js'
import type { components } from './generated/openapi.js'
import { parseRetryAfter } from './retry.js'

/** Every code the API answers with (`code` of its error body). A code added to the API appears here on regeneration. */
export type ErrorCode = components['schemas']['ErrorCode']

/** The codes whose HTTP status is S, e.g. `CodeWithStatus<409>`. */
export type CodeWithStatus<S extends number> = {
  [C in ErrorCode]: (typeof ERROR_CODE_STATUS)[C] extends S ? C : never
}[ErrorCode]

/** Client-side codes: no usable answer came from the API, or a webhook did not verify. */
export type ClientErrorCode =
  | 'CONNECTION_ERROR'
  | 'TIMEOUT'
  /** An answer that is not the API's error shape (a proxy's HTML page, a truncated body). */
  | 'UNEXPECTED_RESPONSE'
  | 'WEBHOOK_HEADERS_MISSING'
  | 'WEBHOOK_TIMESTAMP_OUT_OF_TOLERANCE'
  | 'WEBHOOK_SIGNATURE_INVALID'
  | 'WEBHOOK_BODY_INVALID'

export interface ErrorDetail {
  path: string
  message: string
}

/** The base class: `instanceof CanopyError` catches everything the client throws (except the caller's own abort). */
export class CanopyError extends Error {
  override name = 'CanopyError'
  readonly code: ErrorCode | ClientErrorCode
  /** How many attempts were made (1 + retries). */
  attempts = 1

  constructor(code: ErrorCode | ClientErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.code = code
  }
}

export interface ApiErrorInit {
  status: number
  code: ErrorCode | 'UNEXPECTED_RESPONSE'
  message: string
  requestId: string | undefined
  details: ErrorDetail[]
  headers: Headers
  idempotencyKey?: string | undefined
}

/** The API answered with an error. `code` is the API's code; `details` lists every violation of a 400. */
export class CanopyApiError<C extends ErrorCode | 'UNEXPECTED_RESPONSE' = ErrorCode | 'UNEXPECTED_RESPONSE'> extends CanopyError {
  override name = 'CanopyApiError'
  declare readonly code: C
  readonly status: number
  /** The API's x-request-id for this answer: quote it to support. */
  readonly requestId: string | undefined
  readonly details: ErrorDetail[]
  readonly headers: Headers
  /** The Idempotency-Key the request carried, if any (every attempt carries the same). */
  readonly idempotencyKey: string | undefined

  constructor(init: ApiErrorInit) {
    super(init.code, init.message)
    this.status = init.status
    this.requestId = init.requestId
    this.details = init.details
    this.headers = init.headers
    this.idempotencyKey = init.idempotencyKey
  }

  /** Narrows an unknown error to an API error with one of these codes: `if (CanopyApiError.is(e, 'ALREADY_REVERSED'))`. */
  static is<K extends ErrorCode>(error: unknown, ...codes: K[]): error is CanopyApiError<K> {
    return error instanceof CanopyApiError && (codes.length === 0 || (codes as string[]).includes(error.code))
  }
}

/** 400, 408, 413, 415, 431: the request is wrong (fix it; retrying the same request gives the same answer). */
export class CanopyInvalidRequestError extends CanopyApiError<CodeWithStatus<400 | 408 | 413 | 415 | 431>> {
  override name = 'CanopyInvalidRequestError'
}
/** 401: the API key is missing, malformed, unknown, revoked or expired. */
export class CanopyAuthenticationError extends CanopyApiError<CodeWithStatus<401>> {
  override name = 'CanopyAuthenticationError'
}
/** 403: an organisationId outside the key's tree. */
export class CanopyPermissionError extends CanopyApiError<CodeWithStatus<403>> {
  override name = 'CanopyPermissionError'
}
/** 404: no such resource in the key's tree. */
export class CanopyNotFoundError extends CanopyApiError<CodeWithStatus<404>> {
  override name = 'CanopyNotFoundError'
}
/** 409: a state conflict (already reversed, key already rotated, idempotency key in use after every retry…). */
export class CanopyConflictError extends CanopyApiError<CodeWithStatus<409>> {
  override name = 'CanopyConflictError'
}
/** 410: the session has expired. */
export class CanopyGoneError extends CanopyApiError<CodeWithStatus<410>> {
  override name = 'CanopyGoneError'
}
/** 422: understood but refused (an Idempotency-Key reused for another request, nothing to price…). */
export class CanopyUnprocessableError extends CanopyApiError<CodeWithStatus<422>> {
  override name = 'CanopyUnprocessableError'
}

/** 429 and 503 carry Retry-After: how long the API asked to wait, in milliseconds. */
const retryAfterOf = (headers: Headers): number | undefined => parseRetryAfter(headers.get('retry-after'), Date.now())

/** 429: the key's rate limit (retried automatically, honouring Retry-After, before this is thrown). */
export class CanopyRateLimitError extends CanopyApiError<CodeWithStatus<429>> {
  override name = 'CanopyRateLimitError'
  readonly retryAfterMs: number | undefined
  constructor(init: ApiErrorInit) {
    super(init)
    this.retryAfterMs = retryAfterOf(init.headers)
  }
}
/** 5xx: the API could not answer (503: retried automatically where safe, before this is thrown). */
export class CanopyServerError extends CanopyApiError<CodeWithStatus<500 | 503> | 'UNEXPECTED_RESPONSE'> {
  override name = 'CanopyServerError'
  readonly retryAfterMs: number | undefined
  constructor(init: ApiErrorInit) {
    super(init)
    this.retryAfterMs = retryAfterOf(init.headers)
  }
}

/** No answer: the connection failed or broke. `cause` is the underlying error. */
export class CanopyConnectionError extends CanopyError {
  override name = 'CanopyConnectionError'
  /** The Idempotency-Key the request carried, if any: retry with it later and the API replays or completes the call. */
  readonly idempotencyKey: string | undefined
  constructor(message: string, options: { cause?: unknown; idempotencyKey?: string | undefined; code?: 'CONNECTION_ERROR' | 'TIMEOUT' }) {
    super(options.code ?? 'CONNECTION_ERROR', message, { cause: options.cause })
    this.idempotencyKey = options.idempotencyKey
  }
}
/** No answer within the request's timeout. */
export class CanopyTimeoutError extends CanopyConnectionError {
  override name = 'CanopyTimeoutError'
  constructor(timeoutMs: number, idempotencyKey: string | undefined) {
    super(`no answer from the Canopy API within ${timeoutMs} ms`, { idempotencyKey, code: 'TIMEOUT' })
  }
}

/** A webhook that did not verify: missing headers, a timestamp outside the tolerance, no matching signature, a bad body. */
export class CanopyWebhookVerificationError extends CanopyError {
  override name = 'CanopyWebhookVerificationError'
  declare readonly code: Extract<ClientErrorCode, `WEBHOOK_${string}`>
}

const CLASS_BY_STATUS: Record<number, new (init: ApiErrorInit) => CanopyApiError> = {
  400: CanopyInvalidRequestError,
  401: CanopyAuthenticationError,
  403: CanopyPermissionError,
  404: CanopyNotFoundError,
  408: CanopyInvalidRequestError,
  409: CanopyConflictError,
  410: CanopyGoneError,
  413: CanopyInvalidRequestError,
  415: CanopyInvalidRequestError,
  422: CanopyUnprocessableError,
  429: CanopyRateLimitError,
  431: CanopyInvalidRequestError,
}

const isErrorCode = (code: unknown): code is ErrorCode => typeof code === 'string' && Object.hasOwn(ERROR_CODE_STATUS, code)

/**
 * The error for an API answer: the class is chosen by the code's status in the contract (so a code always maps to
 * the same class), by the HTTP status for a code this client does not know yet, or for a body that is not the
 * API's error shape.
 */
export function apiErrorFrom(status: number, body: unknown, headers: Headers, idempotencyKey?: string): CanopyApiError {
  const shaped =
    typeof body === 'object' && body !== null && typeof (body as { code?: unknown }).code === 'string'
      ? (body as { error?: unknown; code: string; details?: unknown; requestId?: unknown })
      : undefined
  const known = shaped && isErrorCode(shaped.code) ? shaped.code : undefined
  const classStatus = known ? ERROR_CODE_STATUS[known] : status
  const ErrorClass = CLASS_BY_STATUS[classStatus] ?? (classStatus >= 500 ? CanopyServerError : CanopyApiError)
  return new ErrorClass({
    status,
    // A code newer than this client is kept as sent (typed as the union, so regenerate to name it).
    code: (shaped?.code as ErrorCode | undefined) ?? 'UNEXPECTED_RESPONSE',
    message:
      typeof shaped?.error === 'string' ? shaped.error : `unexpected answer from the Canopy API: HTTP ${status} without an error body`,
    requestId: typeof shaped?.requestId === 'string' ? shaped.requestId : (headers.get('x-request-id') ?? undefined),
    details: Array.isArray(shaped?.details) ? (shaped.details as ErrorDetail[]) : [],
    headers,
    idempotencyKey,
  })
}
