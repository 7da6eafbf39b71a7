// The Hub's accounts and sessions over HTTP (issue 19, items 1–3): the roles matrix on every /hub/api route, cookie
// flags, CSRF refusals, enumeration-safe and throttled sign-in, idle and absolute expiry on the injected clock,
// sessions ended by a role change or removal, invitations and set-password links, TOTP with recovery codes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isPermitted, ROLES, type Permission } from '../../src/domain/permissions.js'
import { totpCode } from '../../src/services/hub/credentials.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { createOrg, type OrgFixture } from '../helpers/factories.js'
import { createHubUser, HUB_ORIGIN, hubClient, PASSWORD, signedIn, type HubClient } from '../helpers/hub.js'

let t: TestApp
let org: OrgFixture
let child: OrgFixture
const MINUTE = 60_000

beforeAll(async () => {
  t = await createTestApp({ TRUST_PROXY: '1', WEBHOOK_WORKER: 'false' })
  org = await createOrg(t.db)
  child = await createOrg(t.db, { parentId: org.organisationId })
})
afterAll(() => t.close())

const withoutId = (body: Record<string, unknown>) => {
  const { requestId: _, ...rest } = body
  return rest
}

describe('the roles matrix on every /hub/api route', () => {
  it('declares what each route needs: open (sign-in), any signed-in user (about themselves), or a permission', () => {
    expect(t.app.hubRoutes.length).toBeGreaterThan(30)
    const undeclared = t.app.hubRoutes.filter((r) => r.access === 'permission' && r.permission === undefined)
    expect(undeclared).toEqual([])
    expect(t.app.hubRoutes.filter((r) => r.access === 'open').map((r) => `${r.method} ${r.url}`)).toEqual([
      'POST /hub/api/sign-in',
      'POST /hub/api/sign-in/second-factor',
      'POST /hub/api/password-links/check',
      'POST /hub/api/password-links/use',
    ])
  })

  it('answers 403 PERMISSION_DENIED exactly where a role lacks the route’s permission, for every route and role', async () => {
    const tabs = Object.fromEntries(
      await Promise.all(
        ROLES.map(async (role) => [role, await signedIn(t.app, await createHubUser(t.db, org.organisationId, role))] as const),
      ),
    ) as Record<(typeof ROLES)[number], HubClient>
    const id = '00000000-0000-4000-8000-000000000000'
    const mismatches: string[] = []
    for (const route of t.app.hubRoutes.filter((r) => r.access === 'permission')) {
      const url = route.url.replace(/:[A-Za-z]+/g, id)
      for (const role of ROLES) {
        const res = await tabs[role].request(route.method, url, route.method === 'GET' || route.method === 'DELETE' ? undefined : {})
        const denied = res.statusCode === 403 && res.json().code === 'PERMISSION_DENIED'
        const expected = !isPermitted({ kind: 'user', role }, route.permission as Permission)
        if (denied !== expected) mismatches.push(`${role} ${route.method} ${route.url}: ${res.statusCode} ${res.body.slice(0, 80)}`)
      }
    }
    expect(mismatches).toEqual([])
  }, 120_000)

  it('lets an analyst read impact but refuses its keys, webhooks and settings; a developer manages webhooks but not keys', async () => {
    const analyst = await signedIn(t.app, await createHubUser(t.db, org.organisationId, 'analyst'))
    expect(
      (await analyst.get(`/hub/api/funds/allocations/impact?dateTimeFrom=2026-11-01T00:00:00Z&dateTimeTo=2026-11-30T00:00:00Z`)).statusCode,
    ).toBe(200)
    const refused = await analyst.get(`/hub/api/api-keys?organisationId=${org.organisationId}`)
    expect(refused.statusCode).toBe(403)
    expect(withoutId(refused.json())).toEqual({
      error: 'the analyst role may not do this (it needs apiKeys:read)',
      code: 'PERMISSION_DENIED',
    })
    const developer = await signedIn(t.app, await createHubUser(t.db, org.organisationId, 'developer'))
    expect((await developer.get(`/hub/api/api-keys?organisationId=${org.organisationId}`)).statusCode).toBe(200)
    expect((await developer.request('POST', '/hub/api/api-keys', { organisationId: org.organisationId })).statusCode).toBe(403)
    const patched = await developer.request('PATCH', `/hub/api/organisations/${org.organisationId}`, { requireSecondFactor: true })
    expect(patched.json()).toMatchObject({ code: 'PERMISSION_DENIED', details: [{ path: '/requireSecondFactor' }] })
    expect(
      (await developer.request('PATCH', `/hub/api/organisations/${org.organisationId}`, { allowedOrigins: ['https://shop.example'] }))
        .statusCode,
    ).toBe(200)
  })

  it('serves the API routes under /hub/api only to a session, never to an API key, and hides them from OpenAPI', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: `/hub/api/organisations/${org.organisationId}`,
      headers: { authorization: `Bearer ${org.apiKey}` },
    })
    expect(res.statusCode).toBe(401)
    const paths = Object.keys((await t.app.inject({ method: 'GET', url: '/openapi.json' })).json().paths)
    expect(paths.filter((p) => p.startsWith('/hub'))).toEqual([])
    expect(paths).toContain('/v3/audit-events')
  })
})

describe('sign-in', () => {
  it('sets an HttpOnly, SameSite=Lax, Path=/hub, host-only cookie, Secure when the request came over HTTPS', async () => {
    const user = await createHubUser(t.db, org.organisationId, 'admin')
    const plain = await hubClient(t.app).request('POST', '/hub/api/sign-in', { email: user.email, password: PASSWORD })
    expect(plain.statusCode).toBe(200)
    const cookie = String(plain.headers['set-cookie'])
    expect(cookie).toMatch(/^canopy_hub=[\w-]{43}; Path=\/hub; HttpOnly; SameSite=Lax$/)
    expect(plain.headers['cache-control']).toBe('no-store')
    const tls = await hubClient(t.app, { origin: 'https://canopy.example' }).request(
      'POST',
      '/hub/api/sign-in',
      { email: user.email, password: PASSWORD },
      { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'canopy.example', 'x-forwarded-for': '203.0.113.5' },
    )
    expect(tls.statusCode).toBe(200)
    expect(String(tls.headers['set-cookie'])).toMatch(/; Path=\/hub; HttpOnly; Secure; SameSite=Lax$/)
    expect(String(tls.headers['set-cookie'])).not.toMatch(/Domain/i)
  })

  it('answers an unknown e-mail, a wrong password and a user without a password alike', async () => {
    const user = await createHubUser(t.db, org.organisationId, 'developer')
    const invited = await createHubUser(t.db, org.organisationId, 'developer', { password: null })
    const answers = await Promise.all(
      [
        { email: 'nobody-here@example.com', password: PASSWORD },
        { email: user.email, password: 'not the password at all' },
        { email: invited.email, password: PASSWORD },
      ].map(async (body, i) => {
        const res = await hubClient(t.app, { remoteAddress: `198.51.100.${10 + i}` }).request('POST', '/hub/api/sign-in', body)
        return { status: res.statusCode, body: withoutId(res.json()), cookie: res.headers['set-cookie'] }
      }),
    )
    expect(answers[0]).toEqual({
      status: 401,
      body: { error: 'the e-mail address or the password is not right', code: 'INVALID_CREDENTIALS' },
      cookie: undefined,
    })
    expect(answers[1]).toEqual(answers[0])
    expect(answers[2]).toEqual(answers[0])
  })

  it('slows repeated failures per account (429 with Retry-After), never for good, and per address', async () => {
    const user = await createHubUser(t.db, org.organisationId, 'developer')
    const tab = hubClient(t.app, { remoteAddress: '198.51.100.77' })
    for (let i = 0; i < 5; i++)
      expect((await tab.request('POST', '/hub/api/sign-in', { email: user.email, password: 'wrong password!' })).statusCode).toBe(401)
    const throttled = await tab.request('POST', '/hub/api/sign-in', { email: user.email, password: PASSWORD })
    expect(throttled.statusCode).toBe(429)
    expect(throttled.json().code).toBe('SIGN_IN_THROTTLED')
    expect(throttled.headers['retry-after']).toBe('1')
    // An unknown e-mail is throttled the same way (nothing to tell them apart).
    for (let i = 0; i < 5; i++) await tab.request('POST', '/hub/api/sign-in', { email: 'ghost@example.com', password: 'wrong password!' })
    expect((await tab.request('POST', '/hub/api/sign-in', { email: 'ghost@example.com', password: 'x' })).statusCode).toBe(429)
    // Waiting is enough: the real user gets in.
    t.clock.advance(1_000)
    expect((await tab.request('POST', '/hub/api/sign-in', { email: user.email, password: PASSWORD })).statusCode).toBe(200)
    // The ladder tops out at 15 minutes.
    for (let i = 0; i < 30; i++) {
      await tab.request('POST', '/hub/api/sign-in', { email: user.email, password: 'wrong password!' })
      t.clock.advance(15 * MINUTE)
    }
    expect((await tab.request('POST', '/hub/api/sign-in', { email: user.email, password: PASSWORD })).statusCode).toBe(200)

    // Per address: twenty failures for different e-mails slow the next attempt from that address, not from others.
    const noisy = hubClient(t.app, { remoteAddress: '198.51.100.99' })
    for (let i = 0; i < 20; i++)
      await noisy.request('POST', '/hub/api/sign-in', { email: `probe${i}@example.com`, password: 'wrong password!' })
    expect((await noisy.request('POST', '/hub/api/sign-in', { email: user.email, password: PASSWORD })).statusCode).toBe(429)
    expect(
      (
        await hubClient(t.app, { remoteAddress: '198.51.100.100' }).request('POST', '/hub/api/sign-in', {
          email: user.email,
          password: PASSWORD,
        })
      ).statusCode,
    ).toBe(200)
  })
})

describe('CSRF', () => {
  it('refuses a state-changing request without this site’s Origin or without the session’s token', async () => {
    const admin = await signedIn(t.app, await createHubUser(t.db, org.organisationId, 'admin'))
    const body = { organisationId: org.organisationId }
    const cases: [string, Record<string, string>][] = [
      ['another origin', { origin: 'https://evil.example' }],
      ['no token', { 'x-csrf-token': '' }],
      ['a wrong token', { 'x-csrf-token': 'x'.repeat(43) }],
    ]
    for (const [label, headers] of cases) {
      const res = await admin.request('POST', '/hub/api/api-keys', body, headers)
      expect(res.statusCode, label).toBe(403)
      expect(res.json().code, label).toBe('CSRF_REFUSED')
    }
    const noOrigin = await t.app.inject({
      method: 'POST',
      url: '/hub/api/api-keys',
      payload: body,
      headers: { cookie: admin.cookie ?? '', 'x-csrf-token': admin.csrf ?? '' },
    })
    expect(noOrigin.json().code).toBe('CSRF_REFUSED')
    // Sign-in from another site's form is refused too.
    expect(
      (
        await hubClient(t.app, { origin: 'https://evil.example' }).request('POST', '/hub/api/sign-in', { email: 'a@b.c', password: 'x' })
      ).json().code,
    ).toBe('CSRF_REFUSED')
    expect((await admin.request('POST', '/hub/api/api-keys', body)).statusCode).toBe(201)
  })
})

describe('sessions', () => {
  it('end after 30 idle minutes and 12 hours in all, on the app’s clock', async () => {
    const user = await createHubUser(t.db, org.organisationId, 'analyst')
    const idle = await signedIn(t.app, user)
    t.clock.advance(29 * MINUTE)
    expect((await idle.get('/hub/api/session')).statusCode).toBe(200)
    t.clock.advance(29 * MINUTE)
    expect((await idle.get('/hub/api/session')).statusCode).toBe(200)
    t.clock.advance(30 * MINUTE)
    expect((await idle.get('/hub/api/session')).statusCode).toBe(401)

    const busy = await signedIn(t.app, user)
    for (let elapsed = 0; elapsed < 12 * 60 - 20; elapsed += 20) {
      t.clock.advance(20 * MINUTE)
      expect((await busy.get('/hub/api/session')).statusCode).toBe(200)
    }
    t.clock.advance(20 * MINUTE)
    expect((await busy.get('/hub/api/session')).statusCode).toBe(401)
  })

  it('end at once when the user changes role or is removed; sign-out and sign-out-everywhere end them too', async () => {
    const admin = await signedIn(t.app, await createHubUser(t.db, org.organisationId, 'admin'))
    const user = await createHubUser(t.db, org.organisationId, 'developer')
    const [a, b] = [await signedIn(t.app, user), await signedIn(t.app, user)]
    expect((await admin.request('PATCH', `/hub/api/users/${user.id}`, { role: 'analyst' })).json().role).toBe('analyst')
    expect((await a.get('/hub/api/session')).statusCode).toBe(401)
    expect((await b.get('/hub/api/session')).statusCode).toBe(401)
    const c = await signedIn(t.app, user)
    expect((await c.get('/hub/api/session')).json().user.role).toBe('analyst')
    expect((await admin.request('DELETE', `/hub/api/users/${user.id}`)).statusCode).toBe(204)
    expect((await c.get('/hub/api/session')).statusCode).toBe(401)
    expect((await hubClient(t.app).request('POST', '/hub/api/sign-in', { email: user.email, password: PASSWORD })).statusCode).toBe(401)

    const other = await createHubUser(t.db, org.organisationId, 'analyst')
    const [x, y] = [await signedIn(t.app, other), await signedIn(t.app, other)]
    expect((await x.request('POST', '/hub/api/sign-out')).statusCode).toBe(204)
    expect(x.cookie).toBeUndefined()
    expect((await y.get('/hub/api/session')).statusCode).toBe(200)
    const z = await signedIn(t.app, other)
    expect((await z.request('POST', '/hub/api/sign-out-everywhere')).statusCode).toBe(204)
    expect((await y.get('/hub/api/session')).statusCode).toBe(401)
  })

  it('refuses to leave an organisation without an admin', async () => {
    const solo = await createOrg(t.db, { parentId: org.organisationId })
    const only = await createHubUser(t.db, solo.organisationId, 'admin')
    const tab = await signedIn(t.app, only)
    const res = await tab.request('PATCH', `/hub/api/users/${only.id}`, { role: 'analyst' })
    expect(res.statusCode).toBe(409)
    expect(res.json().code).toBe('LAST_ADMIN')
  })
})

describe('invitations and set-password links', () => {
  it('invites a user (link shown once), refuses weak passwords, sets one once, and lets them sign in', async () => {
    const admin = await signedIn(t.app, await createHubUser(t.db, org.organisationId, 'admin'))
    const invited = await admin.request('POST', '/hub/api/users', {
      organisationId: child.organisationId,
      email: 'New.Person@Example.com',
      role: 'developer',
    })
    expect(invited.statusCode).toBe(201)
    const { user, setPasswordUrl, emailed } = invited.json()
    expect(user).toMatchObject({
      email: 'new.person@example.com',
      role: 'developer',
      status: 'invited',
      organisationId: child.organisationId,
    })
    expect(emailed).toBe(false)
    expect(setPasswordUrl).toMatch(new RegExp(`^${HUB_ORIGIN}/hub/set-password#token=[\\w-]{43}$`))
    const token = setPasswordUrl.split('#token=')[1]
    expect(
      (
        await admin.request('POST', '/hub/api/users', {
          organisationId: org.organisationId,
          email: 'new.person@example.com',
          role: 'analyst',
        })
      ).json().code,
    ).toBe('EMAIL_IN_USE')

    const open = hubClient(t.app)
    expect((await open.request('POST', '/hub/api/password-links/check', { token })).json()).toEqual({ email: 'new.person@example.com' })
    for (const [password, message] of [
      ['short one', 'must be at least 12 characters'],
      ['password1234', 'is a commonly used password; choose another'],
      ['new.person-rocks-2026', 'must not contain your e-mail address'],
      ['aaaaaaaaaaaaaaaa', 'must use more than a few different characters'],
    ] as const) {
      const weak = await open.request('POST', '/hub/api/password-links/use', { token, password })
      expect(weak.statusCode, password).toBe(400)
      expect(weak.json(), password).toMatchObject({ code: 'WEAK_PASSWORD', details: [{ path: '/password', message }] })
    }
    expect((await open.request('POST', '/hub/api/password-links/use', { token, password: PASSWORD })).statusCode).toBe(204)
    expect((await open.request('POST', '/hub/api/password-links/use', { token, password: PASSWORD })).json().code).toBe(
      'INVALID_PASSWORD_LINK',
    )
    const tab = await signedIn(t.app, { email: 'new.person@example.com', password: PASSWORD })
    expect((await tab.get('/hub/api/session')).json().user).toMatchObject({ status: 'active', role: 'developer' })
  })

  it('expires a link after 24 hours', async () => {
    const created = await createHubUser(t.db, org.organisationId, 'analyst', { password: null, now: t.clock.now() })
    const token = created.setPasswordUrl.split('#token=')[1]
    t.clock.advance(24 * 60 * MINUTE)
    expect((await hubClient(t.app).request('POST', '/hub/api/password-links/use', { token, password: PASSWORD })).json().code).toBe(
      'INVALID_PASSWORD_LINK',
    )
  })
})

describe('TOTP', () => {
  it('enrols with a first code, then asks for a code (each used once) or a recovery code (each used once) at sign-in', async () => {
    const user = await createHubUser(t.db, org.organisationId, 'developer')
    const tab = await signedIn(t.app, user)
    const enrolment = (await tab.request('POST', '/hub/api/me/second-factor/enrolment')).json()
    expect(enrolment.otpauthUri).toMatch(
      /^otpauth:\/\/totp\/Canopy%20Hub:.+\?issuer=Canopy%20Hub&secret=[A-Z2-7]+&algorithm=SHA1&digits=6&period=30$/,
    )
    expect(enrolment.qrCode).toMatch(/^data:image\/svg\+xml;base64,/)
    expect((await tab.request('POST', '/hub/api/me/second-factor/enrolment/confirm', { code: '000000' })).json().code).toBe(
      'INVALID_SECOND_FACTOR',
    )
    const confirmed = await tab.request('POST', '/hub/api/me/second-factor/enrolment/confirm', {
      code: totpCode(enrolment.secret, t.clock.now()),
    })
    expect(confirmed.statusCode).toBe(200)
    const { recoveryCodes } = confirmed.json()
    expect(recoveryCodes).toHaveLength(10)
    expect(recoveryCodes[0]).toMatch(/^[a-z2-9]{5}-[a-z2-9]{5}$/)

    const signIn = async () => {
      const next = hubClient(t.app)
      const res = await next.request('POST', '/hub/api/sign-in', { email: user.email, password: PASSWORD })
      expect(res.json()).toEqual({ next: 'second_factor' })
      // Only the password: not signed in yet.
      expect((await next.get('/hub/api/session')).statusCode).toBe(401)
      return next
    }
    t.clock.advance(30_000)
    const second = await signIn()
    expect((await second.request('POST', '/hub/api/sign-in/second-factor', { code: '123456' })).json().code).toBe('INVALID_SECOND_FACTOR')
    const code = totpCode(enrolment.secret, t.clock.now())
    const before = second.cookie
    expect((await second.request('POST', '/hub/api/sign-in/second-factor', { code })).json()).toEqual({ next: 'done' })
    expect(second.cookie).not.toBe(before)
    expect((await second.get('/hub/api/session')).json().user.secondFactor).toBe(true)
    // The same code again (a replay) is refused.
    const replay = await signIn()
    expect((await replay.request('POST', '/hub/api/sign-in/second-factor', { code })).json().code).toBe('INVALID_SECOND_FACTOR')
    // A recovery code works once.
    const recovery = await signIn()
    expect(
      (await recovery.request('POST', '/hub/api/sign-in/second-factor', { recoveryCode: recoveryCodes[3].toUpperCase() })).statusCode,
    ).toBe(200)
    const again = await signIn()
    expect((await again.request('POST', '/hub/api/sign-in/second-factor', { recoveryCode: recoveryCodes[3] })).json().code).toBe(
      'INVALID_SECOND_FACTOR',
    )

    const types = (
      await signedIn(t.app, await createHubUser(t.db, org.organisationId, 'admin')).then((admin) =>
        admin.get(`/hub/api/audit-events?actorId=${user.id}&limit=100`),
      )
    )
      .json()
      .data.map((e: { type: string }) => e.type)
    expect(types).toEqual(
      expect.arrayContaining(['user.second_factor_enabled', 'user.signed_in', 'user.sign_in_failed', 'user.recovery_code_used']),
    )
  })

  it('makes a user of an organisation that requires it enrol before anything else', async () => {
    const strict = await createOrg(t.db, { parentId: org.organisationId })
    const rootAdmin = await signedIn(t.app, await createHubUser(t.db, org.organisationId, 'admin'))
    expect(
      (await rootAdmin.request('PATCH', `/hub/api/organisations/${strict.organisationId}`, { requireSecondFactor: true })).json()
        .requireSecondFactor,
    ).toBe(true)
    const user = await createHubUser(t.db, strict.organisationId, 'admin')
    const tab = hubClient(t.app)
    expect((await tab.request('POST', '/hub/api/sign-in', { email: user.email, password: PASSWORD })).json()).toEqual({
      next: 'enrol_second_factor',
    })
    const session = (await tab.get('/hub/api/session')).json()
    expect(session).toMatchObject({ stage: 'enrol_second_factor', secondFactorRequired: true })
    tab.csrf = session.csrfToken
    expect((await tab.get(`/hub/api/api-keys?organisationId=${strict.organisationId}`)).json().code).toBe(
      'SECOND_FACTOR_ENROLMENT_REQUIRED',
    )
    const { secret } = (await tab.request('POST', '/hub/api/me/second-factor/enrolment')).json()
    expect(
      (await tab.request('POST', '/hub/api/me/second-factor/enrolment/confirm', { code: totpCode(secret, t.clock.now()) })).statusCode,
    ).toBe(200)
    expect((await tab.get(`/hub/api/api-keys?organisationId=${strict.organisationId}`)).statusCode).toBe(200)
    t.clock.advance(30_000)
    const off = await tab.request('POST', '/hub/api/me/second-factor/disable', { code: totpCode(secret, t.clock.now()) })
    expect(off.json().code).toBe('SECOND_FACTOR_REQUIRED_BY_ORGANISATION')
  })
})

describe('the audit log of sign-ins', () => {
  it('records sign-ins and failed sign-ins with the client address read through TRUST_PROXY', async () => {
    const user = await createHubUser(t.db, org.organisationId, 'admin')
    await hubClient(t.app).request(
      'POST',
      '/hub/api/sign-in',
      { email: user.email, password: 'wrong password!' },
      { 'x-forwarded-for': '203.0.113.50' },
    )
    const tab = await signedIn(t.app, user)
    const events = (await tab.get(`/hub/api/audit-events?actorId=${user.id}`)).json().data
    expect(events.map((e: { type: string; ip: string }) => [e.type, e.ip])).toEqual([
      ['user.signed_in', '127.0.0.1'],
      ['user.sign_in_failed', '203.0.113.50'],
      ['user.password_set', '127.0.0.1'],
    ])
  })
})
