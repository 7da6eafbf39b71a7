// Bearer authentication. The token is read and hashed once per request (the rate limiter keys on the hash
// too); an API key resolves to a principal, a session's client secret is checked by the session read itself.
// Every route says which permission it needs (`config: { permission }`, src/domain/permissions.ts); the same route
// plugins are also served under /hub/api, where the Hub's session (src/http/hub-session.ts) has already
// authenticated a user before requireApiKey runs.
import type { FastifyRequest, onRequestHookHandler } from 'fastify'
import { isPermitted, type Permission } from '../domain/permissions.js'
import { AppError, unauthorized } from '../errors.js'
import { apiKeyPrincipal as principalOfKey, ipNotAllowed, type AccessResolver, type Principal } from '../services/access.js'
import { API_KEY_PATTERN, sha256Hex } from '../services/api-keys.js'
import { CLIENT_SECRET_PATTERN, sessionUnauthorized, type SessionCredential } from '../services/sessions.js'

declare module 'fastify' {
  interface FastifyRequest {
    bearerToken: string | undefined
    /** SHA-256 of the bearer token as hex, computed once per request (auth and the rate limiter use it). */
    bearerTokenHash: string | undefined
    principal: Principal | undefined
    /** Set when a Hub session authenticated the request (routes under /hub/api). */
    hubSessionId: string | undefined
  }
  interface FastifyContextConfig {
    /** What the route needs (src/domain/permissions.ts); none = API keys only. */
    permission?: Permission
  }
}

/** PERMISSION_DENIED unless the caller's key or role allows the route's permission. */
export function assertPermitted(principal: Principal, permission: Permission | undefined): void {
  const { actor } = principal
  if (actor.type === 'operator') return
  const grantee = actor.type === 'user' ? { kind: 'user' as const, role: actor.role } : { kind: 'apiKey' as const }
  if (isPermitted(grantee, permission)) return
  const role = actor.type === 'user' ? `the ${actor.role} role` : 'an api key'
  throw new AppError('PERMISSION_DENIED', `${role} may not do this${permission ? ` (it needs ${permission})` : ''}`)
}

// The scheme name is case-insensitive (RFC 7235).
const BEARER = /^Bearer ([\x21-\x7e]{1,512})$/i

/** Reads the bearer token (and its hash) of every request, before routing. */
export const readBearerToken: onRequestHookHandler = (request, _reply, done) => {
  const header = request.headers.authorization
  request.bearerToken = typeof header === 'string' ? BEARER.exec(header)?.[1] : undefined
  if (request.bearerToken) request.bearerTokenHash = sha256Hex(request.bearerToken)
  done()
}

/** The request's API key if it has one that looks like a key: its hash, else undefined (then it is unauthorized). */
const apiKeyHashOf = (request: FastifyRequest): string | undefined => {
  const token = request.bearerToken
  return token && request.bearerTokenHash && API_KEY_PATTERN.test(token) ? request.bearerTokenHash : undefined
}

/**
 * The principal of the request's API key; undefined when there is none or it is not a valid key. A valid key used
 * from an address its organisation's IP allowlist refuses is IP_NOT_ALLOWED.
 */
async function apiKeyPrincipal(request: FastifyRequest, access: AccessResolver): Promise<Principal | undefined> {
  const keyHash = apiKeyHashOf(request)
  if (!keyHash) return undefined
  const key = await access.authenticate(keyHash)
  if (!key) return undefined
  const principal = principalOfKey(key, request.ip)
  await access.assertIpAllowed(principal)
  return principal
}

/**
 * apiKeyPrincipal's answer when the key and its organisation's IP allowlist are cached, without a promise (most
 * requests): the principal, null for no valid key, an AppError for a refused address; undefined when it takes a read.
 */
function cachedApiKeyPrincipal(request: FastifyRequest, access: AccessResolver): Principal | null | AppError | undefined {
  const keyHash = apiKeyHashOf(request)
  if (!keyHash) return null
  const key = access.cachedAuthentication(keyHash)
  if (!key) return key
  const ip = request.ip
  const allowed = access.cachedIpAllowed(key.organisationId, ip)
  if (allowed === undefined) return undefined
  return allowed ? principalOfKey(key, ip) : ipNotAllowed()
}

/**
 * Routes for merchant backends: a valid API key (401 otherwise, one body whatever the reason) allowed the route's
 * permission. Under /hub/api the Hub's session has authenticated the user already (and checked the permission).
 * A callback hook: a key found in the cache is checked without a promise.
 */
export function requireApiKey(access: AccessResolver): onRequestHookHandler {
  return function authenticate(request, _reply, done) {
    if (request.hubSessionId !== undefined) return done()
    const settle = (found: Principal | null | undefined | AppError) => {
      if (found instanceof AppError) return done(found)
      if (!found) return done(unauthorized())
      try {
        assertPermitted(found, request.routeOptions.config.permission)
      } catch (error) {
        return done(error as AppError)
      }
      request.principal = found
      done()
    }
    const cached = cachedApiKeyPrincipal(request, access)
    if (cached !== undefined) return settle(cached)
    apiKeyPrincipal(request, access).then(settle, done)
  }
}

const looksLikeSecret = (name: string, value: unknown): boolean =>
  /secret/i.test(name) || (typeof value === 'string' && value.startsWith('cs_'))

/**
 * Session reads: the session's client secret (checked against the session by the service) or a merchant API
 * key. A secret in the query string is refused outright, before anything else: URLs end up in proxy logs and
 * browser history.
 */
export function requireSessionCredential(access: AccessResolver): onRequestHookHandler {
  return async function authenticate(request) {
    const query = request.query as Record<string, unknown>
    if (Object.entries(query).some(([name, value]) => looksLikeSecret(name, value))) {
      throw new AppError('SECRET_IN_QUERY', 'a client secret is accepted only in the authorization header, never in the query string', [
        { path: '/querystring', message: 'must not contain a client secret' },
      ])
    }
    if (request.bearerToken && CLIENT_SECRET_PATTERN.test(request.bearerToken)) return
    const principal = await apiKeyPrincipal(request, access)
    if (!principal) throw sessionUnauthorized()
    request.principal = principal
  }
}

export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw unauthorized()
  return request.principal
}

export function sessionCredentialOf(request: FastifyRequest): SessionCredential {
  return request.principal
    ? { kind: 'api-key', principal: request.principal }
    : { kind: 'client-secret', secret: request.bearerToken ?? '' }
}
