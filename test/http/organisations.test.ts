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
      status: { value: 'active', message: null },
      createdAt: t.clock.now().toISOString(),
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
