// API keys of an organisation tree through the API: create, list, rotate (the old key works until its exact
// expiry, then answers 401 like a revoked key) and revoke, for the caller's organisation and its descendants only.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { presentIssuedKey } from '../../src/http/presenters/api-keys.js'
import { createApiKey } from '../../src/services/api-keys.js'
import { client, createTestApp, type Response, type TestApp } from '../helpers/app.js'
import { createOrg, type OrgFixture } from '../helpers/factories.js'

/** A key issued by the operator path, as the CLI prints it (id, prefix, apiKey, …). */
const issueKey = async (...args: Parameters<typeof createApiKey>) => presentIssuedKey(await createApiKey(...args))

let t: TestApp
let parent: OrgFixture
let child: OrgFixture
let grandchild: OrgFixture
let stranger: OrgFixture

beforeAll(async () => {
  t = await createTestApp()
  parent = await createOrg(t.db)
  child = await createOrg(t.db, { parentId: parent.organisationId })
  grandchild = await createOrg(t.db, { parentId: child.organisationId })
  stranger = await createOrg(t.db)
})
afterAll(() => t.close())

const as = (key: string) => client(t.app, key)
const canRead = async (key: string, organisationId: string) => (await as(key).get(`/v3/organisations/${organisationId}`)).statusCode
const keysOf = async (organisationId: string) => (await as(parent.apiKey).get(`/v3/api-keys?organisationId=${organisationId}`)).json().keys
const expectCode = (res: Response, status: number, code: string) => {
  expect(res.statusCode, res.body).toBe(status)
  expect(res.json()).toMatchObject({ code, requestId: expect.any(String) })
}

describe('POST /v3/api-keys', () => {
  it('creates a key for a descendant, shown once and not cached, that works at once', async () => {
    const res = await as(parent.apiKey).post('/v3/api-keys', { organisationId: grandchild.organisationId, mode: 'test' })
    expect(res.statusCode).toBe(201)
    expect(res.headers['cache-control']).toBe('no-store')
    const body = res.json()
    expect(body).toEqual({
      id: expect.any(String),
      organisationId: grandchild.organisationId,
      mode: 'test',
      prefix: body.apiKey.slice(0, 'ck_test_'.length + 8),
      createdAt: t.clock.now().toISOString(),
      revokedAt: null,
      expiresAt: null,
      replacedByKeyId: null,
      lastUsedAt: null,
      apiKey: expect.stringMatching(/^ck_test_[0-9A-Za-z]{40}$/),
    })
    expect(await canRead(body.apiKey, grandchild.organisationId)).toBe(200)
    // The new key acts on its own organisation's tree only.
    expect(await canRead(body.apiKey, child.organisationId)).toBe(404)
  })

  it("defaults to the calling key's mode", async () => {
    const res = await as(child.apiKey).post('/api-keys', { organisationId: child.organisationId })
    expect(res.statusCode).toBe(201)
    expect(res.json().mode).toBe('live')
  })

  it('refuses an organisation outside the tree (403) and bad bodies (400)', async () => {
    expectCode(await as(child.apiKey).post('/v3/api-keys', { organisationId: parent.organisationId }), 403, 'FORBIDDEN')
    expectCode(await as(parent.apiKey).post('/v3/api-keys', { organisationId: stranger.organisationId }), 403, 'FORBIDDEN')
    expectCode(await as(parent.apiKey).post('/v3/api-keys', { organisationId: parent.organisationId, mode: 'prod' }), 400, 'BAD_REQUEST')
    expectCode(await as(parent.apiKey).post('/v3/api-keys', { organisationId: 'nope' }), 400, 'BAD_REQUEST')
    expectCode(await as('ck_live_0000000000000000000000000000000000000000').post('/v3/api-keys', {}), 401, 'UNAUTHORIZED')
  })
})

describe('GET /v3/api-keys', () => {
  it("lists the caller's own keys by default, and a descendant's, without secrets", async () => {
    const own = (await as(child.apiKey).get('/v3/api-keys')).json()
    expect(own.keys.length).toBeGreaterThanOrEqual(1)
    for (const key of own.keys) expect(key.organisationId).toBe(child.organisationId)
    const res = await as(parent.apiKey).get(`/v3/api-keys?organisationId=${grandchild.organisationId}`)
    expect(res.statusCode).toBe(200)
    const { keys } = res.json()
    expect(keys.length).toBeGreaterThanOrEqual(2)
    for (const key of keys) {
      expect(Object.keys(key).sort()).toEqual(
        ['createdAt', 'expiresAt', 'id', 'lastUsedAt', 'mode', 'organisationId', 'prefix', 'replacedByKeyId', 'revokedAt'].sort(),
      )
    }
    expect(res.body).not.toContain(grandchild.apiKey)
  })

  it('refuses an organisation outside the tree (403)', async () => {
    expectCode(await as(child.apiKey).get(`/v3/api-keys?organisationId=${parent.organisationId}`), 403, 'FORBIDDEN')
    expectCode(await as(child.apiKey).get(`/v3/api-keys?organisationId=${stranger.organisationId}`), 403, 'FORBIDDEN')
    expectCode(await as(child.apiKey).get('/v3/api-keys?organisationId=x'), 400, 'BAD_REQUEST')
  })
})

describe('POST /v3/api-keys/:id/rotate', () => {
  it('issues a new key; the old one works until its exact expiry, even while cached, then is 401', async () => {
    const old = await issueKey(t.db, child.organisationId, 'live', t.clock.now())
    expect(await canRead(old.apiKey, child.organisationId)).toBe(200) // cached from here on
    const res = await as(parent.apiKey).post(`/v3/api-keys/${old.id}/rotate`, { expireOldInSeconds: 60 })
    expect(res.statusCode).toBe(201)
    expect(res.headers['cache-control']).toBe('no-store')
    const rotated = res.json()
    const expiresAt = new Date(t.clock.now().getTime() + 60_000).toISOString()
    expect(rotated).toMatchObject({
      organisationId: child.organisationId,
      mode: 'live',
      expiresAt: null,
      apiKey: expect.stringMatching(/^ck_live_/),
      previousKey: { id: old.id, prefix: old.prefix, revokedAt: null, expiresAt, replacedByKeyId: rotated.id },
    })
    expect(await canRead(rotated.apiKey, child.organisationId)).toBe(200)
    t.clock.advance(59_000)
    expect(await canRead(old.apiKey, child.organisationId)).toBe(200)
    t.clock.advance(1_000)
    // Exactly at the expiry, within AUTH_CACHE_TTL_MS of the last successful use: refused.
    expect(await canRead(old.apiKey, child.organisationId)).toBe(401)
    expect(await canRead(rotated.apiKey, child.organisationId)).toBe(200)
    const keys = await keysOf(child.organisationId)
    expect(keys.find((k: { id: string }) => k.id === old.id)).toMatchObject({ expiresAt, replacedByKeyId: rotated.id })
  })

  it('defaults to 24 hours, and an empty POST works', async () => {
    const old = await issueKey(t.db, grandchild.organisationId, 'test', t.clock.now())
    const res = await t.app.inject({
      method: 'POST',
      url: `/v3/api-keys/${old.id}/rotate`,
      headers: { authorization: `Bearer ${parent.apiKey}` },
    })
    expect(res.statusCode, res.body).toBe(201)
    expect(res.json().previousKey.expiresAt).toBe(new Date(t.clock.now().getTime() + 86_400_000).toISOString())
    expect(res.json().mode).toBe('test')
  })

  it('with 0 the old key stops at once, in this process even though it was cached; rotating your own key is allowed', async () => {
    const own = await issueKey(t.db, child.organisationId, 'live', t.clock.now())
    expect(await canRead(own.apiKey, child.organisationId)).toBe(200)
    const res = await as(own.apiKey).post(`/v3/api-keys/${own.id}/rotate`, { expireOldInSeconds: 0 })
    expect(res.statusCode).toBe(201)
    expect(res.json().previousKey.expiresAt).toBe(t.clock.now().toISOString())
    expect(await canRead(own.apiKey, child.organisationId)).toBe(401)
    expect(await canRead(res.json().apiKey, child.organisationId)).toBe(200)
  })

  it('refuses another tree’s key or an unknown id (404), and an expiry out of range (400)', async () => {
    const foreign = await issueKey(t.db, stranger.organisationId, 'live', t.clock.now())
    expectCode(await as(parent.apiKey).post(`/v3/api-keys/${foreign.id}/rotate`, {}), 404, 'NOT_FOUND')
    // A child may not rotate its parent's keys either.
    const parentKeyId = (await as(parent.apiKey).get('/v3/api-keys')).json().keys[0].id
    expectCode(await as(child.apiKey).post(`/v3/api-keys/${parentKeyId}/rotate`, {}), 404, 'NOT_FOUND')
    expectCode(await as(parent.apiKey).post(`/v3/api-keys/${randomUUID()}/rotate`, {}), 404, 'NOT_FOUND')
    const own = await issueKey(t.db, child.organisationId, 'live', t.clock.now())
    for (const expireOldInSeconds of [-1, 2_592_001, 1.5, '60']) {
      const res = await as(parent.apiKey).post(`/v3/api-keys/${own.id}/rotate`, { expireOldInSeconds })
      expectCode(res, 400, 'BAD_REQUEST')
      expect(res.json().details[0].path).toBe('/expireOldInSeconds')
    }
    expect((await as(parent.apiKey).post(`/v3/api-keys/${own.id}/rotate`, { expireOldInSeconds: 2_592_000 })).statusCode).toBe(201)
  })

  it('refuses a key already rotated (409 API_KEY_ALREADY_ROTATED) and a revoked or expired one (409 API_KEY_INACTIVE)', async () => {
    const key = await issueKey(t.db, child.organisationId, 'live', t.clock.now())
    expect((await as(parent.apiKey).post(`/v3/api-keys/${key.id}/rotate`, { expireOldInSeconds: 30 })).statusCode).toBe(201)
    expectCode(await as(parent.apiKey).post(`/v3/api-keys/${key.id}/rotate`, {}), 409, 'API_KEY_ALREADY_ROTATED')
    t.clock.advance(30_000)
    expectCode(await as(parent.apiKey).post(`/v3/api-keys/${key.id}/rotate`, {}), 409, 'API_KEY_INACTIVE')
    const revoked = await issueKey(t.db, child.organisationId, 'live', t.clock.now())
    expect((await as(parent.apiKey).post(`/v3/api-keys/${revoked.id}/revoke`)).statusCode).toBe(200)
    expectCode(await as(parent.apiKey).post(`/v3/api-keys/${revoked.id}/rotate`, {}), 409, 'API_KEY_INACTIVE')
  })

  it('two concurrent rotations of one key make one replacement', async () => {
    const key = await issueKey(t.db, child.organisationId, 'live', t.clock.now())
    const before = (await keysOf(child.organisationId)).length
    const results = await Promise.all([1, 2, 3].map(() => as(parent.apiKey).post(`/v3/api-keys/${key.id}/rotate`, {})))
    expect(results.map((r) => r.statusCode).sort()).toEqual([201, 409, 409])
    const after = await keysOf(child.organisationId)
    expect(after).toHaveLength(before + 1)
    const winner = results.find((r) => r.statusCode === 201)?.json()
    expect(after.find((k: { id: string }) => k.id === key.id).replacedByKeyId).toBe(winner.id)
  })
})

describe('POST /v3/api-keys/:id/revoke', () => {
  it("revokes a descendant's key now (even while cached), and refuses a second time (409)", async () => {
    const key = await issueKey(t.db, grandchild.organisationId, 'live', t.clock.now())
    expect(await canRead(key.apiKey, grandchild.organisationId)).toBe(200)
    const res = await as(child.apiKey).post(`/v3/api-keys/${key.id}/revoke`)
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ id: key.id, revokedAt: t.clock.now().toISOString() })
    expect(await canRead(key.apiKey, grandchild.organisationId)).toBe(401)
    expectCode(await as(child.apiKey).post(`/v3/api-keys/${key.id}/revoke`), 409, 'API_KEY_ALREADY_REVOKED')
  })

  it("ends a rotated key's grace period; another tree's key is 404", async () => {
    const key = await issueKey(t.db, child.organisationId, 'live', t.clock.now())
    expect((await as(parent.apiKey).post(`/v3/api-keys/${key.id}/rotate`, { expireOldInSeconds: 3600 })).statusCode).toBe(201)
    expect(await canRead(key.apiKey, child.organisationId)).toBe(200)
    expect((await as(parent.apiKey).post(`/v3/api-keys/${key.id}/revoke`)).statusCode).toBe(200)
    expect(await canRead(key.apiKey, child.organisationId)).toBe(401)
    const foreign = await issueKey(t.db, stranger.organisationId, 'live', t.clock.now())
    expectCode(await as(child.apiKey).post(`/v3/api-keys/${foreign.id}/revoke`), 404, 'NOT_FOUND')
  })
})
