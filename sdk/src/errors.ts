// What `loaderror` reports: { error: { type, code, message, status, requestId? } } (docs/sdk.md).

export type LoadErrorType = 'network_error' | 'api_error' | 'invalid_request_error'

export interface LoadErrorDetail {
  type: LoadErrorType
  /** network_or_origin, session_expired, unauthorized, session_not_found, rate_limited, bad_request,
   *  server_error, api_error, invalid_response, client_secret_unavailable, invalid_client_secret,
   *  invalid_options, internal_error */
  code: string
  message: string
  /** The HTTP status, or null when no response arrived. */
  status: number | null
  /** The API's x-request-id, for support, when the API answered. */
  requestId?: string
}

/** A load that failed for a reason the page should hear about through `loaderror`. */
export class LoadFailure extends Error {
  readonly detail: LoadErrorDetail
  constructor(type: LoadErrorType, code: string, message: string, status: number | null, requestId?: string) {
    super(message)
    this.detail = { type, code, message, status, ...(requestId ? { requestId } : {}) }
  }
}
