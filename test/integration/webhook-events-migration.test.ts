// The migration to small webhook events (migrations/2026_11_25_002100_small_webhook_events.ts): events written before
// it keep their bodies, learn which record they announce, and are still sent byte for byte; it cannot be undone while
// an event has no stored body (only this version can render one), and a refused undo changes nothing.
import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { migrateDown, migrateToLatest } from '../../src/db/migrate.js'
import { client, createTestApp, type TestApp } from '../helpers/app.js'
import { createOrg, floristQuote, importDemoCatalogue, type OrgFixture } from '../helpers/factories.js'
import { startReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js'

const MIGRATION = '2026_11_25_002100_small_webhook_events'
/** The migrations after it, undone first (newest first). */
const LATER = [
  '2026_11_28_003300_organisation_root_by_steps',
  '2026_11_28_003200_partner_key_without_nulls',
  '2026_11_28_003100_entries_as_strings',
  '2026_11_28_003000_organisation_index_for_children',
  '2026_11_28_002900_drop_allocations_quote_index',
  '2026_11_28_002800_partner_rows_organisation_once',
  '2026_11_28_002700_merchant_snapshots',
  '2026_11_28_002600_lean_partner_rows_and_consumer_index',
  '2026_11_27_002500_plpgsql_write_functions',
  '2026_11_27_002400_compact_entries',
  '2026_11_27_002310_analyze_partitioned_tables',
  '2026_11_25_002300_partition_ledger',
  '2026_11_25_002200_weekly_rollups',
]
const undoLater = async () => {
  for (const name of LATER) expect(await migrateDown(t.db)).toEqual([name])
}
let t: TestApp
let org: OrgFixture
let receiver: WebhookReceiver
let endpointId: string

const columnsOf = async (table: string) =>
  (
    await sql<{ column_name: string }>`
      SELECT column_name FROM information_schema.columns WHERE table_name = ${table} ORDER BY column_name`.execute(t.db)
  ).rows.map((r) => r.column_name)

async function allocate(): Promise<string> {
  const quote = (await client(t.app, org.apiKey).post('/quotes/carbon', floristQuote(org.organisationId))).json()
  const res = await client(t.app, org.apiKey).post(
    '/funds/allocations',
    { organisationId: org.organisationId, quoteId: quote.quoteId, credits: { amount: quote.credits.amounts.total } },
    { 'idempotency-key': randomUUID() },
  )
  expect(res.statusCode).toBe(201)
  return res.json().fundsAllocationId
}

beforeAll(async () => {
  t = await createTestApp({ WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8,::1/128', WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_WORKER: 'false' })
  await importDemoCatalogue(t.db)
  org = await createOrg(t.db)
  receiver = await startReceiver(() => ({ status: 200 }))
  const res = await client(t.app, org.apiKey).post('/v3/webhook-endpoints', { organisationId: org.organisationId, url: receiver.url })
  expect(res.statusCode).toBe(201)
  endpointId = res.json().id
})

afterAll(async () => {
  await receiver?.close()
  await t?.close()
})

describe('the small webhook events migration', () => {
  it('is not undone while an event has no stored body, and the refusal changes nothing', async () => {
    await allocate()
    const before = await columnsOf('webhook_events')
    expect(before).toContain('source_id')
    await undoLater()
    await expect(migrateDown(t.db)).rejects.toThrow(/without a stored body/)
    expect(await columnsOf('webhook_events')).toEqual(before)
    expect(await columnsOf('webhook_deliveries')).toContain('body')
    expect(await migrateToLatest(t.db)).toEqual([...LATER].reverse())
  })

  it("keeps an earlier event's body, names its record, and sends that body byte for byte", async () => {
    // Deliver what is pending, then stand in for the earlier schema: every event carries its body.
    const allocationId = await allocate()
    for (let i = 0; i < 3; i++) await t.app.webhooks.runOnce()
    await sql`UPDATE webhook_events e SET body = d.body FROM webhook_deliveries d WHERE d.event_id = e.id AND e.body IS NULL`.execute(t.db)
    await undoLater()
    expect(await migrateDown(t.db)).toEqual([MIGRATION])
    expect(await columnsOf('webhook_events')).not.toContain('source_id')

    // An event written by the earlier version (of an allocation written before it too), its delivery still pending.
    const eventId = randomUUID()
    const body = JSON.stringify({
      id: eventId,
      type: 'allocation.created',
      data: { fundsAllocationId: allocationId, note: 'as written then' },
    })
    const at = t.clock.now()
    await sql`INSERT INTO webhook_events (id, organisation_id, type, body, ekko_body, created_at)
              VALUES (${eventId}, ${org.organisationId}, 'allocation.created', ${body}, NULL, ${at})`.execute(t.db)
    await sql`INSERT INTO webhook_deliveries (id, event_id, endpoint_id, next_attempt_at, created_at)
              VALUES (${randomUUID()}, ${eventId}, ${endpointId}, ${at}, ${at})`.execute(t.db)

    expect(await migrateToLatest(t.db)).toEqual([MIGRATION, ...[...LATER].reverse()])
    const { rows } = await sql<{
      source_id: string
      body: string
    }>`SELECT source_id, body FROM webhook_events WHERE id = ${eventId}`.execute(t.db)
    expect(rows[0]).toEqual({ source_id: allocationId, body })
    for (let i = 0; i < 3 && !receiver.received.some((r) => r.headers['webhook-id'] === eventId); i++) await t.app.webhooks.runOnce()
    expect(receiver.received.filter((r) => r.headers['webhook-id'] === eventId).map((r) => r.body)).toEqual([body])
  })
})
