// Errors raised by services: each carries a stable UPPER_SNAKE code a client can branch on, and no HTTP
// status. src/http/errors.ts maps every code (these, the domain's and the HTTP layer's) to its status in
// one table.

export type AppErrorCode =
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'SESSION_EXPIRED'
  | 'IDEMPOTENCY_KEY_REUSED'
  | 'IDEMPOTENCY_KEY_IN_USE'
  | 'ALREADY_REVERSED'
  | 'CREDITS_OR_CONTRIBUTION_REQUIRED'
  | 'CONSUMER_EMAIL_REQUIRED'
  | 'TAX_RECEIPT_REQUIRES_CONTRIBUTION'
  | 'CURRENCY_MISMATCH'
  | 'INVALID_SERVICE_FEE'
  | 'API_KEY_ALREADY_REVOKED'
  | 'API_KEY_INACTIVE'
  | 'API_KEY_ALREADY_ROTATED'
  | 'INVALID_ALLOWED_ORIGIN'
  | 'TOO_MANY_ALLOWED_ORIGINS'
  | 'WEBHOOK_URL_REFUSED'
  | 'WEBHOOK_ENDPOINT_DISABLED'
  | 'INVALID_DATE_RANGE'
  | 'INVALID_CURSOR'
  | 'PROFIT_SHARE_SET_BY_PARENT'
  | 'SETTLEMENT_MODEL_ROOT_ONLY'
  | 'IP_NOT_ALLOWED'
  | 'PERMISSION_DENIED'
  | 'CSRF_REFUSED'
  | 'INVALID_IP_ALLOWLIST_ENTRY'
  | 'OWN_ORGANISATION'
  | 'INVALID_CREDENTIALS'
  | 'SIGN_IN_THROTTLED'
  | 'INVALID_SECOND_FACTOR'
  | 'SECOND_FACTOR_ENROLMENT_REQUIRED'
  | 'SECOND_FACTOR_ALREADY_ENABLED'
  | 'SECOND_FACTOR_REQUIRED_BY_ORGANISATION'
  | 'WEAK_PASSWORD'
  | 'INVALID_PASSWORD_LINK'
  | 'EMAIL_IN_USE'
  | 'LAST_ADMIN'

export interface ErrorDetail {
  /** JSON pointer into the request, e.g. "/transaction/amount", or a header name such as "idempotency-key". */
  path: string
  message: string
}

export class AppError<Code extends string = AppErrorCode> extends Error {
  /** Sent as Retry-After (seconds) with the error, when the caller should wait before trying again. */
  retryAfterSeconds: number | undefined

  constructor(
    readonly code: Code,
    message: string,
    readonly details: ErrorDetail[] = [],
  ) {
    super(message)
    this.name = 'AppError'
  }
}

/** The one answer for every API-key authentication failure, whatever its reason (missing, malformed, unknown, revoked). */
export const unauthorized = (): AppError => new AppError('UNAUTHORIZED', 'invalid or missing api key')

export const notFound = (what: string): AppError => new AppError('NOT_FOUND', `${what} not found`)
