import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { revokeApiKey, createApiKey } from '../../src/services/api-keys.js'
import { client, createTestApp, type TestApp } from '../helpers/app.js'
import { createOrg, type OrgFixture } from '../helpers/factories.js'

let t: TestApp
let parent: OrgFixture
let child: OrgFixture
let stranger: OrgFixture

beforeAll(async () => {
  t = await createTestApp()
  parent = await createOrg(t.db)
  child = await createOrg(t.db, { parentId: parent.organisationId })
  stranger = await createOrg(t.db)
})
afterAll(() => t.close())

const expectUnauthorized = (res: Awaited<ReturnType<ReturnType<typeof client>['get']>>) => {
  expect(res.statusCode).toBe(401)
  const body = res.json()
  expect(body).toEqual({ error: 'invalid or missing api key', code: 'UNAUTHORIZED', requestId: expect.any(String) })
}

describe('API key authentication', () => {
  it('answers 200 with a valid key', async () => {
    const res = await client(t.app, parent.apiKey).get(`/v3/organisations/${parent.organisationId}`)
    expect(res.statusCode).toBe(200)
    expect(res.json().organisationId).toBe(parent.organisationId)
  })

  it.each([
    ['missing', undefined],
    ['malformed (not a ck_ key)', 'hello'],
    ['malformed (bad characters)', 'ck_live_!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!'],
    ['unknown', 'ck_live_0000000000000000000000000000000000000000'],
  ])('answers 401 with one body when the key is %s', async (_label, key) => {
    expectUnauthorized(await client(t.app, key).get(`/v3/organisations/${parent.organisationId}`))
  })

  it('answers 401 for a non-Bearer scheme', async () => {
    const res = await t.app.inject({
      url: `/v3/organisations/${parent.organisationId}`,
      headers: { authorization: `Basic ${parent.apiKey}` },
    })
    expectUnauthorized(res)
  })

  it('stops accepting a revoked key within the cache TTL', async () => {
    const key = await createApiKey(t.db, parent.organisationId, 'test', t.clock.now())
    expect((await client(t.app, key.apiKey).get(`/v3/organisations/${parent.organisationId}`)).statusCode).toBe(200)
    await revokeApiKey(t.db, key.key.prefix, t.clock.now())
    t.clock.advance(t.config.AUTH_CACHE_TTL_MS + 1)
    expectUnauthorized(await client(t.app, key.apiKey).get(`/v3/organisations/${parent.organisationId}`))
  })

  it('keeps that bound while steady use refreshes the cached key in the background', async () => {
    const ttl = t.config.AUTH_CACHE_TTL_MS
    const key = await createApiKey(t.db, parent.organisationId, 'test', t.clock.now())
    const get = () => client(t.app, key.apiKey).get(`/v3/organisations/${parent.organisationId}`)
    expect((await get()).statusCode).toBe(200)
    t.clock.advance(ttl * 0.6)
    // Past half the TTL: answered from the cache while the key is read again (still active).
    expect((await get()).statusCode).toBe(200)
    await new Promise((resolve) => setTimeout(resolve, 50))
    await revokeApiKey(t.db, key.key.prefix, t.clock.now())
    t.clock.advance(ttl * 0.6)
    // The refreshed entry was read before the revocation and is not yet a TTL old: still accepted, and read again.
    expect((await get()).statusCode).toBe(200)
    await new Promise((resolve) => setTimeout(resolve, 50))
    expectUnauthorized(await get())
  })

  it('stores only a SHA-256 hash of each key', async () => {
    const rows = await t.db.selectFrom('api_keys').selectAll().where('organisation_id', '=', parent.organisationId).execute()
    expect(rows.length).toBeGreaterThan(0)
    for (const row of rows) {
      expect(row.key_hash).toHaveLength(32)
      expect(JSON.stringify(row)).not.toContain(parent.apiKey)
      expect(parent.apiKey.startsWith(row.prefix) || row.mode === 'test').toBe(true)
    }
  })
})

describe('organisation tree', () => {
  it('lets a parent key read its child', async () => {
    expect((await client(t.app, parent.apiKey).get(`/v3/organisations/${child.organisationId}`)).statusCode).toBe(200)
  })

  it('hides the parent from the child key (404)', async () => {
    const res = await client(t.app, child.apiKey).get(`/v3/organisations/${parent.organisationId}`)
    expect(res.statusCode).toBe(404)
    expect(res.json().code).toBe('NOT_FOUND')
  })

  it('hides another organisation (404, as if it did not exist)', async () => {
    const other = await client(t.app, parent.apiKey).get(`/v3/organisations/${stranger.organisationId}`)
    const missing = await client(t.app, parent.apiKey).get('/v3/organisations/6f1c2b8e-0000-4000-8000-000000000000')
    expect(other.statusCode).toBe(404)
    expect(other.json().error).toBe(missing.json().error)
  })

  it('refuses a body organisationId outside the tree with 403', async () => {
    const res = await client(t.app, child.apiKey).post('/v3/organisations', {
      parentOrganisationId: stranger.organisationId,
      tradingName: 'Nope',
      legalName: 'Nope Ltd',
      address: { line1: '1 A St', city: 'Leeds', postalCode: 'LS1 1AA', countryCode: 'GBR' },
      currencyCode: 'GBP',
    })
    expect(res.statusCode).toBe(403)
    expect(res.json()).toMatchObject({ code: 'FORBIDDEN', details: [{ path: '/parentOrganisationId' }] })
  })
})
