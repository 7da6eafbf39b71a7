import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { client, createTestApp, type TestApp } from '../helpers/app.js'
import { createOrg, floristQuote, importDemoCatalogue, type OrgFixture } from '../helpers/factories.js'

let t: TestApp
let merchant: OrgFixture

beforeAll(async () => {
  t = await createTestApp({ SESSION_TTL_SECONDS: '1' })
  await importDemoCatalogue(t.db)
  merchant = await createOrg(t.db)
})
afterAll(() => t.close())

describe('SESSION_TTL_SECONDS', () => {
  it.each(['post-purchase', 'checkout'])('sets the lifetime of a %s session', async (kind) => {
    const { locale: _locale, ...body } = floristQuote(merchant.organisationId)
    const res = await client(t.app, merchant.apiKey).post(
      `/v3/${kind}/sessions`,
      kind === 'checkout' ? body : { ...body, sdkVariant: 'takeover' },
    )
    expect(res.statusCode).toBe(200)
    const created = res.json()
    expect(created.expiresAt).toBe(new Date(t.clock.now().getTime() + 1000).toISOString())
    const row = await t.db
      .selectFrom('sessions')
      .select(['created_at', 'expires_at'])
      .where('id', '=', created.sessionId)
      .executeTakeFirstOrThrow()
    expect(row.expires_at.getTime() - row.created_at.getTime()).toBe(1000)

    const read = () => client(t.app, created.clientSecret).get(`/v3/${kind}/sessions/${created.sessionId}`)
    t.clock.advance(999)
    expect((await read()).statusCode).toBe(200)
    t.clock.advance(1)
    const expired = await read()
    expect(expired.statusCode).toBe(410)
    expect(expired.json()).toMatchObject({ code: 'SESSION_EXPIRED', error: 'session has expired; a new session must be created' })
    t.clock.advance(24 * 3600 * 1000)
    expect((await read()).statusCode).toBe(410)
  })
})
