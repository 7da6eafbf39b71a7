// The catalogue endpoints as ekko's (docs/api-contract.md, "Catalogue"): GET /v3/impact-partners and
// GET /v3/impact-partners/projects, bare arrays in id order, paged by a Link header, for the caller's tree.
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_CREDIT_PROJECTS, DEMO_IMPACT_PARTNERS, DEMO_PARTNER_IDS } from '../../src/domain/data/demo-catalogue.js'
import { client, createTestApp, type TestApp } from '../helpers/app.js'
import { createOrg, importDemoCatalogue, type OrgFixture } from '../helpers/factories.js'

let t: TestApp
let root: OrgFixture
let restricted: OrgFixture
let grandchild: OrgFixture

const partnerIds = DEMO_IMPACT_PARTNERS.map((p) => p.id).sort()
const projectIds = DEMO_CREDIT_PROJECTS.map((p) => p.id).sort()

beforeAll(async () => {
  t = await createTestApp()
  await importDemoCatalogue(t.db)
  root = await createOrg(t.db)
  restricted = await createOrg(t.db, { parentId: root.organisationId })
  grandchild = await createOrg(t.db, { parentId: restricted.organisationId })
  // The child's own partner list: two partners; its descendants inherit it.
  await sql`INSERT INTO organisation_impact_partners (organisation_id, impact_partner_id) VALUES
    (${restricted.organisationId}, ${DEMO_PARTNER_IDS.forestGuardians}), (${restricted.organisationId}, ${DEMO_PARTNER_IDS.oceanCommons})`.execute(
    t.db,
  )
})
afterAll(() => t.close())

describe('GET /v3/impact-partners', () => {
  it('lists the active partners in id order, as ekko shows them', async () => {
    const res = await client(t.app, root.apiKey).get('/v3/impact-partners')
    expect(res.statusCode).toBe(200)
    expect(res.headers.link).toBeUndefined()
    const body = res.json()
    expect(body.map((p: { id: string }) => p.id)).toEqual(partnerIds)
    expect(body.find((p: { id: string }) => p.id === DEMO_PARTNER_IDS.verdantRemovals)).toEqual({
      id: DEMO_PARTNER_IDS.verdantRemovals,
      name: 'Verdant Removals (demo)',
      shortDescription: 'Illustrative partner for nature-based carbon removal projects.',
      longDescription: null,
      logo: '/demo/images/verdant-removals-logos.png',
      website: null,
      images: {
        logos: [{ path: '/demo/images/verdant-removals-logos.png', type: 'default', width: 256, height: 256 }],
        thumbnails: [{ path: '/demo/images/verdant-removals-thumbnails.png', type: 'default', width: 400, height: 300 }],
        backgrounds: [{ path: '/demo/images/verdant-removals-backgrounds.png', type: 'default', width: 1600, height: 900 }],
      },
    })
  })

  it('pages by a Link header, forward and back', async () => {
    const first = await client(t.app, root.apiKey).get('/v3/impact-partners?limit=2')
    expect(first.json().map((p: { id: string }) => p.id)).toEqual(partnerIds.slice(0, 2))
    expect(first.headers.link).toBe(`</v3/impact-partners?limit=2&startingAfter=${partnerIds[1]}>; rel="next"`)
    const next = String(first.headers.link).slice(1, String(first.headers.link).indexOf('>'))
    const second = await client(t.app, root.apiKey).get(next)
    expect(second.json().map((p: { id: string }) => p.id)).toEqual(partnerIds.slice(2, 4))
    const last = await client(t.app, root.apiKey).get(`/v3/impact-partners?limit=2&startingAfter=${partnerIds[3]}`)
    expect(last.json().map((p: { id: string }) => p.id)).toEqual(partnerIds.slice(4))
    expect(last.headers.link).toBeUndefined()
    const back = await client(t.app, root.apiKey).get(`/v3/impact-partners?limit=2&endingBefore=${partnerIds[4]}`)
    expect(back.json().map((p: { id: string }) => p.id)).toEqual(partnerIds.slice(2, 4))
    expect(back.headers.link).toBe(`</v3/impact-partners?limit=2&endingBefore=${partnerIds[2]}>; rel="prev"`)
  })

  it("a restricted organisation's tree sees its partners only (inherited below it); an inactive partner is not listed", async () => {
    const allowed = [DEMO_PARTNER_IDS.forestGuardians, DEMO_PARTNER_IDS.oceanCommons].sort()
    for (const key of [restricted.apiKey, grandchild.apiKey]) {
      expect((await client(t.app, key).get('/v3/impact-partners')).json().map((p: { id: string }) => p.id)).toEqual(allowed)
    }
    await sql`UPDATE impact_partners SET active = false WHERE id = ${DEMO_PARTNER_IDS.oceanCommons}`.execute(t.db)
    expect((await client(t.app, restricted.apiKey).get('/v3/impact-partners')).json().map((p: { id: string }) => p.id)).toEqual([
      DEMO_PARTNER_IDS.forestGuardians,
    ])
    await sql`UPDATE impact_partners SET active = true WHERE id = ${DEMO_PARTNER_IDS.oceanCommons}`.execute(t.db)
  })

  it.each([
    [
      'both cursors',
      `?startingAfter=${DEMO_PARTNER_IDS.oceanCommons}&endingBefore=${DEMO_PARTNER_IDS.oceanCommons}`,
      400,
      'INVALID_CURSOR',
    ],
    ['a limit of 0', '?limit=0', 400, 'BAD_REQUEST'],
    ['an unknown parameter', '?kind=credits', 400, 'BAD_REQUEST'],
  ])('%s → %i %s', async (_label, query, status, code) => {
    const res = await client(t.app, root.apiKey).get(`/v3/impact-partners${query}`)
    expect(res.statusCode).toBe(status)
    expect(res.json().code).toBe(code)
  })

  it('needs an API key', async () => {
    expect((await client(t.app).get('/v3/impact-partners')).statusCode).toBe(401)
    expect((await client(t.app).get('/v3/impact-partners/projects')).statusCode).toBe(401)
  })
})

describe('GET /v3/impact-partners/projects', () => {
  it("lists the projects as GET /quotes/:id/projects shows them, without a quote's weight, priced in their catalogue currency", async () => {
    const body = (await client(t.app, root.apiKey).get('/v3/impact-partners/projects')).json()
    expect(body.map((p: { id: string }) => p.id)).toEqual(projectIds)
    expect(body.find((p: { id: string }) => p.id === '13756b9a-9d6a-4e2d-ad1f-b88dd0ba9856')).toEqual({
      id: '13756b9a-9d6a-4e2d-ad1f-b88dd0ba9856',
      impactPartnerId: DEMO_PARTNER_IDS.verdantRemovals,
      name: 'UK woodland creation (demo)',
      shortDescription: 'Nature-based removal (Woodland Carbon Code type).',
      type: 'carbonCredits',
      location: { countryCode: 'GBR', state: null },
      unit: { description: 'tCO2e', price: 23.3, currencyCode: 'GBP' },
    })
  })

  it('with projectId: that project alone, or nothing when the tree cannot use it', async () => {
    const one = '88fa3871-7949-49aa-a414-c620f1095eb2'
    expect(
      (await client(t.app, root.apiKey).get(`/v3/impact-partners/projects?projectId=${one}`)).json().map((p: { id: string }) => p.id),
    ).toEqual([one])
    const verdant = DEMO_CREDIT_PROJECTS.find((p) => p.impactPartnerId === DEMO_PARTNER_IDS.verdantRemovals)!.id
    expect((await client(t.app, restricted.apiKey).get(`/v3/impact-partners/projects?projectId=${verdant}`)).json()).toEqual([])
  })

  it('pages the projects by a Link header too', async () => {
    const res = await client(t.app, restricted.apiKey).get('/v3/impact-partners/projects?limit=1')
    const forest = DEMO_CREDIT_PROJECTS.filter((p) => p.impactPartnerId === DEMO_PARTNER_IDS.forestGuardians)
      .map((p) => p.id)
      .sort()
    expect(res.json().map((p: { id: string }) => p.id)).toEqual(forest.slice(0, 1))
    expect(res.headers.link).toBe(`</v3/impact-partners/projects?limit=1&startingAfter=${forest[0]}>; rel="next"`)
  })
})
