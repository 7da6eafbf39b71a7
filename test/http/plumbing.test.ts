import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { client, createTestApp, type TestApp } from '../helpers/app.js'
import { createOrg, type OrgFixture } from '../helpers/factories.js'

let t: TestApp
let org: OrgFixture

beforeAll(async () => {
  t = await createTestApp(
    { RATE_LIMIT_PER_MINUTE: '5' },
    {
      captureLogs: true,
      beforeReady: (app) =>
        app.get('/__boom', { schema: { hide: true } }, async () => {
          throw new Error('secret internals: password=hunter2')
        }),
    },
  )
  org = await createOrg(t.db)
})
afterAll(() => t.close())

const errorShape = { error: expect.any(String), code: expect.stringMatching(/^[A-Z_]+$/), requestId: expect.any(String) }

describe('error shape', () => {
  it('unknown route → 404 in the error shape', async () => {
    const res = await t.app.inject({ url: '/nope' })
    expect(res.statusCode).toBe(404)
    expect(res.json()).toEqual({ ...errorShape, code: 'NOT_FOUND' })
  })

  it('non-JSON body → 415', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v3/organisations',
      payload: 'hello',
      headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'text/plain' },
    })
    expect(res.statusCode).toBe(415)
    expect(res.json()).toEqual({ ...errorShape, code: 'UNSUPPORTED_MEDIA_TYPE' })
  })

  it('body over 1 MiB → 413', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v3/organisations',
      payload: JSON.stringify({ tradingName: 'x'.repeat(1024 * 1024 + 10) }),
      headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json' },
    })
    expect(res.statusCode).toBe(413)
    expect(res.json()).toEqual({ ...errorShape, code: 'REQUEST_ENTITY_TOO_LARGE' })
  })

  it('malformed JSON → 400', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v3/organisations',
      payload: '{"a":',
      headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json' },
    })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toEqual({ ...errorShape, code: 'BAD_REQUEST' })
  })

  it('invalid path parameter → 400 with details', async () => {
    const res = await client(t.app, org.apiKey).get('/v3/organisations/not-a-uuid')
    expect(res.statusCode).toBe(400)
    expect(res.json()).toEqual({ ...errorShape, code: 'BAD_REQUEST', details: [{ path: '/params/id', message: expect.any(String) }] })
  })

  it('an unexpected error → 500 without internals, logged once', async () => {
    const res = await t.app.inject({ url: '/__boom' })
    expect(res.statusCode).toBe(500)
    expect(res.json()).toEqual({ error: 'internal server error', code: 'INTERNAL_SERVER_ERROR', requestId: expect.any(String) })
    expect(res.body).not.toContain('hunter2')
    expect(t.logs.filter((l) => l.includes('hunter2'))).toHaveLength(1)
  })
})

describe('request ids', () => {
  it('echoes a valid incoming x-request-id', async () => {
    const res = await t.app.inject({ url: '/healthz', headers: { 'x-request-id': 'abc-123' } })
    expect(res.headers['x-request-id']).toBe('abc-123')
  })

  it('replaces an invalid one and puts it in error bodies', async () => {
    const res = await t.app.inject({ url: '/nope', headers: { 'x-request-id': 'bad id with spaces' } })
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/)
    expect(res.json().requestId).toBe(res.headers['x-request-id'])
  })
})

describe('health and docs', () => {
  it('GET /healthz and /readyz', async () => {
    expect((await t.app.inject({ url: '/healthz' })).json()).toEqual({ status: 'ok' })
    const ready = await t.app.inject({ url: '/readyz' })
    expect(ready.statusCode).toBe(200)
    expect(ready.json().status).toBe('ready')
  })

  it("serves OpenAPI 3 with each route once, in the spec's form, and the docs UI", async () => {
    const spec = (await t.app.inject({ url: '/openapi.json' })).json()
    expect(spec.openapi).toMatch(/^3\./)
    expect(Object.keys(spec.paths).sort()).toEqual([
      '/demo/images/{file}',
      '/funds/allocations',
      '/funds/allocations/impact',
      '/funds/allocations/impact/export',
      '/funds/allocations/profit-share',
      '/funds/allocations/profit-share/export',
      '/funds/allocations/summary',
      '/funds/allocations/{id}',
      '/funds/allocations/{id}/impact',
      '/funds/allocations/{id}/profit-share',
      '/funds/allocations/{id}/reverse',
      '/healthz',
      '/js/{version}/{file}',
      '/quotes/carbon',
      '/quotes/nature',
      '/quotes/{id}',
      '/quotes/{id}/explain',
      '/quotes/{id}/projects',
      '/readyz',
      '/v3/api-keys',
      '/v3/api-keys/{id}/revoke',
      '/v3/api-keys/{id}/rotate',
      '/v3/audit-events',
      '/v3/checkout/sessions',
      '/v3/checkout/sessions/{id}',
      '/v3/impact-partners',
      '/v3/impact-partners/projects',
      '/v3/organisations',
      '/v3/organisations/{id}',
      '/v3/organisations/{id}/deactivate',
      '/v3/organisations/{id}/reactivate',
      '/v3/post-purchase/sessions',
      '/v3/post-purchase/sessions/{id}',
      '/v3/statements',
      '/v3/webhook-endpoints',
      '/v3/webhook-endpoints/deliveries/{deliveryId}/retry',
      '/v3/webhook-endpoints/{id}',
      '/v3/webhook-endpoints/{id}/deliveries',
      '/v3/webhook-endpoints/{id}/recover',
      '/v3/webhook-endpoints/{id}/rotate-secret',
      '/v3/webhook-endpoints/{id}/test',
    ])
    const quoteBody = spec.paths['/quotes/carbon'].post.requestBody.content['application/json']
    expect(JSON.stringify(quoteBody)).toContain('Blossom & Bloom')
    expect(spec.paths['/v3/post-purchase/sessions/{id}'].get.security).toEqual([{ clientSecret: [] }, { bearerAuth: [] }])
    expect(spec.paths['/funds/allocations'].post.parameters.map((p: { name: string }) => p.name)).toContain('idempotency-key')
    expect(spec.paths['/funds/allocations/impact'].get.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining([
        'dateTimeFrom',
        'dateTimeTo',
        'consumerReference',
        'impactPartnerId',
        'fundsOrganisationId',
        'limit',
        'startingAfter',
        'endingBefore',
      ]),
    )
    expect(Object.keys(spec.paths['/funds/allocations/impact/export'].get.responses['200'].content)).toEqual(['text/csv'])
    const docs = await t.app.inject({ url: '/docs/' })
    expect(docs.statusCode).toBe(200)
    expect(docs.headers['content-type']).toContain('text/html')
  })

  it('has no /metrics on the public port: metrics have their own listener', async () => {
    for (const url of ['/metrics', '/v3/metrics']) {
      const res = await t.app.inject({ url })
      expect(res.statusCode).toBe(404)
      expect(res.json()).toMatchObject({ code: 'NOT_FOUND' })
    }
  })
})

describe('rate limit', () => {
  it('answers 429 with Retry-After after RATE_LIMIT_PER_MINUTE requests per key', async () => {
    const other = await createOrg(t.db)
    const statuses: number[] = []
    let last
    for (let i = 0; i < 6; i++) {
      last = await client(t.app, other.apiKey).get(`/v3/organisations/${other.organisationId}`)
      statuses.push(last.statusCode)
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429])
    expect(last?.headers['retry-after']).toBeDefined()
    expect(last?.json()).toEqual({ ...errorShape, code: 'TOO_MANY_REQUESTS' })
    // Another key has its own budget.
    expect((await client(t.app, org.apiKey).get(`/v3/organisations/${org.organisationId}`)).statusCode).toBe(200)
  })

  it('says the budget on every answer, and leaves the OpenAPI document out', async () => {
    const other = await createOrg(t.db)
    const first = await client(t.app, other.apiKey).get(`/v3/organisations/${other.organisationId}`)
    expect(first.headers['x-ratelimit-limit']).toBe('5')
    expect(first.headers['x-ratelimit-remaining']).toBe('4')
    expect(Number(first.headers['x-ratelimit-reset'])).toBeGreaterThan(0)
    expect(Number(first.headers['x-ratelimit-reset'])).toBeLessThanOrEqual(60)
    expect(first.headers['retry-after']).toBeUndefined()
    const second = await client(t.app, other.apiKey).get(`/v3/organisations/${other.organisationId}`)
    expect(second.headers['x-ratelimit-remaining']).toBe('3')
    for (let i = 0; i < 7; i++) {
      const document = await t.app.inject({ url: '/openapi.json' })
      expect(document.statusCode).toBe(200)
      expect(document.headers['x-ratelimit-limit']).toBeUndefined()
    }
  })
})

describe('logs', () => {
  it('never contain the API key or the query string', async () => {
    await client(t.app, org.apiKey).get(`/v3/organisations/${org.organisationId}?clientSecret=cs_live_leak`)
    const all = t.logs.join('\n')
    expect(all.length).toBeGreaterThan(0)
    expect(all).not.toContain(org.apiKey)
    expect(all).not.toContain('cs_live_leak')
  })
})

describe('when the database is unreachable', () => {
  it('answers 503 with Retry-After, never 500', async () => {
    const { buildApp } = await import('../../src/app.js')
    const { loadConfig } = await import('../../src/config.js')
    const { openPostgres } = await import('../../src/db/connect.js')
    const down = await buildApp({
      config: loadConfig({ LOG_LEVEL: 'silent' }),
      database: openPostgres({ url: 'postgres://postgres@127.0.0.1:1/nowhere', connectTimeoutMs: 500 }),
    })
    try {
      const ready = await down.inject({ url: '/readyz' })
      expect(ready.statusCode).toBe(503)
      const res = await down.inject({ url: `/v3/organisations/${org.organisationId}`, headers: { authorization: `Bearer ${org.apiKey}` } })
      expect(res.statusCode).toBe(503)
      expect(res.headers['retry-after']).toBe('1')
      expect(res.json()).toMatchObject({ code: 'SERVICE_UNAVAILABLE' })
    } finally {
      await down.close()
    }
  })
})
