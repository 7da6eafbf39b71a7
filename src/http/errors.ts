// One error shape for every response, and one table from error code to HTTP status.
import { randomUUID } from 'node:crypto'
import { STATUS_CODES } from 'node:http'
import type { Duplex } from 'node:stream'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { isDatabaseUnavailable, isPoolTimeout } from '../db/failures.js'
import { DomainError, type DomainErrorCode } from '../domain/errors.js'
import { AppError, type AppErrorCode, type ErrorDetail } from '../errors.js'

/** Codes only the HTTP layer raises: request shape, transport and availability. */
export type HttpErrorCode =
  | 'BAD_REQUEST'
  | 'SECRET_IN_QUERY'
  | 'PARTIAL_REVERSAL_NOT_SUPPORTED'
  | 'REQUEST_TIMEOUT'
  | 'REQUEST_ENTITY_TOO_LARGE'
  | 'REQUEST_HEADER_FIELDS_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'TOO_MANY_REQUESTS'
  | 'SERVICE_UNAVAILABLE'
  | 'INTERNAL_SERVER_ERROR'

export type ErrorCode = AppErrorCode | DomainErrorCode | HttpErrorCode

/**
 * Every error code the API can answer with: its HTTP status and when it happens. The one table: the
 * error handler reads statuses from it, OpenAPI descriptions and the README's table are checked against it.
 */
export const ERROR_CODES = {
  BAD_REQUEST: {
    status: 400,
    when: "the request does not match the route's schema (body, query, path or headers; every violation is in details), or its JSON or URL is malformed",
  },
  SECRET_IN_QUERY: { status: 400, when: 'a client secret was sent in the query string of a session read' },
  PARTIAL_REVERSAL_NOT_SUPPORTED: { status: 400, when: 'a reversal was sent an amount: a reversal always reverses the whole allocation' },
  CREDITS_OR_CONTRIBUTION_REQUIRED: { status: 400, when: 'an allocation has neither credits nor contribution' },
  CONSUMER_EMAIL_REQUIRED: { status: 400, when: 'issueTaxReceipt is true but consumerEmail is missing' },
  TAX_RECEIPT_REQUIRES_CONTRIBUTION: { status: 400, when: 'issueTaxReceipt is true but the allocation has no contribution' },
  CURRENCY_MISMATCH: { status: 400, when: "an allocation's currencyCode is not its quote's currency" },
  INVALID_SERVICE_FEE: { status: 400, when: 'an operator gave a service fee outside 0–1 or with more than 6 decimals (CLI)' },
  INVALID_ALLOWED_ORIGIN: {
    status: 400,
    when: 'an allowed origin is not scheme://host[:port] (http or https; no path, query, fragment, user info or wildcard; never null)',
  },
  TOO_MANY_ALLOWED_ORIGINS: { status: 400, when: 'an organisation was given more than 20 allowed origins' },
  UNSUPPORTED_CURRENCY: { status: 400, when: 'a currency code is not one Canopy can price' },
  UNKNOWN_COUNTRY: { status: 400, when: 'a country code is not an assigned ISO 3166-1 alpha-3 code' },
  UNKNOWN_SUBDIVISION: {
    status: 400,
    when: 'a US state or Canadian province that decides the sales tax is not a recognised ISO 3166-2 code or name',
  },
  INVALID_MCC: { status: 400, when: 'an MCC is not 4 digits' },
  AMOUNT_PRECISION: { status: 400, when: "an amount has more decimals than its currency's minor units" },
  AMOUNT_OUT_OF_RANGE: { status: 400, when: 'an amount is not a finite number greater than 0' },
  MCC_REQUIRED: { status: 400, when: 'a quote has no merchant and its organisation has no MCC' },
  NO_CREDITS_IN_QUOTE: { status: 400, when: 'credits were allocated against a quote without a credits section (a nature quote)' },
  IMPACT_PARTNER_NOT_FOUND: { status: 400, when: "an id in contribution.impactPartnerIds is not one of the quote's contribution partners" },
  WEBHOOK_URL_REFUSED: {
    status: 400,
    when: 'a webhook url is not http(s) (http only with WEBHOOK_ALLOW_HTTP), has user info, or its host is or resolves to a refused address (loopback, private, link-local, CGNAT, metadata, unspecified, IPv4-mapped, unique-local)',
  },
  INVALID_DATE_RANGE: {
    status: 400,
    when: 'a reconciliation window (or an audit-log filter) has dateTimeFrom at or after dateTimeTo, or a reconciliation window is longer than 366 days',
  },
  INVALID_CURSOR: {
    status: 400,
    when: "a reconciliation cursor is not a record of the key's tree, or both startingAfter and endingBefore were sent; a webhook deliveries cursor is not a delivery of that endpoint",
  },
  INVALID_PROFIT_SHARE: { status: 400, when: 'a relativeProfitShare is not a number from 0 to 1 with at most 6 decimals' },
  PROFIT_SHARE_EXCEEDS_FEE: {
    status: 400,
    when: "an organisation chain's profit shares would pay out more than the service fee (a guard of the fee split: shares from 0 to 1 multiplied down a chain never do)",
  },
  UNSUPPORTED_BILLING_CURRENCY: { status: 400, when: "an organisation's billing.currencyCode is not one Canopy can price" },
  SETTLEMENT_MODEL_ROOT_ONLY: {
    status: 400,
    when: 'an operator set a settlement model on an organisation that has a parent: it is set on a root and inherited (CLI)',
  },
  PERIOD_IN_FUTURE: { status: 400, when: 'a statement was asked for a month that has not begun' },
  INVALID_IP_ALLOWLIST_ENTRY: {
    status: 400,
    when: 'an ipAllowlist entry is not an IP address, a CIDR block or a range of two addresses of one family (details names it)',
  },
  WEAK_PASSWORD: {
    status: 400,
    when: 'a Hub password is shorter than 12 characters, longer than 200, a commonly used password, or contains the e-mail address',
  },
  INVALID_PASSWORD_LINK: { status: 400, when: 'a set-password link is unknown, already used or older than 24 hours' },
  UNAUTHORIZED: {
    status: 401,
    when: 'the API key, client secret or Hub session is missing, malformed, unknown, revoked or expired (one answer for every reason)',
  },
  INVALID_CREDENTIALS: {
    status: 401,
    when: 'a Hub sign-in named an unknown e-mail address or a wrong password (one answer for both)',
  },
  INVALID_SECOND_FACTOR: {
    status: 401,
    when: 'a Hub sign-in or enrolment gave a TOTP code that is wrong, expired or already used, or an unknown or used recovery code',
  },
  FORBIDDEN: { status: 403, when: "a body or query organisationId is outside the caller's organisation tree" },
  PERMISSION_DENIED: { status: 403, when: 'the Hub user\'s role does not allow this action (see the roles in "The Hub")' },
  IP_NOT_ALLOWED: {
    status: 403,
    when: "the API key's organisation has an IP allowlist that is on and the request's address is not in it (one answer whatever the key)",
  },
  CSRF_REFUSED: {
    status: 403,
    when: "a state-changing Hub request came without this site's Origin or without the session's CSRF token",
  },
  SECOND_FACTOR_ENROLMENT_REQUIRED: {
    status: 403,
    when: "the Hub user's organisation requires a second factor and the user has not set one up yet: only enrolment is open",
  },
  PROFIT_SHARE_SET_BY_PARENT: {
    status: 403,
    when: "a caller tried to set the relativeProfitShare of its own organisation or of one above it: a share is set by the parent's tree (a root's by the operator)",
  },
  NOT_FOUND: {
    status: 404,
    when: "the route, or a resource of the key's tree, does not exist (another tree's resources are not found either)",
  },
  IDEMPOTENCY_KEY_IN_USE: { status: 409, when: 'a request with the same Idempotency-Key is still being processed; retry shortly' },
  ALREADY_REVERSED: { status: 409, when: 'the allocation has already been reversed' },
  API_KEY_ALREADY_REVOKED: { status: 409, when: 'the API key to revoke is already revoked or expired' },
  API_KEY_INACTIVE: { status: 409, when: 'the API key to rotate is revoked or expired; create a new key instead' },
  API_KEY_ALREADY_ROTATED: {
    status: 409,
    when: 'the API key to rotate was already rotated; rotate its replacement, or revoke it to end its grace period now',
  },
  OWN_ORGANISATION: {
    status: 409,
    when: 'an organisation was asked to deactivate or reactivate itself; only an organisation above it (or an operator) can',
  },
  EMAIL_IN_USE: { status: 409, when: 'a Hub user with this e-mail address already exists' },
  LAST_ADMIN: { status: 409, when: "the change would leave the organisation without an admin (the last admin's role or removal)" },
  SECOND_FACTOR_ALREADY_ENABLED: { status: 409, when: 'TOTP enrolment was started for a Hub user who already has a second factor' },
  SECOND_FACTOR_REQUIRED_BY_ORGANISATION: {
    status: 409,
    when: 'a Hub user tried to turn off the second factor that their organisation requires',
  },
  WEBHOOK_ENDPOINT_DISABLED: {
    status: 409,
    when: 'a test, retry or recovery was asked of a disabled webhook endpoint; enable it first',
  },
  SESSION_EXPIRED: { status: 410, when: 'the session is past expiresAt; create a new session' },
  REQUEST_TIMEOUT: { status: 408, when: 'the whole request did not arrive within REQUEST_TIMEOUT_MS' },
  REQUEST_ENTITY_TOO_LARGE: { status: 413, when: 'the request body is larger than BODY_LIMIT_BYTES' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, when: 'the request body is not application/json' },
  REQUEST_HEADER_FIELDS_TOO_LARGE: { status: 431, when: 'the request headers are larger than the server accepts (16 KiB)' },
  IDEMPOTENCY_KEY_REUSED: { status: 422, when: 'the Idempotency-Key was already used with a different request' },
  NO_CREDIT_PROJECTS: { status: 422, when: 'no carbon-credit project is available to price a carbon quote' },
  NO_CONTRIBUTION_PARTNERS: { status: 422, when: 'a contribution was allocated against a quote without contribution partners' },
  TOO_MANY_REQUESTS: { status: 429, when: 'the API key exceeded RATE_LIMIT_PER_MINUTE; see Retry-After' },
  SIGN_IN_THROTTLED: {
    status: 429,
    when: 'too many failed Hub sign-ins for this e-mail address or from this address; wait Retry-After seconds (it never locks for good)',
  },
  INTERNAL_SERVER_ERROR: { status: 500, when: 'an unexpected error; nothing about it is revealed' },
  SERVICE_UNAVAILABLE: { status: 503, when: 'the database is unreachable, busy or too slow; retry after Retry-After seconds' },
} as const satisfies Record<ErrorCode, { status: number; when: string }>

const statusOf = (code: ErrorCode): number => ERROR_CODES[code].status

export interface ErrorBody {
  error: string
  code: ErrorCode
  details?: ErrorDetail[]
  requestId: string
}

interface AjvError {
  instancePath: string
  keyword: string
  message?: string
  params: Record<string, unknown>
}

const describeAjvError = (error: AjvError, context: string | undefined): ErrorDetail => {
  const base = context && context !== 'body' ? `/${context}${error.instancePath}` : error.instancePath
  if (error.keyword === 'additionalProperties') {
    return { path: `${base}/${String(error.params.additionalProperty)}`, message: 'is not a known property' }
  }
  if (error.keyword === 'required') {
    return { path: `${base}/${String(error.params.missingProperty)}`, message: 'is required' }
  }
  return { path: base || '/', message: error.message ?? 'is invalid' }
}

/**
 * A nullable field that fails reports its own error plus "must be null" and "must match a schema in anyOf";
 * those two say nothing the first does not, so they are dropped whenever another error remains.
 */
const isNullableNoise = (error: AjvError): boolean =>
  error.keyword === 'anyOf' || (error.keyword === 'type' && error.params.type === 'null')

const pointerToText = (path: string): string =>
  path === '/' || path === '' ? 'request body' : path.replace(/^\//, '').replaceAll('/', '.')

/** Only the first letter is lowered: paths keep their case ("consumer.countryCode"), so the sentence states the rule truly. */
const sentence = (text: string): string => text.charAt(0).toLowerCase() + text.slice(1)

const httpError = (code: HttpErrorCode, message: string, details: ErrorDetail[] = []): AppError<HttpErrorCode> =>
  new AppError(code, message, details)

export function validationError(errors: readonly AjvError[], context: string | undefined): AppError<HttpErrorCode> {
  const meaningful = errors.filter((e) => !isNullableNoise(e))
  const described = (meaningful.length > 0 ? meaningful : errors).map((e) => describeAjvError(e, context))
  const details = described.filter((d, i) => described.findIndex((o) => o.path === d.path && o.message === d.message) === i)
  const first = details[0]
  const message = first ? `${pointerToText(first.path)} ${first.message}` : 'request is invalid'
  return httpError('BAD_REQUEST', sentence(message), details)
}

/** Turns anything thrown into [status, body]. Unknown errors become a 500 that reveals nothing. */
export function toErrorResponse(error: unknown, requestId: string): { status: number; body: ErrorBody; internal: boolean } {
  if (error instanceof AppError || error instanceof DomainError) {
    const details = error instanceof AppError ? error.details : error.path ? [{ path: error.path, message: error.message }] : []
    return {
      status: statusOf(error.code),
      body: { error: error.message, code: error.code, ...(details.length ? { details } : {}), requestId },
      internal: false,
    }
  }
  const fastifyError = error as Partial<FastifyError> & { validation?: AjvError[]; validationContext?: string }
  if (fastifyError.validation) {
    return toErrorResponse(validationError(fastifyError.validation, fastifyError.validationContext), requestId)
  }
  const mapped = mapFastifyError(fastifyError)
  if (mapped) return toErrorResponse(mapped, requestId)
  return {
    status: 500,
    body: { error: 'internal server error', code: 'INTERNAL_SERVER_ERROR', requestId },
    internal: true,
  }
}

function mapFastifyError(error: Partial<FastifyError>): AppError<HttpErrorCode> | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return httpError('REQUEST_ENTITY_TOO_LARGE', 'request body is too large')
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return httpError('UNSUPPORTED_MEDIA_TYPE', 'content type must be application/json')
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return httpError('BAD_REQUEST', 'request body is empty but content type is application/json')
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return httpError('BAD_REQUEST', 'request body is not valid json')
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return httpError('BAD_REQUEST', 'content-length does not match the body')
    case 'FST_ERR_BAD_URL':
    case 'FST_ERR_ASYNC_CONSTRAINT':
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return httpError('BAD_REQUEST', 'request url is invalid')
    default:
      break
  }
  if (error instanceof SyntaxError || (error.statusCode === 400 && (error as Error).name === 'SyntaxError')) {
    return httpError('BAD_REQUEST', 'request body is not valid json')
  }
  if (error.statusCode === 429) return httpError('TOO_MANY_REQUESTS', 'too many requests, slow down')
  if (error.statusCode === 503) return httpError('SERVICE_UNAVAILABLE', 'service is unavailable, retry later')
  if (isPoolTimeout(error)) return httpError('SERVICE_UNAVAILABLE', 'service is busy, retry later')
  if (isDatabaseUnavailable(error)) return httpError('SERVICE_UNAVAILABLE', 'database is unavailable, retry later')
  return undefined
}

/** Sends anything thrown in the one error shape, with the headers its status calls for. */
export function sendError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const { status, body, internal } = toErrorResponse(error, request.id)
  // Also set here: errors raised before routing (a malformed URL) never run the onRequest hooks.
  reply.header('x-request-id', request.id)
  if (internal) request.log.error({ err: error }, 'unhandled error')
  else if (status >= 500) request.log.warn({ err: error }, body.error)
  if (status === 503) reply.header('retry-after', '1')
  // RFC 7235: a 401 names the scheme the client should use.
  if (status === 401) reply.header('www-authenticate', 'Bearer realm="canopy"')
  // Throttled sign-ins say when to try again.
  if (error instanceof AppError && error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds))
  return reply.code(status).type('application/json; charset=utf-8').send(body)
}

/** Errors Fastify raises before routing (a malformed URL, a bad constraint): the same shape as everything else. */
export const frameworkErrors = (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
  void sendError(error, request, reply)
}

const CLIENT_ERRORS: Record<string, { code: HttpErrorCode; message: string }> = {
  ERR_HTTP_REQUEST_TIMEOUT: { code: 'REQUEST_TIMEOUT', message: 'the request did not arrive in time' },
  HPE_HEADER_OVERFLOW: { code: 'REQUEST_HEADER_FIELDS_TOO_LARGE', message: 'request headers are too large' },
}

/**
 * Requests Node's HTTP parser refuses (a garbage request line, a control byte in a header, both Content-Length
 * and Transfer-Encoding, headers too large) never reach Fastify: answer them on the socket, in the one shape,
 * then close it.
 */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const { code, message } = CLIENT_ERRORS[error.code ?? ''] ?? { code: 'BAD_REQUEST' as const, message: 'request is malformed' }
  const status = statusOf(code)
  const body = JSON.stringify({ error: message, code, requestId: randomUUID() } satisfies ErrorBody)
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    )
  }
  socket.destroy()
}

export function installErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler(sendError)
  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const body: ErrorBody = {
      error: `route ${request.method} ${request.originalUrl.split('?')[0]} not found`,
      code: 'NOT_FOUND',
      requestId: request.id,
    }
    return reply.code(404).send(body)
  })
}
