import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { client, createTestApp, type TestApp } from '../helpers/app.js'
import { createOrg, type OrgFixture } from '../helpers/factories.js'

let t: TestApp
let root: OrgFixture

beforeAll(async () => {
  t = await createTestApp()
  root = await createOrg(t.db, { serviceFeeRate: '0.15', taxLiability: 'organisation' })
})
afterAll(() => t.close())

const childBody = (parentOrganisationId: string, extra: Record<string, unknown> = {}) => ({
  parentOrganisationId,
  tradingName: 'Blossom & Bloom',
  legalName: 'BB Flowers Ltd',
  organisationReference: 'MID1234567',
  address: { line1: 'Ground floor', line2: '45 Rosewood Avenue', city: 'London', postalCode: 'SW1A 1AA', countryCode: 'GBR' },
  currencyCode: 'GBP',
  website: 'https://www.blossombloom.co.uk',
  mcc: '5992',
  ...extra,
})

describe('POST /v3/organisations', () => {
  it("creates a child that inherits the parent's pricing settings (201)", async () => {
    const res = await client(t.app, root.apiKey).post('/v3/organisations', childBody(root.organisationId))
    expect(res.statusCode).toBe(201)
    const org = res.json()
    expect(org).toEqual({
      organisationId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      parentOrganisationId: root.organisationId,
      organisationReference: 'MID1234567',
      tradingName: 'Blossom & Bloom',
      legalName: 'BB Flowers Ltd',
      address: { line1: 'Ground floor', line2: '45 Rosewood Avenue', city: 'London', postalCode: 'SW1A 1AA', countryCode: 'GBR' },
      currencyCode: 'GBP',
      website: 'https://www.blossombloom.co.uk',
      mcc: '5992',
      serviceFeePercentage: 0.15,
      taxLiability: 'organisation',
      relativeProfitShare: 0,
      proportionalProfitShare: 0,
      billing: null,
      settlementModel: 'gross',
      status: { value: 'active', message: null },
      createdAt: t.clock.now().toISOString(),
      allowedOrigins: null,
      ipAllowlist: null,
      requireSecondFactor: false,
    })
    const read = await client(t.app, root.apiKey).get(`/organisations/${org.organisationId}`)
    expect(read.statusCode).toBe(200)
    expect(read.json()).toEqual(org)
  })

  it('lets the parent key create a grandchild under its new child at once', async () => {
    const child = (await client(t.app, root.apiKey).post('/organisations', childBody(root.organisationId))).json()
    const grandchild = await client(t.app, root.apiKey).post('/organisations', childBody(child.organisationId))
    expect(grandchild.statusCode).toBe(201)
    expect(grandchild.json().parentOrganisationId).toBe(child.organisationId)
  })

  it.each([
    [
      'an unknown country',
      { address: { line1: 'x', city: 'x', postalCode: 'x', countryCode: 'XXX' } },
      'UNKNOWN_COUNTRY',
      '/address/countryCode',
    ],
    [
      'a lower-case country',
      { address: { line1: 'x', city: 'x', postalCode: 'x', countryCode: 'gbr' } },
      'BAD_REQUEST',
      '/address/countryCode',
    ],
    ['an unsupported currency', { currencyCode: 'XYZ' }, 'UNSUPPORTED_CURRENCY', '/currencyCode'],
    ['a 3-digit MCC', { mcc: '599' }, 'BAD_REQUEST', '/mcc'],
    ['a service fee (operator-only setting)', { serviceFeePercentage: 0.5 }, 'BAD_REQUEST', '/serviceFeePercentage'],
    ['a non-uuid parent', { parentOrganisationId: 'nope' }, 'BAD_REQUEST', '/parentOrganisationId'],
    ['an over-long trading name', { tradingName: 'x'.repeat(201) }, 'BAD_REQUEST', '/tradingName'],
  ])('answers 400 for %s', async (_label, extra, code, path) => {
    const res = await client(t.app, root.apiKey).post('/v3/organisations', childBody(root.organisationId, extra))
    expect(res.statusCode).toBe(400)
    expect(res.json().code).toBe(code)
    expect(res.json().details.map((d: { path: string }) => d.path)).toContain(path)
  })

  it('lists every schema violation in details', async () => {
    const res = await client(t.app, root.apiKey).post('/v3/organisations', { parentOrganisationId: root.organisationId })
    expect(res.statusCode).toBe(400)
    const paths = res.json().details.map((d: { path: string }) => d.path)
    expect(paths).toEqual(expect.arrayContaining(['/tradingName', '/legalName', '/address', '/currencyCode']))
  })

  it("answers 404 for an unknown parent inside no tree (403 wins: it is not in the caller's tree)", async () => {
    const res = await client(t.app, root.apiKey).post('/v3/organisations', childBody('6f1c2b8e-0000-4000-8000-000000000000'))
    expect(res.statusCode).toBe(403)
  })
})

describe('allowedOrigins (the web origins that may read sessions with the browser SDK)', () => {
  const origins = (id: string) => client(t.app, root.apiKey).get(`/v3/organisations/${id}`)

  it('is accepted on creation, stored normalised (lower case, no default port, no duplicates) and shown on GET', async () => {
    const res = await client(t.app, root.apiKey).post(
      '/v3/organisations',
      childBody(root.organisationId, {
        allowedOrigins: ['HTTPS://Shop.Example.COM:443', 'http://localhost:8080', 'https://shop.example.com', 'http://[::1]:80'],
      }),
    )
    expect(res.statusCode, res.body).toBe(201)
    expect(res.json().allowedOrigins).toEqual(['https://shop.example.com', 'http://localhost:8080', 'http://[::1]'])
    expect((await origins(res.json().organisationId)).json().allowedOrigins).toEqual(res.json().allowedOrigins)
  })

  it('is null (inherit) when not given', async () => {
    const res = await client(t.app, root.apiKey).post('/v3/organisations', childBody(root.organisationId))
    expect(res.json().allowedOrigins).toBeNull()
  })

  it("PATCH /v3/organisations/:id sets, empties and resets it for the key's own organisation and its descendants", async () => {
    const child = (await client(t.app, root.apiKey).post('/v3/organisations', childBody(root.organisationId))).json()
    for (const id of [root.organisationId, child.organisationId]) {
      const set = await client(t.app, root.apiKey).patch(`/v3/organisations/${id}`, {
        allowedOrigins: ['https://a.example', 'https://b.example'],
      })
      expect(set.statusCode, set.body).toBe(200)
      expect(set.json()).toEqual({ ...(await origins(id)).json(), allowedOrigins: ['https://a.example', 'https://b.example'] })
      const empty = await client(t.app, root.apiKey).patch(`/organisations/${id}`, { allowedOrigins: [] })
      expect(empty.json().allowedOrigins).toEqual([])
      const inherit = await client(t.app, root.apiKey).patch(`/organisations/${id}`, { allowedOrigins: null })
      expect(inherit.json().allowedOrigins).toBeNull()
    }
  })

  it.each([
    ['a path', 'https://shop.example/', 'INVALID_ALLOWED_ORIGIN'],
    ['a longer path', 'https://shop.example/checkout', 'INVALID_ALLOWED_ORIGIN'],
    ['a query', 'https://shop.example?x=1', 'INVALID_ALLOWED_ORIGIN'],
    ['a fragment', 'https://shop.example#top', 'INVALID_ALLOWED_ORIGIN'],
    ['user info', 'https://user:pass@shop.example', 'INVALID_ALLOWED_ORIGIN'],
    ['a wildcard', 'https://*.shop.example', 'INVALID_ALLOWED_ORIGIN'],
    ['a bare wildcard', '*', 'INVALID_ALLOWED_ORIGIN'],
    ['the null origin', 'null', 'INVALID_ALLOWED_ORIGIN'],
    ['another scheme', 'ftp://shop.example', 'INVALID_ALLOWED_ORIGIN'],
    ['no scheme', 'shop.example', 'INVALID_ALLOWED_ORIGIN'],
    ['a bad port', 'https://shop.example:99999', 'INVALID_ALLOWED_ORIGIN'],
    ['a space', 'https://shop example', 'INVALID_ALLOWED_ORIGIN'],
  ])('refuses %s with 400 INVALID_ALLOWED_ORIGIN naming the entry', async (_label, origin, code) => {
    const res = await client(t.app, root.apiKey).patch(`/v3/organisations/${root.organisationId}`, {
      allowedOrigins: ['https://ok.example', origin],
    })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ code, details: [{ path: '/allowedOrigins/1', message: expect.any(String) }] })
    const created = await client(t.app, root.apiKey).post('/v3/organisations', childBody(root.organisationId, { allowedOrigins: [origin] }))
    expect(created.statusCode).toBe(400)
    expect(created.json().code).toBe(code)
  })

  it('refuses more than 20 origins (TOO_MANY_ALLOWED_ORIGINS) and keeps the old list', async () => {
    await client(t.app, root.apiKey).patch(`/v3/organisations/${root.organisationId}`, { allowedOrigins: ['https://kept.example'] })
    const many = Array.from({ length: 21 }, (_, i) => `https://shop${i}.example`)
    const res = await client(t.app, root.apiKey).patch(`/v3/organisations/${root.organisationId}`, { allowedOrigins: many })
    expect(res.statusCode).toBe(400)
    expect(res.json().code).toBe('TOO_MANY_ALLOWED_ORIGINS')
    expect((await origins(root.organisationId)).json().allowedOrigins).toEqual(['https://kept.example'])
    const twenty = await client(t.app, root.apiKey).patch(`/v3/organisations/${root.organisationId}`, { allowedOrigins: many.slice(0, 20) })
    expect(twenty.statusCode).toBe(200)
  })

  it('changes nothing else: other fields are unknown properties (400), and an empty body sets nothing (400)', async () => {
    for (const body of [{ tradingName: 'New name' }, { allowedOrigins: [], serviceFeePercentage: 0 }, {}]) {
      const res = await client(t.app, root.apiKey).patch(`/v3/organisations/${root.organisationId}`, body)
      expect(res.statusCode).toBe(400)
      expect(res.json().code).toBe('BAD_REQUEST')
    }
    const wrongType = await client(t.app, root.apiKey).patch(`/v3/organisations/${root.organisationId}`, {
      allowedOrigins: 'https://a.example',
    })
    expect(wrongType.statusCode).toBe(400)
  })

  it("answers 404 for another tree's organisation, and 401 without a key", async () => {
    const stranger = await createOrg(t.db)
    const res = await client(t.app, root.apiKey).patch(`/v3/organisations/${stranger.organisationId}`, { allowedOrigins: [] })
    expect(res.statusCode).toBe(404)
    expect((await client(t.app, stranger.apiKey).get(`/v3/organisations/${stranger.organisationId}`)).json().allowedOrigins).toBeNull()
    const anonymous = await client(t.app).patch(`/v3/organisations/${root.organisationId}`, { allowedOrigins: [] })
    expect(anonymous.statusCode).toBe(401)
  })
})
