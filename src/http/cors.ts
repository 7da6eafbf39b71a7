// CORS, for the browser SDK's session reads only (docs/api-contract.md, "Browser access"). Every other API route
// answers no CORS header at all, to reads and to preflights (OPTIONS there is a 404): an API key must never be
// usable from a web page. The public script files under /js/ are the one exception, with `*` (routes/assets.ts).
//
// Not @fastify/cors: which origins are allowed depends on the session named in the path, and its preflight
// delegator runs on its own catch-all OPTIONS route, which sees no `:id`. These two small functions keep the
// rule where the routes are, and leave every other route untouched.
import type { FastifyReply, FastifyRequest, onSendHookHandler, RouteHandlerMethod } from 'fastify'
import type { SessionOrigins } from '../services/session-origins.js'

/** How long a browser may cache a preflight answer (Chromium caps it at 7200 s). */
export const PREFLIGHT_MAX_AGE_SECONDS = 600
/** The only request header the SDK sends that is not CORS-safelisted (sdk/src/api.ts). */
const ALLOWED_REQUEST_HEADERS = 'authorization'
/** Response headers the SDK may read: the request id to quote to the operator, and the 429's Retry-After. */
const EXPOSED_HEADERS = 'x-request-id, retry-after'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

const addVaryOrigin = (reply: FastifyReply): void => {
  const vary = reply.getHeader('vary')
  if (typeof vary === 'string' && /(^|,)\s*origin\s*(,|$)/i.test(vary)) return
  reply.header('vary', vary ? `${String(vary)}, Origin` : 'Origin')
}

/**
 * The request's Origin when the organisation of session `:id` allows it, exactly as sent (browsers send the
 * normalised form the list stores). An unknown session, a malformed id, a missing Origin, "null", and an origin
 * not in the list all answer undefined.
 */
async function allowedOrigin(request: FastifyRequest, origins: SessionOrigins): Promise<string | undefined> {
  const origin = request.headers.origin
  const id = (request.params as { id?: unknown } | undefined)?.id
  if (typeof origin !== 'string' || origin === 'null' || typeof id !== 'string' || !UUID.test(id)) return undefined
  return (await origins.allows(id.toLowerCase(), origin)) ? origin : undefined
}

/**
 * onSend of the session reads (every answer: 200, 401, 404, 410, 429 — the SDK must be able to read why a load
 * failed): Access-Control-Allow-Origin for an allowed origin only, never `*`, never credentials; Vary: Origin always.
 */
export function sessionReadCors(origins: SessionOrigins): onSendHookHandler {
  return async function cors(request, reply, payload) {
    addVaryOrigin(reply)
    const origin = await allowedOrigin(request, origins)
    if (origin) reply.header('access-control-allow-origin', origin).header('access-control-expose-headers', EXPOSED_HEADERS)
    return payload
  }
}

/**
 * OPTIONS of the session reads: 204 either way. For an allowed origin with the Allow-* headers and a Max-Age; for
 * any other origin, or an unknown session (the same lookup, the same answer), with none of them. Vary: Origin always.
 */
export function sessionReadPreflight(origins: SessionOrigins): RouteHandlerMethod {
  return async function preflight(request, reply) {
    addVaryOrigin(reply)
    const origin = await allowedOrigin(request, origins)
    if (origin) {
      reply
        .header('access-control-allow-origin', origin)
        .header('access-control-allow-methods', 'GET')
        .header('access-control-allow-headers', ALLOWED_REQUEST_HEADERS)
        .header('access-control-max-age', String(PREFLIGHT_MAX_AGE_SECONDS))
    }
    return reply.code(204).send()
  }
}
