// Domain errors carry a stable code and no HTTP status; src/http/errors.ts maps codes to statuses.

export type DomainErrorCode =
  | 'UNSUPPORTED_CURRENCY'
  | 'UNKNOWN_COUNTRY'
  | 'UNKNOWN_SUBDIVISION'
  | 'INVALID_MCC'
  | 'AMOUNT_PRECISION'
  | 'AMOUNT_OUT_OF_RANGE'
  | 'MCC_REQUIRED'
  | 'NO_CREDIT_PROJECTS'
  | 'NO_CONTRIBUTION_PARTNERS'
  | 'NO_CREDITS_IN_QUOTE'
  | 'IMPACT_PARTNER_NOT_FOUND'
  | 'INVALID_PROFIT_SHARE'
  | 'PROFIT_SHARE_EXCEEDS_FEE'
  | 'UNSUPPORTED_BILLING_CURRENCY'
  | 'PERIOD_IN_FUTURE'

export class DomainError extends Error {
  readonly code: DomainErrorCode
  /** JSON pointer into the request body that caused it, when one applies. */
  readonly path: string | undefined

  constructor(code: DomainErrorCode, message: string, path?: string) {
    super(message)
    this.name = 'DomainError'
    this.code = code
    this.path = path
  }
}
