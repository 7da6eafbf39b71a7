// The Hub's browser session: a cookie naming a server-side session, and the CSRF defence of every state-changing
// request (the Origin must be this site's, and the session's CSRF token must come in the x-csrf-token header).
import { timingSafeEqual } from 'node:crypto'
import type {} from '@fastify/cookie'
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify'
import type { HubSession, User } from '../db/repositories/users.js'
import { AppError } from '../errors.js'
import { sessionOfToken, userPrincipal, type SignInDeps } from '../services/hub/sign-in.js'
import { assertPermitted } from './auth.js'

export const HUB_COOKIE = 'canopy_hub'
export const CSRF_HEADER = 'x-csrf-token'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Any signed-in Hub user may use the route, about themselves (their session, their second factor). */
    anyRole?: true
    /** Open to a session that may only enrol a second factor (the organisation requires one). */
    duringEnrolment?: true
  }
  interface FastifyRequest {
    /** The Hub session and its user, on /hub/api routes behind requireHubSession. */
    hub: { session: HubSession; user: User } | undefined
  }
}

/**
 * HttpOnly (no script reads it), SameSite=Lax (not sent on cross-site subrequests or posts), Path=/hub (the API's
 * other routes never see it), host-only (no Domain), and Secure whenever the request came over HTTPS (through a
 * proxy: TRUST_PROXY and X-Forwarded-Proto).
 */
export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, token: string): void {
  reply.setCookie(HUB_COOKIE, token, { path: '/hub', httpOnly: true, sameSite: 'lax', secure: request.protocol === 'https' })
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.clearCookie(HUB_COOKIE, { path: '/hub', httpOnly: true, sameSite: 'lax', secure: request.protocol === 'https' })
}

export const sessionToken = (request: FastifyRequest): string | undefined => request.cookies[HUB_COOKIE] || undefined

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

const csrfRefused = (why: string) => new AppError('CSRF_REFUSED', `request refused: ${why}`)

/** The origins a Hub page may send from: the request's own (Host, through TRUST_PROXY) and PUBLIC_BASE_URL's. */
export function assertSameOrigin(request: FastifyRequest, publicOrigin: string): void {
  if (SAFE_METHODS.has(request.method)) return
  const origin = request.headers.origin
  if (typeof origin !== 'string') throw csrfRefused('it has no Origin header')
  const own = `${request.protocol}://${request.host}`
  if (origin !== own && origin !== publicOrigin) throw csrfRefused('it comes from another site')
}

function assertCsrfToken(request: FastifyRequest, expected: string): void {
  if (SAFE_METHODS.has(request.method)) return
  const sent = request.headers[CSRF_HEADER]
  const a = Buffer.from(typeof sent === 'string' ? sent : '')
  const b = Buffer.from(expected)
  if (a.length !== b.length || !timingSafeEqual(a, b)) throw csrfRefused('the csrf token is missing or wrong')
}

/**
 * Routes under /hub/api: a signed-in user (401 otherwise), same-origin with the session's CSRF token on anything that
 * changes state (403 CSRF_REFUSED), allowed by their role (403 PERMISSION_DENIED). The route plugins of the public
 * API registered here then see the user as their principal (requireApiKey lets it through).
 */
export function requireHubSession(deps: SignInDeps, publicOrigin: string): onRequestHookHandler {
  return async function authenticateHubSession(request) {
    assertSameOrigin(request, publicOrigin)
    const token = sessionToken(request)
    const found = token ? await sessionOfToken(deps, token) : undefined
    if (!found || found.session.stage === 'second_factor') throw new AppError('UNAUTHORIZED', 'sign in to the hub')
    assertCsrfToken(request, found.session.csrfToken)
    const config = request.routeOptions.config
    if (found.session.stage === 'enrol_second_factor' && !config.duringEnrolment) {
      throw new AppError('SECOND_FACTOR_ENROLMENT_REQUIRED', 'your organisation requires a second factor: set it up first')
    }
    const principal = userPrincipal(found.user, found.session.id, request.ip)
    if (!config.anyRole) assertPermitted(principal, config.permission)
    request.principal = principal
    request.hub = found
    request.hubSessionId = found.session.id
  }
}

export function hubOf(request: FastifyRequest): { session: HubSession; user: User } {
  if (!request.hub) throw new AppError('UNAUTHORIZED', 'sign in to the hub')
  return request.hub
}
