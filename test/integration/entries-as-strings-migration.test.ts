// Entries as one string per line (migrations/2026_11_28_003100_entries_as_strings.ts): a new allocation writes each
// line as one string (its ids in base64); every endpoint that reads entries answers byte for byte the same whether its rows hold strings,
// the arrays they stand for (down rewrites them), or both (up again keeps the arrays and new rows write strings); SQL
// (allocation_lines) and TypeScript (splitOf) read every line alike; the balance CHECK refuses a string line that does
// not balance or is not shaped; and a string line takes fewer bytes than its array.
import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { StoredAllocationEntries } from '../../src/db/database.js'
import { migrateDown, migrateToLatest } from '../../src/db/migrate.js'
import { splitOf } from '../../src/db/repositories/allocations.js'
import { DEMO_PARTNER_IDS } from '../../src/domain/data/demo-catalogue.js'
import { resetRollups, rollUpTo, verifyRollups } from '../../src/services/summary-rollups.js'
import { client, createTestApp, type TestApp } from '../helpers/app.js'
import { createOrg, floristQuote, importDemoCatalogue, type OrgFixture } from '../helpers/factories.js'

const MIGRATION = '2026_11_28_003100_entries_as_strings'
const HOUR = 3_600_000
const WINDOW = 'dateTimeFrom=2026-11-01T00:00:00Z&dateTimeTo=2026-12-01T00:00:00Z'
/** A line as one string: kind, two ids in base64 (a contribution's project empty), then seven decimals. */
const LINE = /^(cr\|[\w+/]{22}\|[\w+/]{22}\|\d+\.\d+|co\|[\w+/]{22}\|\|)(\|\d+(\.\d+)?){6}$/
let t: TestApp
let psp: OrgFixture
let merchant: OrgFixture
let jpMerchant: OrgFixture
const allocations: string[] = []

interface Quote {
  credits: { amounts: { total: number } }
}

async function allocate(
  org: OrgFixture,
  body: (quote: Quote) => Record<string, unknown>,
  quote: Record<string, unknown> = {},
): Promise<string> {
  const quoted = await client(t.app, org.apiKey).post('/quotes/carbon', floristQuote(org.organisationId, quote))
  expect(quoted.statusCode).toBe(201)
  const res = await client(t.app, org.apiKey).post(
    '/funds/allocations',
    { organisationId: org.organisationId, quoteId: quoted.json().quoteId, ...body(quoted.json()) },
    { 'idempotency-key': randomUUID() },
  )
  expect(res.statusCode, res.body).toBe(201)
  t.clock.advance(HOUR)
  allocations.push(res.json().fundsAllocationId)
  return res.json().fundsAllocationId
}

/** Every stored line with its row, in order: its jsonb type and text. */
const storedLines = async () =>
  (
    await sql<{ id: string; type: string; line: string }>`
      SELECT a.id, jsonb_typeof(e.line) AS type, e.line #>> '{}' AS line
      FROM allocations a, jsonb_array_elements(a.entries) WITH ORDINALITY AS e(line, n) ORDER BY a.id, e.n`.execute(t.db)
  ).rows

/** Every row's entries as stored, and as allocation_lines gives them to SQL. */
const readBoth = async () =>
  (
    await sql<{ id: string; currency_code: string; entries: StoredAllocationEntries; lines: StoredAllocationEntries }>`
      SELECT a.id, a.currency_code, a.entries,
             (SELECT jsonb_agg(l.line ORDER BY l.n) FROM allocation_lines(a.entries) WITH ORDINALITY AS l(line, n)) AS lines
      FROM allocations a ORDER BY a.id`.execute(t.db)
  ).rows

/** The allocation_entries view, whole. */
const viewRows = async () =>
  (await sql`SELECT * FROM allocation_entries ORDER BY allocation_id, position`.execute(t.db)).rows.map((r) => JSON.stringify(r))

/** Every answer that reads the allocations' entries, with its status and content type. */
async function answers(): Promise<string[]> {
  const get = (key: string, path: string, accept?: string) =>
    client(t.app, key)
      .get(path, accept ? { accept } : {})
      .then((r) => `${path} ${accept ?? ''} ${r.statusCode} ${r.headers['content-type']} ${r.body}`)
  const keys = [psp.apiKey, jpMerchant.apiKey]
  return Promise.all([
    ...allocations.flatMap((id) => {
      const key = id === allocations.at(-1) ? jpMerchant.apiKey : psp.apiKey
      return [`/funds/allocations/${id}`, `/v3/funds/allocations/${id}/impact`, `/v3/funds/allocations/${id}/profit-share`].map((path) =>
        get(key, path),
      )
    }),
    ...keys.flatMap((key) => [
      get(key, `/v3/funds/allocations/impact?${WINDOW}&limit=100`),
      get(key, `/v3/funds/allocations/impact/export?${WINDOW}`),
      get(key, `/v3/funds/allocations/profit-share?${WINDOW}&limit=100`),
      ...['day', 'impactPartner', 'project', 'organisation', 'currency'].map((groupBy) =>
        get(key, `/v3/funds/allocations/summary?${WINDOW}&groupBy=${groupBy}`),
      ),
    ]),
    // A partner's records: through its partner rows, and with a consumer reference through the lines themselves.
    ...[DEMO_PARTNER_IDS.oceanCommons, DEMO_PARTNER_IDS.verdantRemovals].flatMap((partner) => [
      get(psp.apiKey, `/v3/funds/allocations/impact?${WINDOW}&impactPartnerId=${partner}`),
      get(psp.apiKey, `/v3/funds/allocations/impact?${WINDOW}&impactPartnerId=${partner}&consumerReference=consumer_123`),
    ]),
    ...[psp, merchant].flatMap((org) =>
      [undefined, 'text/csv'].map((accept) =>
        get(psp.apiKey, `/v3/statements?organisationId=${org.organisationId}&period=2026-11`, accept),
      ),
    ),
    get(jpMerchant.apiKey, `/v3/statements?organisationId=${jpMerchant.organisationId}&period=2026-11`),
  ])
}

beforeAll(async () => {
  t = await createTestApp({ SUMMARY_ROLLUP_WORKER: 'false', WEBHOOK_WORKER: 'false' })
  await importDemoCatalogue(t.db)
  psp = await createOrg(t.db, { relativeProfitShare: '0.2' })
  merchant = await createOrg(t.db, { parentId: psp.organisationId, relativeProfitShare: '0.6' })
  const jpPsp = await createOrg(t.db, { relativeProfitShare: '0.2', countryCode: 'JPN', currencyCode: 'JPY' })
  jpMerchant = await createOrg(t.db, {
    parentId: jpPsp.organisationId,
    relativeProfitShare: '0.6',
    countryCode: 'JPN',
    currencyCode: 'JPY',
  })
  // Credit lines; contribution lines; both; one partner's contribution (reversed below); the PSP's own; a JPY tree's.
  await allocate(merchant, (q) => ({ credits: { amount: q.credits.amounts.total } }))
  await allocate(merchant, () => ({ contribution: { amount: 12.4 } }))
  await allocate(merchant, (q) => ({ credits: { amount: q.credits.amounts.total }, contribution: { amount: 5 } }))
  const reversed = await allocate(merchant, () => ({ contribution: { amount: 2.5, impactPartnerIds: [DEMO_PARTNER_IDS.oceanCommons] } }))
  await allocate(psp, (q) => ({ credits: { amount: q.credits.amounts.total } }))
  expect((await client(t.app, merchant.apiKey).post(`/funds/allocations/${reversed}/reverse`)).statusCode).toBe(201)
  t.clock.advance(HOUR)
  await allocate(jpMerchant, () => ({ contribution: { amount: 1220 } }), {
    consumer: { reference: 'consumer_jp', countryCode: 'JPN' },
    merchant: { name: 'Hanaya', mcc: '5992', address: { line1: '1-1', city: 'Tokyo', postalCode: '100-0001', countryCode: 'JPN' } },
    transaction: { amount: 5000, currencyCode: 'JPY' },
  })
})

afterAll(async () => {
  await t?.close()
})

describe('entries as one string per line', () => {
  it('are what new allocations write, and every answer is the same from strings, from arrays and from both', async () => {
    const strings = await storedLines()
    expect(strings.length).toBeGreaterThan(allocations.length)
    for (const { type, line } of strings) {
      expect(type).toBe('string')
      expect(line).toMatch(LINE)
    }
    const answered = await answers()
    expect(answered.filter((a) => / 200 /.test(a))).toHaveLength(answered.length)
    const view = await viewRows()
    const stringBytes = await sql<{ n: number }>`SELECT sum(pg_column_size(entries))::int AS n FROM allocations`.execute(t.db)

    // Down: every line becomes the array it stands for (ids with their dashes), and every answer is the same.
    expect(await migrateDown(t.db)).toEqual([MIGRATION])
    const arrays = await storedLines()
    expect(arrays.map((l) => l.type)).toEqual(strings.map(() => 'array'))
    const arrayBytes = await sql<{ n: number }>`SELECT sum(pg_column_size(entries))::int AS n FROM allocations`.execute(t.db)
    // About 60 B a line: jsonb's header and ten offsets per line, and the ids' 36 characters down to 22.
    expect((arrayBytes.rows[0]?.n ?? 0) - (stringBytes.rows[0]?.n ?? 0)).toBeGreaterThan(55 * strings.length)
    expect(await viewRows()).toEqual(view)

    // Up again: nothing is rewritten, and rows of both shapes answer alike.
    expect(await migrateToLatest(t.db)).toEqual([MIGRATION])
    expect(await storedLines()).toEqual(arrays)
    expect(await answers()).toEqual(answered)
    expect(await viewRows()).toEqual(view)
    await allocate(merchant, (q) => ({ credits: { amount: q.credits.amounts.total }, contribution: { amount: 3 } }))
    expect(new Set((await storedLines()).map((l) => l.type))).toEqual(new Set(['array', 'string']))
    for (const row of await readBoth()) {
      expect(splitOf(row.currency_code, row.lines), row.id).toEqual(splitOf(row.currency_code, row.entries))
    }
    // The summary's rollups, made from rows of both shapes, agree with the records.
    await resetRollups(t.db, t.clock.now())
    await rollUpTo(t.db, new Date('2026-12-01T00:00:00Z'), { now: t.clock.now, skipLocked: false })
    expect((await verifyRollups(t.db)).mismatches).toEqual([])
  })

  it('the balance CHECK refuses a string line that does not balance, is not ten values or has no known kind; a bad id fails', async () => {
    const id = await allocate(psp, (q) => ({ credits: { amount: q.credits.amounts.total } }))
    const { rows } = await sql<{ line: string }>`
      SELECT entries->>0 AS line FROM allocations WHERE id = ${id}::uuid AND jsonb_typeof(entries->0) = 'string'`.execute(t.db)
    const line = rows[0]?.line as string
    expect(line).toMatch(LINE)
    const values = line.split('|')
    const refused = async (changed: string) =>
      expect(
        sql`UPDATE allocations SET entries = jsonb_set(entries, '{0}', to_jsonb(${changed}::text)) WHERE id = ${id}::uuid`.execute(t.db),
      ).rejects.toThrow(/allocations_entries_balance/)
    await refused([...values.slice(0, 4), `${values[4]}1`, ...values.slice(5)].join('|'))
    await refused(values.slice(0, 9).join('|'))
    await refused(['xx', ...values.slice(1)].join('|'))
    // An id that is not 16 bytes in base64 cannot be read back as a uuid: refused too.
    await expect(
      sql`UPDATE allocations SET entries = jsonb_set(entries, '{0}', to_jsonb(${[values[0], 'AAAA', ...values.slice(2)].join('|')}::text))
          WHERE id = ${id}::uuid`.execute(t.db),
    ).rejects.toThrow(/base64|uuid/)
    // Unchanged, it is accepted as it is.
    await sql`UPDATE allocations SET entries = jsonb_set(entries, '{0}', to_jsonb(${line}::text)) WHERE id = ${id}::uuid`.execute(t.db)
  })
})
