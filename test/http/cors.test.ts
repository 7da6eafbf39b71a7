// CORS (issue 14, item 1): only the SDK's session reads answer it, and only for the origins the session's
// organisation allows (its own list, else its nearest ancestor's). Every API-key route answers no CORS at all.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { client, createTestApp, type Response, type TestApp } from '../helpers/app.js'
import { createOrg, floristQuote, importDemoCatalogue, type OrgFixture } from '../helpers/factories.js'

let t: TestApp
let merchant: OrgFixture
let parent: OrgFixture
let child: OrgFixture
let session: { sessionId: string; clientSecret: string; quoteId: string }
let checkout: { sessionId: string; clientSecret: string }
let childSession: { sessionId: string; clientSecret: string }

const SHOP = 'https://shop.example'
const PARENT_SHOP = 'https://bank.example'

const body = (organisationId: string) => {
  const { locale: _locale, ...quote } = floristQuote(organisationId)
  return quote
}
const create = async (org: OrgFixture, kind: 'post-purchase' | 'checkout' = 'post-purchase') => {
  const extra = kind === 'post-purchase' ? { sdkVariant: 'embedded' } : {}
  const res = await client(t.app, org.apiKey).post(`/v3/${kind}/sessions`, { ...body(org.organisationId), ...extra })
  expect(res.statusCode, res.body).toBe(200)
  return res.json()
}
const setOrigins = async (org: OrgFixture, allowedOrigins: string[] | null) => {
  const res = await client(t.app, org.apiKey).patch(`/v3/organisations/${org.organisationId}`, { allowedOrigins })
  expect(res.statusCode, res.body).toBe(200)
}

beforeAll(async () => {
  t = await createTestApp()
  await importDemoCatalogue(t.db)
  merchant = await createOrg(t.db)
  parent = await createOrg(t.db, { mcc: null })
  child = await createOrg(t.db, { parentId: parent.organisationId })
  await setOrigins(merchant, [SHOP, 'http://localhost:8080'])
  await setOrigins(parent, [PARENT_SHOP])
  session = await create(merchant)
  checkout = await create(merchant, 'checkout')
  childSession = await create(child)
})
afterAll(() => t.close())

const preflight = (id: string, origin: string | undefined, kind = 'post-purchase', prefix = '/v3') =>
  client(t.app).options(`${prefix}/${kind}/sessions/${id}`, {
    ...(origin === undefined ? {} : { origin }),
    'access-control-request-method': 'GET',
    'access-control-request-headers': 'authorization',
  })
const read = (id: string, secret: string, origin: string | undefined, kind = 'post-purchase') =>
  client(t.app, secret).get(`/v3/${kind}/sessions/${id}`, origin === undefined ? {} : { origin })

const corsHeaders = (res: Response) =>
  Object.fromEntries(Object.entries(res.headers).filter(([name]) => name.startsWith('access-control-') || name === 'vary'))
/** Everything but what differs per request, to compare two answers header for header. */
const comparable = (res: Response) => {
  const { 'x-request-id': _id, date: _date, 'x-ratelimit-remaining': _remaining, ...headers } = res.headers
  return { status: res.statusCode, headers, body: res.body }
}

const ALLOWED_PREFLIGHT = (origin: string) => ({
  'access-control-allow-origin': origin,
  'access-control-allow-methods': 'GET',
  'access-control-allow-headers': 'authorization',
  'access-control-max-age': '600',
  vary: 'Origin',
})

describe('preflight of a session read (OPTIONS)', () => {
  it.each([
    ['post-purchase', '/v3'],
    ['post-purchase', ''],
    ['checkout', '/v3'],
  ])('answers an allowed origin with 204 and exactly the Allow-* headers (%s, prefix "%s")', async (kind, prefix) => {
    const id = kind === 'checkout' ? checkout.sessionId : session.sessionId
    for (const origin of [SHOP, 'http://localhost:8080']) {
      const res = await preflight(id, origin, kind, prefix)
      expect(res.statusCode).toBe(204)
      expect(res.body).toBe('')
      expect(corsHeaders(res)).toEqual(ALLOWED_PREFLIGHT(origin))
    }
  })

  it('keeps Max-Age within what browsers honour (≤ 7200 s) and never allows credentials', async () => {
    const res = await preflight(session.sessionId, SHOP)
    expect(Number(res.headers['access-control-max-age'])).toBeLessThanOrEqual(7200)
    expect(res.headers['access-control-allow-credentials']).toBeUndefined()
  })

  it.each([
    ['another host', 'https://evil.example'],
    ['another scheme', 'http://shop.example'],
    ['another port', 'https://shop.example:8443'],
    ['a sub-domain', 'https://www.shop.example'],
    ['a different case (browsers send lower case)', 'https://SHOP.example'],
    ['a trailing slash', 'https://shop.example/'],
    ['the null origin', 'null'],
    ['a wildcard', '*'],
    ['no Origin at all', undefined],
    ["the parent's origin (the merchant has its own list)", PARENT_SHOP],
  ])('answers %s with 204, Vary: Origin and no Access-Control-Allow-* header', async (_label, origin) => {
    const res = await preflight(session.sessionId, origin)
    expect(res.statusCode).toBe(204)
    expect(corsHeaders(res)).toEqual({ vary: 'Origin' })
  })

  it('answers an unknown session exactly like a disallowed origin (same status, headers and body)', async () => {
    const unknown = await preflight(randomUUID(), SHOP)
    const disallowed = await preflight(session.sessionId, 'https://evil.example')
    expect(comparable(unknown)).toEqual(comparable(disallowed))
    expect(comparable(await preflight('not-a-uuid', SHOP))).toEqual(comparable(disallowed))
  })

  it("lets a child inherit its parent's list until it has its own; an empty list allows nothing", async () => {
    expect(corsHeaders(await preflight(childSession.sessionId, PARENT_SHOP))).toEqual(ALLOWED_PREFLIGHT(PARENT_SHOP))
    await setOrigins(child, ['https://child.example'])
    expect(corsHeaders(await preflight(childSession.sessionId, PARENT_SHOP))).toEqual({ vary: 'Origin' })
    expect(corsHeaders(await preflight(childSession.sessionId, 'https://child.example'))).toEqual(
      ALLOWED_PREFLIGHT('https://child.example'),
    )
    await setOrigins(child, [])
    expect(corsHeaders(await preflight(childSession.sessionId, PARENT_SHOP))).toEqual({ vary: 'Origin' })
    expect(corsHeaders(await preflight(childSession.sessionId, 'https://child.example'))).toEqual({ vary: 'Origin' })
    await setOrigins(child, null)
    expect(corsHeaders(await preflight(childSession.sessionId, PARENT_SHOP))).toEqual(ALLOWED_PREFLIGHT(PARENT_SHOP))
  })

  it('allows nothing when no organisation up the tree has a list', async () => {
    const bare = await createOrg(t.db)
    const bareSession = await create(bare)
    expect(corsHeaders(await preflight(bareSession.sessionId, SHOP))).toEqual({ vary: 'Origin' })
  })
})

describe('the session read itself (GET)', () => {
  it('adds Access-Control-Allow-Origin (and the headers the SDK reads) for an allowed origin, never credentials', async () => {
    const res = await read(session.sessionId, session.clientSecret, SHOP)
    expect(res.statusCode).toBe(200)
    expect(corsHeaders(res)).toEqual({
      'access-control-allow-origin': SHOP,
      'access-control-expose-headers': 'x-request-id, retry-after',
      vary: 'Origin',
    })
    const other = await read(checkout.sessionId, checkout.clientSecret, 'http://localhost:8080', 'checkout')
    expect(other.headers['access-control-allow-origin']).toBe('http://localhost:8080')
  })

  it('sends Vary: Origin and no Access-Control-* header to a disallowed origin or none (the body is the same)', async () => {
    const allowed = await read(session.sessionId, session.clientSecret, SHOP)
    for (const origin of ['https://evil.example', 'null', undefined]) {
      const res = await read(session.sessionId, session.clientSecret, origin)
      expect(res.statusCode).toBe(200)
      expect(corsHeaders(res)).toEqual({ vary: 'Origin' })
      expect(res.body).toBe(allowed.body)
    }
  })

  it('lets an allowed page read why a load failed: 401 (wrong secret), 404 (wrong kind) and 410 (expired)', async () => {
    const wrongSecret = await read(session.sessionId, checkout.clientSecret, SHOP)
    expect(wrongSecret.statusCode).toBe(401)
    expect(wrongSecret.headers['access-control-allow-origin']).toBe(SHOP)
    const wrongKind = await read(session.sessionId, merchant.apiKey, SHOP, 'checkout')
    expect(wrongKind.statusCode).toBe(404)
    expect(wrongKind.headers['access-control-allow-origin']).toBe(SHOP)
    const expiring = await create(merchant)
    t.clock.advance(t.config.SESSION_TTL_SECONDS * 1000)
    try {
      const expired = await read(expiring.sessionId, expiring.clientSecret, SHOP)
      expect(expired.statusCode).toBe(410)
      expect(expired.json().code).toBe('SESSION_EXPIRED')
      expect(corsHeaders(expired)).toMatchObject({ 'access-control-allow-origin': SHOP, vary: 'Origin' })
    } finally {
      t.clock.advance(-t.config.SESSION_TTL_SECONDS * 1000)
    }
  })

  it('gives an unknown session no Access-Control-Allow-Origin, like a disallowed origin', async () => {
    const res = await read(randomUUID(), session.clientSecret, SHOP)
    expect(res.statusCode).toBe(401)
    expect(corsHeaders(res)).toEqual({ vary: 'Origin' })
  })

  it('follows a PATCH of allowedOrigins at once in this process', async () => {
    const org = await createOrg(t.db)
    const s = await create(org)
    expect(corsHeaders(await preflight(s.sessionId, 'https://late.example'))).toEqual({ vary: 'Origin' })
    await setOrigins(org, ['https://late.example'])
    expect(corsHeaders(await preflight(s.sessionId, 'https://late.example'))).toEqual(ALLOWED_PREFLIGHT('https://late.example'))
    expect((await read(s.sessionId, s.clientSecret, 'https://late.example')).headers['access-control-allow-origin']).toBe(
      'https://late.example',
    )
  })
})

describe('API-key routes answer no CORS at all (an API key must never be usable from a web page)', () => {
  const apiKeyRoutes = () => [
    ['POST', '/quotes/carbon'],
    ['POST', '/v3/quotes/carbon'],
    ['GET', `/quotes/${session.quoteId}`],
    ['POST', '/funds/allocations'],
    ['GET', `/funds/allocations/${randomUUID()}`],
    ['POST', '/v3/organisations'],
    ['GET', `/v3/organisations/${merchant.organisationId}`],
    ['PATCH', `/v3/organisations/${merchant.organisationId}`],
    ['POST', '/v3/post-purchase/sessions'],
    ['POST', '/v3/checkout/sessions'],
  ]

  it('answers their preflights from an allowed origin with 404 and no Access-Control-* header', async () => {
    for (const [method, url] of apiKeyRoutes()) {
      const res = await client(t.app).options(url ?? '', {
        origin: SHOP,
        'access-control-request-method': method ?? 'GET',
        'access-control-request-headers': 'authorization, content-type',
      })
      expect(res.statusCode, `OPTIONS ${url}`).toBe(404)
      expect(res.json().code).toBe('NOT_FOUND')
      expect(
        Object.keys(res.headers).filter((name) => name.startsWith('access-control-')),
        `OPTIONS ${url}`,
      ).toEqual([])
    }
  })

  it('answers their requests from an allowed origin without any Access-Control-* header', async () => {
    for (const [method, url] of apiKeyRoutes()) {
      const res = await t.app.inject({
        method: method as 'GET',
        url: url ?? '',
        headers: { authorization: `Bearer ${merchant.apiKey}`, origin: SHOP },
        ...(method === 'GET' ? {} : { payload: {} }),
      })
      expect(
        Object.keys(res.headers).filter((name) => name.startsWith('access-control-')),
        `${method} ${url}`,
      ).toEqual([])
    }
  })
})

describe('rate limit', () => {
  it('applies to preflights like any request (per client address)', async () => {
    const limited = await createTestApp({ RATE_LIMIT_PER_MINUTE: '3' })
    try {
      const statuses: number[] = []
      for (let i = 0; i < 4; i++) {
        const res = await limited.app.inject({
          method: 'OPTIONS',
          url: `/v3/post-purchase/sessions/${randomUUID()}`,
          headers: { origin: SHOP, 'access-control-request-method': 'GET' },
          remoteAddress: '192.0.2.7',
        })
        statuses.push(res.statusCode)
        if (res.statusCode === 429) expect(res.headers['retry-after']).toBeDefined()
      }
      expect(statuses).toEqual([204, 204, 204, 429])
    } finally {
      await limited.close()
    }
  })
})
