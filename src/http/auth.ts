// Bearer authentication: the token is hashed once per request (the rate limiter keys on the hash too).
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify'
import { unauthorized } from '../errors.js'
import type { AccessResolver, Principal } from '../services/access.js'
import { API_KEY_PATTERN } from '../services/api-keys.js'

declare module 'fastify' {
  interface FastifyRequest {
    bearerToken: string | undefined
    /** SHA-256 of the bearer token, computed once per request (auth and the rate limiter use it). */
    bearerTokenHash: Buffer | undefined
    principal: Principal | undefined
  }
}

const BEARER = /^Bearer ([\x21-\x7e]{1,512})$/

export function readBearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization
  if (typeof header !== 'string') return undefined
  return BEARER.exec(header)?.[1]
}

export function requireApiKey(access: AccessResolver): onRequestHookHandler {
  return async function authenticate(request: FastifyRequest, _reply: FastifyReply) {
    const token = request.bearerToken
    if (!token || !request.bearerTokenHash || !API_KEY_PATTERN.test(token)) throw unauthorized()
    const principal = await access.authenticate(request.bearerTokenHash)
    if (!principal) throw unauthorized()
    request.principal = principal
  }
}

export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw unauthorized()
  return request.principal
}
