// Application errors raised by services and HTTP plumbing. Like domain errors they carry a stable code and
// no HTTP status: src/http/errors.ts maps every code to its status in one table.

export type AppErrorCode =
  | 'BAD_REQUEST'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'SESSION_EXPIRED'
  | 'REQUEST_ENTITY_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'UNPROCESSABLE_ENTITY'
  | 'IDEMPOTENCY_KEY_REUSED'
  | 'IDEMPOTENCY_KEY_IN_USE'
  | 'ALREADY_REVERSED'
  | 'TOO_MANY_REQUESTS'
  | 'SERVICE_UNAVAILABLE'
  | 'INTERNAL_SERVER_ERROR'

export interface ErrorDetail {
  /** JSON pointer into the request, e.g. "/transaction/amount", or a header name such as "idempotency-key". */
  path: string
  message: string
}

export class AppError extends Error {
  constructor(
    readonly code: AppErrorCode,
    message: string,
    readonly details: ErrorDetail[] = [],
  ) {
    super(message)
    this.name = 'AppError'
  }
}

/** The one answer for every authentication failure, whatever its reason (missing, malformed, unknown, revoked). */
export const unauthorized = (): AppError => new AppError('UNAUTHORIZED', 'invalid or missing api key')

export const notFound = (what: string): AppError => new AppError('NOT_FOUND', `${what} not found`)
