// IP allowlisting of API keys (issue 19, item 4): PATCH/GET ipAllowlist, normalised, inherited down the tree, a 403
// IP_NOT_ALLOWED with one body whatever the key, and the client address read through TRUST_PROXY only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { createOrg, type OrgFixture } from '../helpers/factories.js'

let t: TestApp
let proxied: TestApp
let root: OrgFixture
let child: OrgFixture
let grandchild: OrgFixture

beforeAll(async () => {
  ;[t, proxied] = await Promise.all([createTestApp(), createTestApp({ TRUST_PROXY: '1' })])
  root = await createOrg(t.db)
  child = await createOrg(t.db, { parentId: root.organisationId })
  grandchild = await createOrg(t.db, { parentId: child.organisationId })
})
afterAll(() => Promise.all([t.close(), proxied.close()]))

const call = (
  app: TestApp,
  key: string,
  url: string,
  options: { from?: string; method?: 'GET' | 'PATCH'; body?: unknown; headers?: Record<string, string> } = {},
) =>
  app.app.inject({
    method: options.method ?? 'GET',
    url,
    remoteAddress: options.from ?? '127.0.0.1',
    headers: { authorization: `Bearer ${key}`, ...options.headers },
    ...(options.body === undefined ? {} : { payload: options.body as object }),
  })

const patch = (key: string, id: string, ipAllowlist: unknown, from = '127.0.0.1') =>
  call(t, key, `/v3/organisations/${id}`, { method: 'PATCH', body: { ipAllowlist }, from })

describe('ipAllowlist on an organisation', () => {
  it('is stored normalised and shown by GET; null inherits again', async () => {
    const res = await patch(root.apiKey, child.organisationId, {
      enabled: false,
      entries: ['10.1.2.3/8', ' 203.0.113.7', '10.0.0.0/8', '2001:DB8::1'],
    })
    expect(res.statusCode).toBe(200)
    expect(res.json().ipAllowlist).toEqual({ enabled: false, entries: ['10.0.0.0/8', '203.0.113.7', '2001:db8::1'] })
    expect((await call(t, root.apiKey, `/v3/organisations/${child.organisationId}`)).json().ipAllowlist).toEqual({
      enabled: false,
      entries: ['10.0.0.0/8', '203.0.113.7', '2001:db8::1'],
    })
    expect((await patch(root.apiKey, child.organisationId, null)).json().ipAllowlist).toBeNull()
  })

  it('refuses a bad entry with INVALID_IP_ALLOWLIST_ENTRY naming it, and more than 100 entries', async () => {
    const res = await patch(root.apiKey, child.organisationId, { enabled: true, entries: ['10.0.0.1', 'example.com', '10.0.0.0/40'] })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({
      code: 'INVALID_IP_ALLOWLIST_ENTRY',
      details: [
        { path: '/ipAllowlist/entries/1', message: expect.any(String) },
        { path: '/ipAllowlist/entries/2', message: expect.any(String) },
      ],
    })
    const many = await patch(root.apiKey, child.organisationId, {
      enabled: true,
      entries: Array.from({ length: 101 }, (_, i) => `10.0.0.${i}`),
    })
    expect(many.statusCode).toBe(400)
    expect(many.json().code).toBe('BAD_REQUEST')
    const shape = await patch(root.apiKey, child.organisationId, { enabled: 'yes', entries: [] })
    expect(shape.json().details).toEqual([{ path: '/ipAllowlist/enabled', message: 'must be boolean' }])
  })

  it('refuses a key from another address with one 403 whatever the key, inherited by descendants without a list', async () => {
    expect((await patch(root.apiKey, child.organisationId, { enabled: true, entries: ['203.0.113.0/24'] })).statusCode).toBe(200)
    const childRefused = await call(t, child.apiKey, `/v3/organisations/${child.organisationId}`, { from: '198.51.100.9' })
    const grandchildRefused = await call(t, grandchild.apiKey, `/v3/organisations/${grandchild.organisationId}`, { from: '198.51.100.9' })
    expect(childRefused.statusCode).toBe(403)
    const body = ({ requestId: _, ...rest }: Record<string, unknown>) => rest
    expect(body(childRefused.json())).toEqual({
      error: "this address may not use the organisation's api keys (ip allowlist)",
      code: 'IP_NOT_ALLOWED',
    })
    expect(body(grandchildRefused.json())).toEqual(body(childRefused.json()))
    // From an allowed address both work; the root (above the list) is not restricted.
    expect((await call(t, child.apiKey, `/v3/organisations/${child.organisationId}`, { from: '203.0.113.40' })).statusCode).toBe(200)
    expect(
      (await call(t, grandchild.apiKey, `/v3/organisations/${grandchild.organisationId}`, { from: '::ffff:203.0.113.41' })).statusCode,
    ).toBe(200)
    expect((await call(t, root.apiKey, `/v3/organisations/${root.organisationId}`, { from: '198.51.100.9' })).statusCode).toBe(200)
    // A bad key from a refused address is still a 401: nothing about the list is revealed to it.
    expect(
      (await call(t, 'ck_live_' + 'x'.repeat(40), `/v3/organisations/${child.organisationId}`, { from: '198.51.100.9' })).statusCode,
    ).toBe(401)
    // A grandchild's own list wins over the inherited one; switching it off lets everything through.
    expect((await patch(root.apiKey, grandchild.organisationId, { enabled: false, entries: [] })).statusCode).toBe(200)
    expect((await call(t, grandchild.apiKey, `/v3/organisations/${grandchild.organisationId}`, { from: '198.51.100.9' })).statusCode).toBe(
      200,
    )
    expect((await patch(root.apiKey, child.organisationId, null)).statusCode).toBe(200)
    expect((await call(t, child.apiKey, `/v3/organisations/${child.organisationId}`, { from: '198.51.100.9' })).statusCode).toBe(200)
  })

  it('ignores X-Forwarded-For without TRUST_PROXY', async () => {
    await patch(root.apiKey, child.organisationId, { enabled: true, entries: ['203.0.113.7'] })
    try {
      const forged = await call(t, child.apiKey, `/v3/organisations/${child.organisationId}`, {
        from: '198.51.100.9',
        headers: { 'x-forwarded-for': '203.0.113.7' },
      })
      expect(forged.statusCode).toBe(403)
    } finally {
      await patch(root.apiKey, child.organisationId, null)
    }
  })
})

describe('TRUST_PROXY', () => {
  it('reads the client address one proxy in (the compose file: Caddy) when set to 1', async () => {
    const org = await createOrg(proxied.db)
    const res = await call(proxied, org.apiKey, `/v3/organisations/${org.organisationId}`, {
      method: 'PATCH',
      body: { ipAllowlist: { enabled: true, entries: ['203.0.113.7'] } },
      from: '172.18.0.5',
      headers: { 'x-forwarded-for': '203.0.113.7' },
    })
    expect(res.statusCode).toBe(200)
    const via = (forwardedFor: string) =>
      call(proxied, org.apiKey, `/v3/organisations/${org.organisationId}`, {
        from: '172.18.0.5',
        headers: { 'x-forwarded-for': forwardedFor },
      })
    expect((await via('203.0.113.7')).statusCode).toBe(200)
    // The client may send its own X-Forwarded-For: the proxy appends the address it saw, and only that one counts.
    expect((await via('203.0.113.7, 198.51.100.9')).statusCode).toBe(403)
    expect((await via('198.51.100.9')).statusCode).toBe(403)
  })

  it('is refused at start-up when it is not false, a number of proxies or their addresses', () => {
    for (const value of ['true', 'yes', '11', '10.0.0.0/99', 'proxy.internal']) {
      expect(() => loadConfig({ TRUST_PROXY: value }), value).toThrow(/TRUST_PROXY/)
    }
    for (const value of ['false', '1', '2', '10.0.0.0/8, 127.0.0.1', '::1'])
      expect(() => loadConfig({ TRUST_PROXY: value }), value).not.toThrow()
  })
})
