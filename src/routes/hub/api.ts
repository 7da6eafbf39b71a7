// The Hub's API (/hub/api): sign-in and set-password (no session yet: the Origin check only), the session and the
// second factor of the signed-in user, users, and every route plugin of the public API again, behind the Hub's
// cookie session and CSRF defence instead of an API key (same schemas, services and permissions).
import cookie from '@fastify/cookie'
import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { principalOf } from '../../http/auth.js'
import { assertSameOrigin, clearSessionCookie, hubOf, requireHubSession, sessionToken, setSessionCookie } from '../../http/hub-session.js'
import { presentHubUser } from '../../http/presenters/hub.js'
import { errorResponses, IdParamsSchema } from '../../http/schemas/common.js'
import {
  ChangeRoleBodySchema,
  CodeBodySchema,
  EnrolmentSchema,
  HubSessionSchema,
  HubUserSchema,
  InvitedUserSchema,
  InviteUserBodySchema,
  PasswordLinkBodySchema,
  PasswordLinkSchema,
  RecoveryCodesSchema,
  SecondFactorBodySchema,
  SetPasswordBodySchema,
  SignInBodySchema,
  SignInResultSchema,
  UserListQuerySchema,
  UserListSchema,
} from '../../http/schemas/hub.js'
import { findTotpRequired } from '../../db/repositories/organisations.js'
import { permissionsOf } from '../../domain/permissions.js'
import {
  completeSecondFactor,
  confirmTotpEnrolment,
  disableTotp,
  regenerateRecoveryCodes,
  signIn,
  signOut,
  signOutEverywhere,
  startTotpEnrolment,
  type SignInDeps,
  type StartedSession,
} from '../../services/hub/sign-in.js'
import {
  changeUserRole,
  inviteUser,
  listUsers,
  passwordLinkEmail,
  removeUser,
  setPasswordWithLink,
  type UserDeps,
} from '../../services/hub/users.js'

/** Registers one route plugin of the public API on a scope (src/app.ts lists them). */
export type ApiRoutePlugin = (scope: FastifyInstance) => Promise<unknown>

export interface HubApiOptions {
  signIn: SignInDeps
  users: UserDeps
  /** The origin of PUBLIC_BASE_URL: Hub pages may also send from it. */
  publicOrigin: string
  apiRoutes: readonly ApiRoutePlugin[]
  /** Reads only the Hub's pages use (src/routes/hub/insights.ts), behind the same session. */
  hubRoutes: readonly ApiRoutePlugin[]
  /** Filled with the routes as they are registered (the app exposes it as app.hubRoutes). */
  routes: HubRoute[]
}

const noStore = { 'cache-control': 'no-store' }
const OPEN_ROUTES = new Set(['/sign-in', '/sign-in/second-factor', '/password-links/check', '/password-links/use'])
const next = (started: StartedSession) =>
  started.session.stage === 'second_factor'
    ? 'second_factor'
    : started.session.stage === 'enrol_second_factor'
      ? 'enrol_second_factor'
      : 'done'

/** A route of /hub/api and what it asks of the user (listed for tests and docs: every one declares something). */
export interface HubRoute {
  method: string
  url: string
  permission: string | undefined
  access: 'open' | 'any role' | 'permission'
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The routes under /hub/api, as registered. */
    hubRoutes: HubRoute[]
  }
}

const hubApiRoutes: FastifyPluginAsyncTypebox<HubApiOptions> = async (app, options) => {
  await app.register(cookie)
  const routes = options.routes
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    const config = (route.config ?? {}) as { permission?: string; anyRole?: true }
    for (const method of methods) {
      if (method === 'HEAD') continue
      routes.push({
        method,
        url: route.url,
        permission: config.permission,
        access: OPEN_ROUTES.has(route.url.replace(/^\/hub\/api/, '')) ? 'open' : config.anyRole ? 'any role' : 'permission',
      })
    }
  })
  const { signIn: signInDeps, users: userDeps, publicOrigin } = options
  const common = { tags: ['hub'] }
  const client = (request: { ip: string; headers: Record<string, unknown> }) => ({
    ip: request.ip,
    userAgent: typeof request.headers['user-agent'] === 'string' ? request.headers['user-agent'] : null,
  })

  // Without a session: the Origin check is their CSRF defence (a sign-in from another site's form is refused).
  await app.register(async (scope) => {
    const open = scope.withTypeProvider<TypeBoxTypeProvider>()
    open.addHook('onRequest', async (request) => assertSameOrigin(request, publicOrigin))

    open.post(
      '/sign-in',
      {
        schema: {
          ...common,
          body: SignInBodySchema,
          response: {
            200: SignInResultSchema,
            ...errorResponses('BAD_REQUEST', 'INVALID_CREDENTIALS', 'SIGN_IN_THROTTLED', 'CSRF_REFUSED'),
          },
        },
      },
      async (request, reply) => {
        const started = await signIn(signInDeps, { ...request.body, ...client(request) })
        setSessionCookie(request, reply, started.token)
        return reply.headers(noStore).send({ next: next(started) })
      },
    )

    open.post(
      '/sign-in/second-factor',
      {
        schema: {
          ...common,
          body: SecondFactorBodySchema,
          response: {
            200: SignInResultSchema,
            ...errorResponses('BAD_REQUEST', 'UNAUTHORIZED', 'INVALID_SECOND_FACTOR', 'SIGN_IN_THROTTLED', 'CSRF_REFUSED'),
          },
        },
      },
      async (request, reply) => {
        const started = await completeSecondFactor(signInDeps, sessionToken(request) ?? '', { ...request.body, ...client(request) })
        setSessionCookie(request, reply, started.token)
        return reply.headers(noStore).send({ next: 'done' as const })
      },
    )

    open.post(
      '/password-links/check',
      {
        schema: {
          ...common,
          body: PasswordLinkBodySchema,
          response: { 200: PasswordLinkSchema, ...errorResponses('BAD_REQUEST', 'INVALID_PASSWORD_LINK') },
        },
      },
      async (request) => ({ email: await passwordLinkEmail(userDeps, request.body.token) }),
    )

    open.post(
      '/password-links/use',
      {
        schema: {
          ...common,
          body: SetPasswordBodySchema,
          response: { 204: { type: 'null' }, ...errorResponses('BAD_REQUEST', 'INVALID_PASSWORD_LINK', 'WEAK_PASSWORD', 'CSRF_REFUSED') },
        },
      },
      async (request, reply) => {
        await setPasswordWithLink(userDeps, { ...request.body, ip: request.ip })
        return reply.code(204).send()
      },
    )
  })

  // With a session.
  await app.register(async (scope) => {
    const signedIn = scope.withTypeProvider<TypeBoxTypeProvider>()
    signedIn.addHook('onRequest', requireHubSession(signInDeps, publicOrigin))
    const self = { anyRole: true, duringEnrolment: true } as const

    signedIn.get(
      '/session',
      { config: self, schema: { ...common, response: { 200: HubSessionSchema, ...errorResponses('UNAUTHORIZED') } } },
      async (request, reply) => {
        const { session, user } = hubOf(request)
        return reply.headers(noStore).send({
          user: presentHubUser(user),
          stage: session.stage === 'enrol_second_factor' ? ('enrol_second_factor' as const) : ('active' as const),
          csrfToken: session.csrfToken,
          permissions: permissionsOf({ kind: 'user', role: user.role }),
          secondFactorRequired: await findTotpRequired(signInDeps.db, user.organisationId),
          expiresAt: session.expiresAt.toISOString(),
        })
      },
    )

    signedIn.post(
      '/sign-out',
      { config: self, schema: { ...common, response: { 204: { type: 'null' }, ...errorResponses('UNAUTHORIZED', 'CSRF_REFUSED') } } },
      async (request, reply) => {
        const { session, user } = hubOf(request)
        await signOut(signInDeps, principalOf(request), session.id, user.organisationId)
        clearSessionCookie(request, reply)
        return reply.code(204).send()
      },
    )

    signedIn.post(
      '/sign-out-everywhere',
      { config: self, schema: { ...common, response: { 204: { type: 'null' }, ...errorResponses('UNAUTHORIZED', 'CSRF_REFUSED') } } },
      async (request, reply) => {
        await signOutEverywhere(signInDeps, principalOf(request), hubOf(request).user)
        clearSessionCookie(request, reply)
        return reply.code(204).send()
      },
    )

    signedIn.post(
      '/me/second-factor/enrolment',
      {
        config: self,
        schema: {
          ...common,
          response: { 200: EnrolmentSchema, ...errorResponses('UNAUTHORIZED', 'CSRF_REFUSED', 'SECOND_FACTOR_ALREADY_ENABLED') },
        },
      },
      async (request, reply) => reply.headers(noStore).send(await startTotpEnrolment(signInDeps, hubOf(request).user)),
    )

    signedIn.post(
      '/me/second-factor/enrolment/confirm',
      {
        config: self,
        schema: {
          ...common,
          body: CodeBodySchema,
          response: { 200: RecoveryCodesSchema, ...errorResponses('BAD_REQUEST', 'UNAUTHORIZED', 'CSRF_REFUSED', 'INVALID_SECOND_FACTOR') },
        },
      },
      async (request, reply) => {
        const { session, user } = hubOf(request)
        const recoveryCodes = await confirmTotpEnrolment(signInDeps, principalOf(request), user, session, request.body.code)
        return reply.headers(noStore).send({ recoveryCodes })
      },
    )

    signedIn.post(
      '/me/second-factor/disable',
      {
        config: { anyRole: true },
        schema: {
          ...common,
          body: SecondFactorBodySchema,
          response: {
            204: { type: 'null' },
            ...errorResponses(
              'BAD_REQUEST',
              'UNAUTHORIZED',
              'CSRF_REFUSED',
              'INVALID_SECOND_FACTOR',
              'SECOND_FACTOR_REQUIRED_BY_ORGANISATION',
            ),
          },
        },
      },
      async (request, reply) => {
        await disableTotp(signInDeps, principalOf(request), hubOf(request).user, request.body)
        return reply.code(204).send()
      },
    )

    signedIn.post(
      '/me/recovery-codes',
      {
        config: { anyRole: true },
        schema: {
          ...common,
          body: CodeBodySchema,
          response: { 200: RecoveryCodesSchema, ...errorResponses('BAD_REQUEST', 'UNAUTHORIZED', 'CSRF_REFUSED', 'INVALID_SECOND_FACTOR') },
        },
      },
      async (request, reply) =>
        reply
          .headers(noStore)
          .send({ recoveryCodes: await regenerateRecoveryCodes(signInDeps, principalOf(request), hubOf(request).user, request.body.code) }),
    )

    signedIn.get(
      '/users',
      {
        config: { permission: 'users:read' },
        schema: {
          ...common,
          querystring: UserListQuerySchema,
          response: { 200: UserListSchema, ...errorResponses('BAD_REQUEST', 'UNAUTHORIZED', 'FORBIDDEN', 'PERMISSION_DENIED') },
        },
      },
      async (request) => ({ data: (await listUsers(userDeps, principalOf(request), request.query.organisationId)).map(presentHubUser) }),
    )

    signedIn.post(
      '/users',
      {
        config: { permission: 'users:write' },
        schema: {
          ...common,
          body: InviteUserBodySchema,
          response: {
            201: InvitedUserSchema,
            ...errorResponses('BAD_REQUEST', 'UNAUTHORIZED', 'FORBIDDEN', 'PERMISSION_DENIED', 'CSRF_REFUSED', 'EMAIL_IN_USE'),
          },
        },
      },
      async (request, reply) => {
        const created = await inviteUser(userDeps, principalOf(request), request.body)
        return reply
          .code(201)
          .headers(noStore)
          .send({ user: presentHubUser(created.user), setPasswordUrl: created.setPasswordUrl, emailed: created.emailed })
      },
    )

    signedIn.patch(
      '/users/:id',
      {
        config: { permission: 'users:write' },
        schema: {
          ...common,
          params: IdParamsSchema,
          body: ChangeRoleBodySchema,
          response: {
            200: HubUserSchema,
            ...errorResponses('BAD_REQUEST', 'UNAUTHORIZED', 'NOT_FOUND', 'PERMISSION_DENIED', 'CSRF_REFUSED', 'LAST_ADMIN'),
          },
        },
      },
      async (request) => presentHubUser(await changeUserRole(userDeps, principalOf(request), request.params.id, request.body.role)),
    )

    signedIn.delete(
      '/users/:id',
      {
        config: { permission: 'users:write' },
        schema: {
          ...common,
          params: IdParamsSchema,
          response: {
            204: { type: 'null' },
            ...errorResponses('BAD_REQUEST', 'UNAUTHORIZED', 'NOT_FOUND', 'PERMISSION_DENIED', 'CSRF_REFUSED', 'LAST_ADMIN'),
          },
        },
      },
      async (request, reply) => {
        await removeUser(userDeps, principalOf(request), request.params.id)
        return reply.code(204).send()
      },
    )

    // The public API's routes, for the signed-in user, and the Hub's own reads.
    for (const register of [...options.apiRoutes, ...options.hubRoutes]) await register(scope)
  })
}

export default hubApiRoutes
