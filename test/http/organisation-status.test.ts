// Child organisations deactivated and reactivated through the API (issue 19, item 3): the whole subtree stops and
// comes back as it was; the tree list shows deactivated children; an organisation never deactivates itself.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { client, createTestApp, type TestApp } from '../helpers/app.js'
import { createOrg, type OrgFixture } from '../helpers/factories.js'

let t: TestApp
let root: OrgFixture
let child: OrgFixture
let grandchild: OrgFixture
let stranger: OrgFixture

beforeAll(async () => {
  t = await createTestApp()
  root = await createOrg(t.db)
  child = await createOrg(t.db, { parentId: root.organisationId, tradingName: 'Child' })
  grandchild = await createOrg(t.db, { parentId: child.organisationId, tradingName: 'Grandchild' })
  stranger = await createOrg(t.db)
})
afterAll(() => t.close())

const own = (fixture: OrgFixture) => client(t.app, fixture.apiKey).get(`/v3/organisations/${fixture.organisationId}`)

describe('deactivating and reactivating a child organisation', () => {
  it('stops the subtree (keys answer 401), lists it as inactive, and brings it back as it was', async () => {
    const api = client(t.app, root.apiKey)
    const off = await api.post(`/v3/organisations/${child.organisationId}/deactivate`)
    expect(off.statusCode).toBe(200)
    expect(off.json().status).toEqual({ value: 'inactive', message: null })
    expect((await own(child)).statusCode).toBe(401)
    expect((await own(grandchild)).statusCode).toBe(401)
    // The parent no longer acts on it (404), but sees it in its tree to reactivate it.
    expect((await api.get(`/v3/organisations/${child.organisationId}`)).statusCode).toBe(404)
    const tree = (await api.get('/v3/organisations')).json().data
    expect(
      tree.map((o: { organisationId: string; depth: number; status: { value: string } }) => [o.organisationId, o.depth, o.status.value]),
    ).toEqual([
      [root.organisationId, 0, 'active'],
      [child.organisationId, 1, 'inactive'],
      [grandchild.organisationId, 2, 'active'],
    ])
    // Again: nothing changes, one audit event only.
    expect((await api.post(`/v3/organisations/${child.organisationId}/deactivate`)).statusCode).toBe(200)

    const on = await api.post(`/v3/organisations/${child.organisationId}/reactivate`)
    expect(on.json().status.value).toBe('active')
    expect((await own(child)).statusCode).toBe(200)
    expect((await own(grandchild)).statusCode).toBe(200)
    const events = (await api.get(`/v3/audit-events?organisationId=${child.organisationId}`)).json().data
    expect(
      events
        .filter((e: { type: string }) => e.type.startsWith('organisation.'))
        .map((e: { type: string; changes: unknown }) => [e.type, e.changes]),
    ).toEqual([
      ['organisation.reactivated', { status: { from: 'inactive', to: 'active' } }],
      ['organisation.deactivated', { status: { from: 'active', to: 'inactive' } }],
    ])
  })

  it('refuses its own organisation (OWN_ORGANISATION) and another tree (404)', async () => {
    const res = await client(t.app, child.apiKey).post(`/v3/organisations/${child.organisationId}/deactivate`)
    expect(res.statusCode).toBe(409)
    expect(res.json().code).toBe('OWN_ORGANISATION')
    expect((await client(t.app, child.apiKey).post(`/v3/organisations/${root.organisationId}/deactivate`)).statusCode).toBe(404)
    expect((await client(t.app, stranger.apiKey).post(`/v3/organisations/${child.organisationId}/deactivate`)).statusCode).toBe(404)
  })
})
