// The one request the SDK makes: the session read, with the client secret in the Authorization header,
// no cookies, and every failure mapped to a `loaderror` code.
import { LoadFailure } from './errors.js'
import { parseSession, type SdkSession } from './session.js'

export type SessionKind = 'post-purchase' | 'checkout'

export interface SessionRequest {
  apiBase: string
  kind: SessionKind
  sessionId: string
  clientSecret: string
  /** Sent as ?locale= so that the API localises the equivalents; omitted → the session's own locale. */
  locale?: string
  signal: AbortSignal
}

const pageOrigin = (): string =>
  typeof location === 'object' && location.origin && location.origin !== 'null' ? location.origin : 'this page'

/**
 * A fetch that rejects without a response is a network failure or a CORS refusal: browsers report both
 * as the same TypeError, so the message names the likelier cause on a page that worked in development.
 */
export const originMessage = (apiBase: string): string =>
  `Could not reach the Canopy API at ${apiBase}. The most likely cause: this page's origin (${pageOrigin()}) is not ` +
  `one of the allowed origins of the organisation on this Canopy deployment, so the browser refused the response (CORS). ` +
  `Ask the deployment's operator to add it. Otherwise the network is down or apiBase is wrong.`

const FAILURES: Readonly<Record<number, readonly [string, string]>> = {
  400: ['bad_request', 'The Canopy API refused the request as malformed.'],
  401: ['unauthorized', 'The client secret was refused: it is not the secret of this session.'],
  404: [
    'session_not_found',
    'No such session. A post-purchase session is read by an embedded or takeover element, a checkout session by a checkout element.',
  ],
  410: ['session_expired', 'The session has expired: create a new one on your server.'],
  429: ['rate_limited', 'Too many requests for this session: try again later.'],
}

export async function fetchSession(request: SessionRequest): Promise<SdkSession> {
  const query = request.locale ? `?locale=${encodeURIComponent(request.locale)}` : ''
  const url = `${request.apiBase}/v3/${request.kind}/sessions/${encodeURIComponent(request.sessionId)}${query}`
  let response: Response
  try {
    response = await fetch(url, {
      method: 'GET',
      headers: { authorization: `Bearer ${request.clientSecret}`, accept: 'application/json' },
      credentials: 'omit',
      mode: 'cors',
      cache: 'no-store',
      referrerPolicy: 'strict-origin-when-cross-origin',
      signal: request.signal,
    })
  } catch (error) {
    if (request.signal.aborted) throw error
    throw new LoadFailure('network_error', 'network_or_origin', originMessage(request.apiBase), null)
  }
  let body: unknown
  try {
    body = await response.json()
  } catch (error) {
    if (request.signal.aborted) throw error
    body = undefined
  }
  if (response.ok) {
    if (body === undefined)
      throw new LoadFailure('api_error', 'invalid_response', 'The Canopy API answered with a body that is not JSON.', 200)
    return parseSession(body)
  }
  const apiError = typeof body === 'object' && body !== null ? (body as { code?: unknown; requestId?: unknown }) : {}
  const requestId = typeof apiError.requestId === 'string' ? apiError.requestId : (response.headers.get('x-request-id') ?? undefined)
  const status = response.status
  const known = apiError.code === 'SESSION_EXPIRED' ? FAILURES[410] : FAILURES[status]
  const [code, message] =
    known ??
    (status >= 500 ? ['server_error', 'The Canopy API failed: try again later.'] : ['api_error', 'The Canopy API refused the request.'])
  throw new LoadFailure('api_error', code, `${message} (HTTP ${status})`, status, requestId)
}
