// The audit log (issue 19, item 5): what the API records (actor, organisation, time, IP, a diff without secrets),
// GET /v3/audit-events with its filters and keyset pages, and the append-only guarantee held by the database itself.
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { client, createTestApp, type TestApp } from '../helpers/app.js'
import { onPostgres } from '../helpers/db.js'
import { createOrg, type OrgFixture } from '../helpers/factories.js'

let t: TestApp
let root: OrgFixture
let child: OrgFixture
let stranger: OrgFixture

beforeAll(async () => {
  t = await createTestApp({ WEBHOOK_WORKER: 'false' })
  root = await createOrg(t.db)
  child = await createOrg(t.db, { parentId: root.organisationId })
  stranger = await createOrg(t.db)
})
afterAll(() => t.close())

const from = (address: string, key: string) => ({
  get: (url: string) => t.app.inject({ method: 'GET', url, remoteAddress: address, headers: { authorization: `Bearer ${key}` } }),
  send: (method: 'POST' | 'PATCH', url: string, body?: object) =>
    t.app.inject({ method, url, remoteAddress: address, headers: { authorization: `Bearer ${key}` }, ...(body ? { payload: body } : {}) }),
})

describe('what the API records', () => {
  it('records key, webhook and organisation changes with actor, organisation, time, ip and a diff without secrets', async () => {
    const api = from('198.51.100.23', root.apiKey)
    const created = (await api.send('POST', '/v3/api-keys', { organisationId: child.organisationId })).json()
    const rotated = (await api.send('POST', `/v3/api-keys/${created.id}/rotate`, { expireOldInSeconds: 3600 })).json()
    await api.send('POST', `/v3/api-keys/${rotated.id}/revoke`)
    const endpoint = (
      await api.send('POST', '/v3/webhook-endpoints', { organisationId: child.organisationId, url: 'https://hooks.example.com/canopy' })
    ).json()
    await api.send('PATCH', `/v3/webhook-endpoints/${endpoint.id}`, { status: 'disabled' })
    await api.send('POST', `/v3/webhook-endpoints/${endpoint.id}/rotate-secret`)
    await api.send('PATCH', `/v3/organisations/${child.organisationId}`, {
      allowedOrigins: ['https://shop.example'],
      ipAllowlist: { enabled: false, entries: ['10.1.1.1/8'] },
    })

    const res = await api.get(`/v3/audit-events?organisationId=${child.organisationId}`)
    expect(res.statusCode).toBe(200)
    const { data: all, hasMore } = res.json()
    expect(hasMore).toBe(false)
    // The operator (the fixture's CLI path) created the organisation's first key; the rest is the API key's.
    expect(all.at(-1)).toMatchObject({ type: 'api_key.created', actor: { type: 'operator', id: null, label: 'operator' }, ip: null })
    const data = all.slice(0, -1)
    expect(data.map((e: { type: string }) => e.type)).toEqual([
      'organisation.updated',
      'webhook_endpoint.secret_rotated',
      'webhook_endpoint.updated',
      'webhook_endpoint.created',
      'api_key.revoked',
      'api_key.rotated',
      'api_key.created',
    ])
    for (const event of data) {
      expect(event).toMatchObject({
        organisationId: child.organisationId,
        actor: { type: 'apiKey', id: expect.any(String), label: root.apiKeyPrefix },
        ip: '198.51.100.23',
        createdAt: t.clock.now().toISOString(),
      })
    }
    const byType = Object.fromEntries(data.map((e: { type: string }) => [e.type, e]))
    expect(byType['organisation.updated'].changes).toEqual({
      allowedOrigins: { from: null, to: ['https://shop.example'] },
      ipAllowlist: { from: null, to: { enabled: false, entries: ['10.0.0.0/8'] } },
    })
    expect(byType['api_key.created'].changes).toEqual({ keyId: created.id, prefix: created.prefix, mode: 'live' })
    expect(byType['api_key.rotated'].changes).toMatchObject({
      keyId: created.id,
      replacedBy: { keyId: rotated.id, prefix: rotated.prefix },
    })
    expect(byType['webhook_endpoint.updated'].changes).toEqual({
      webhookEndpointId: endpoint.id,
      status: { from: 'enabled', to: 'disabled' },
    })
    // No secret anywhere: not the keys, not the signing secrets.
    const everything = JSON.stringify(data)
    for (const secret of [created.apiKey, rotated.apiKey, endpoint.secret]) expect(everything).not.toContain(secret)
    expect(everything).not.toMatch(/whsec_|ck_live_[0-9A-Za-z]{40}/)
  })

  it('filters by type and actor, pages newest first by startingAfter, and keeps other trees out', async () => {
    const api = client(t.app, root.apiKey)
    for (let i = 0; i < 3; i++) {
      t.clock.advance(1000)
      await api.post('/v3/api-keys', { organisationId: root.organisationId })
    }
    const first = (await api.get('/v3/audit-events?type=api_key.created&limit=2')).json()
    expect(first.hasMore).toBe(true)
    expect(first.data).toHaveLength(2)
    const second = (await api.get(`/v3/audit-events?type=api_key.created&limit=2&startingAfter=${first.data[1].id}`)).json()
    const ids = [...first.data, ...second.data].map((e: { id: string }) => e.id)
    expect(new Set(ids).size).toBe(ids.length)
    const times = [...first.data, ...second.data].map((e: { createdAt: string }) => e.createdAt)
    expect([...times].sort().reverse()).toEqual(times)

    const actorId = first.data[0].actor.id
    const byActor = (await api.get(`/v3/audit-events?actorId=${actorId}&limit=100`)).json()
    expect(byActor.data.every((e: { actor: { id: string } }) => e.actor.id === actorId)).toBe(true)

    expect((await api.get(`/v3/audit-events?organisationId=${stranger.organisationId}`)).statusCode).toBe(403)
    const theirs = (await client(t.app, stranger.apiKey).get('/v3/audit-events')).json()
    expect(theirs.data.map((e: { organisationId: string }) => e.organisationId)).toEqual([stranger.organisationId])
    expect((await client(t.app, stranger.apiKey).get(`/v3/audit-events?startingAfter=${first.data[0].id}`)).json().code).toBe(
      'INVALID_CURSOR',
    )
    expect((await api.get('/v3/audit-events?type=nope')).json().code).toBe('BAD_REQUEST')
    expect((await api.get('/v3/audit-events?dateTimeFrom=2026-11-22T00:00:00Z&dateTimeTo=2026-11-21T00:00:00Z')).json().code).toBe(
      'INVALID_DATE_RANGE',
    )
  })
})

describe('append-only', () => {
  it('refuses UPDATE, DELETE and TRUNCATE of audit_events to every role, the database owner and superuser included', async () => {
    const before = await t.db
      .selectFrom('audit_events')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow()
    expect(Number(before.n)).toBeGreaterThan(0)
    for (const statement of [
      sql`UPDATE audit_events SET type = 'api_key.created'`,
      sql`DELETE FROM audit_events`,
      sql`TRUNCATE audit_events`,
    ]) {
      await expect(statement.execute(t.db)).rejects.toThrow(/audit_events is append-only/)
    }
    await expect(t.db.deleteFrom('audit_events').execute()).rejects.toThrow(/append-only/)
    const after = await t.db
      .selectFrom('audit_events')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow()
    expect(after.n).toBe(before.n)
  })

  it.runIf(onPostgres())('grants the application role canopy_app SELECT and INSERT only (Postgres)', async () => {
    await t.db.connection().execute(async (connection) => {
      await sql`SET ROLE canopy_app`.execute(connection)
      try {
        const rows = await sql<{ n: string }>`SELECT count(*) AS n FROM audit_events`.execute(connection)
        expect(Number(rows.rows[0]?.n)).toBeGreaterThan(0)
        await expect(sql`UPDATE audit_events SET ip = NULL`.execute(connection)).rejects.toThrow(/permission denied/)
        await expect(sql`DELETE FROM audit_events`.execute(connection)).rejects.toThrow(/permission denied/)
        await expect(sql`TRUNCATE audit_events`.execute(connection)).rejects.toThrow(/permission denied/)
        const privileges = await sql<{ privilege_type: string }>`
          SELECT privilege_type FROM information_schema.role_table_grants
          WHERE grantee = 'canopy_app' AND table_name = 'audit_events' ORDER BY privilege_type`.execute(connection)
        expect(privileges.rows.map((r) => r.privilege_type)).toEqual(['INSERT', 'SELECT'])
      } finally {
        await sql`RESET ROLE`.execute(connection)
      }
    })
  })
})
