import { randomUUID } from 'node:crypto'
import { Decimal } from 'decimal.js'
import fc from 'fast-check'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { migrateDown, migrateToLatest } from '../../src/db/migrate.js'
import {
  explainImpactRecords,
  findImpactRecordPosition,
  findImpactRecords,
  type ImpactRecordPage,
} from '../../src/db/repositories/impact-records.js'
import { DEMO_PARTNER_IDS } from '../../src/domain/data/demo-catalogue.js'
import { client, createTestApp, type TestApp } from '../helpers/app.js'
import { onPostgres } from '../helpers/db.js'
import { createOrg, floristQuote, importDemoCatalogue, type OrgFixture } from '../helpers/factories.js'

let t: TestApp
let parent: OrgFixture
let childA: OrgFixture
let childB: OrgFixture
let stranger: OrgFixture
/** Every record written, in the order written: its id and time. */
const written: { id: string; organisationId: string; reversal: boolean; at: string }[] = []
let strangerAllocation: string

const START = new Date('2026-11-21T10:00:00.000Z')
const MINUTE = 60_000
// The fixtures span 10:00 → about 11:30; the window used below covers all of it.
const WINDOW = 'dateTimeFrom=2026-11-21T00:00:00Z&dateTimeTo=2026-11-22T00:00:00Z'

const allocate = (key: string, body: Record<string, unknown>) =>
  client(t.app, key).post('/funds/allocations', body, { 'idempotency-key': randomUUID() })

async function quoteFor(org: OrgFixture, reference: string): Promise<string> {
  const res = await client(t.app, org.apiKey).post(
    '/quotes/carbon',
    floristQuote(org.organisationId, { consumer: { reference, countryCode: 'GBR' } }),
  )
  expect(res.statusCode).toBe(201)
  return res.json().quoteId
}

beforeAll(async () => {
  t = await createTestApp()
  expect(t.clock.now().toISOString()).toBe(START.toISOString())
  await importDemoCatalogue(t.db)
  parent = await createOrg(t.db, { organisationReference: 'PSP_001' })
  childA = await createOrg(t.db, { parentId: parent.organisationId, organisationReference: 'MID-A' })
  childB = await createOrg(t.db, { parentId: parent.organisationId, organisationReference: '=HYPERLINK("x")' })
  stranger = await createOrg(t.db)
  const orgs = [parent, childA, childB]
  const quotes = new Map<string, string>()
  for (let i = 0; i < 24; i++) {
    const org = orgs[i % 3] as OrgFixture
    const reference = i % 4 === 0 ? '=cmd|evil, "quoted"' : `consumer_${i % 5}`
    const key = `${org.organisationId}|${reference}`
    const quoteId = quotes.get(key) ?? (await quoteFor(org, reference))
    quotes.set(key, quoteId)
    // The parent's key allocates for childA (it collects the funds); the others allocate for themselves.
    const caller = org === childA && i % 2 === 0 ? parent : org
    const body: Record<string, unknown> = {
      organisationId: org.organisationId,
      quoteId,
      credits: { amount: Number((1 + (i % 7) * 0.37).toFixed(2)) },
    }
    if (i % 3 === 1) body.contribution = { amount: 2.5, impactPartnerIds: [DEMO_PARTNER_IDS.oceanCommons] }
    const res = await allocate(caller.apiKey, body)
    expect(res.statusCode).toBe(201)
    written.push({ id: res.json().fundsAllocationId, organisationId: org.organisationId, reversal: false, at: t.clock.now().toISOString() })
    // Two records at the very same time: the id decides their order.
    if (i % 5 !== 0) t.clock.advance(MINUTE)
    if (i % 4 === 3) {
      const target = written.filter((w) => !w.reversal)[i - 3] as (typeof written)[number]
      const rev = await client(t.app, parent.apiKey).post(`/funds/allocations/${target.id}/reverse`)
      expect(rev.statusCode).toBe(201)
      written.push({ id: rev.json().reversalId, organisationId: target.organisationId, reversal: true, at: t.clock.now().toISOString() })
      t.clock.advance(MINUTE)
    }
  }
  const strangerQuote = await quoteFor(stranger, 'consumer_0')
  strangerAllocation = (
    await allocate(stranger.apiKey, { organisationId: stranger.organisationId, quoteId: strangerQuote, credits: { amount: 1 } })
  ).json().fundsAllocationId
})
afterAll(() => t.close())

/**
 * A page's plan as at scale: a few dozen rows would be read whole and sorted, so the planner is told to prefer indexes,
 * as it does on a large ledger.
 */
const planAtScale = (page: ImpactRecordPage) =>
  t.db.transaction().execute(async (trx) => {
    await sql`SET LOCAL enable_seqscan = off`.execute(trx)
    await sql`SET LOCAL enable_bitmapscan = off`.execute(trx)
    return (await explainImpactRecords(trx, page)).join('\n')
  })

const list = (key: string, query: string) => client(t.app, key).get(`/v3/funds/allocations/impact?${query}`)

/**
 * Σ of record totals in SQL: allocations' entries, minus those of reversals, in the window and organisations. A line is
 * an array (src/db/database.ts, StoredAllocationEntry): its partner at 1, its amounts at 4, 6, 7 and 9.
 */
async function sqlTotal(organisationIds: string[], from: string, to: string): Promise<string> {
  const { rows } = await sql<{ total: string | null }>`
    WITH lines AS (
      SELECT a.organisation_id, a.created_at AS at, 1 AS sign, e FROM allocations a, allocation_lines(a.entries) e
      UNION ALL
      SELECT r.organisation_id, r.created_at, -1, e FROM allocation_reversals r JOIN allocations a ON a.id = r.allocation_id,
        allocation_lines(a.entries) e
    )
    SELECT sum(sign * ((e->>4)::numeric + (e->>6)::numeric + (e->>7)::numeric + (e->>9)::numeric))::text AS total
    FROM lines WHERE organisation_id = ANY(${organisationIds}::uuid[]) AND at >= ${from}::timestamptz AND at < ${to}::timestamptz`.execute(
    t.db,
  )
  return new Decimal(rows[0]?.total ?? '0').toString()
}

/** The ids of the records (allocations and reversals) of these organisations and window whose lines include the partner, in order. */
async function sqlRecordsWithPartner(
  partner: string,
  organisationIds: string[],
  from: string,
  to: string,
  consumerReference?: string,
): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    WITH recs AS (
      SELECT a.id, a.created_at AS at, a.organisation_id, a.consumer_reference, a.entries FROM allocations a
      UNION ALL
      SELECT r.id, r.created_at, r.organisation_id, r.consumer_reference, a.entries
      FROM allocation_reversals r JOIN allocations a ON a.id = r.allocation_id
    )
    SELECT id FROM recs
    WHERE organisation_id = ANY(${organisationIds}::uuid[]) AND at >= ${from}::timestamptz AND at < ${to}::timestamptz
      AND EXISTS (SELECT 1 FROM allocation_lines(entries) e WHERE e->>1 = ${partner})
      ${consumerReference === undefined ? sql`` : sql`AND consumer_reference = ${consumerReference}`}
    ORDER BY at, id`.execute(t.db)
  return rows.map((r) => r.id)
}

/**
 * The partner rows as they should be, derived from the records' lines, and as they are (sorted the same way). An
 * allocation's own rows store no allocation (NULL: it is the record); rows written before migration 002600 repeat the
 * record's id: both read as the record's.
 */
async function partnerRowsDerivedAndStored(): Promise<{ derived: unknown[]; stored: unknown[] }> {
  const { rows: derived } = await sql`
    SELECT DISTINCT (e->>1) AS partner, a.root_organisation_id::text AS root, a.created_at::text AS at, a.id::text AS record,
           a.organisation_id::text AS organisation, a.id::text AS allocation
    FROM allocations a, allocation_lines(a.entries) e
    UNION
    SELECT DISTINCT (e->>1), r.root_organisation_id::text, r.created_at::text, r.id::text, r.organisation_id::text, r.allocation_id::text
    FROM allocation_reversals r JOIN allocations a ON a.id = r.allocation_id, allocation_lines(a.entries) e
    ORDER BY 1, 2, 3, 4`.execute(t.db)
  const { rows: stored } = await sql`
    SELECT impact_partner_id::text AS partner, root_organisation_id::text AS root, funds_date_time::text AS at, record_id::text AS record,
           coalesce(organisation_id, root_organisation_id)::text AS organisation, coalesce(allocation_id, record_id)::text AS allocation
    FROM impact_record_partners ORDER BY 1, 2, 3, 4`.execute(t.db)
  return { derived, stored }
}

/** Every impact partner on a line of the parent's tree. */
async function treePartners(): Promise<string[]> {
  const { rows } = await sql<{ partner: string }>`
    SELECT DISTINCT e->>1 AS partner FROM allocations a, allocation_lines(a.entries) e
    WHERE a.root_organisation_id = ${parent.organisationId}::uuid ORDER BY 1`.execute(t.db)
  return rows.map((r) => r.partner)
}

const recordId = (r: { fundsAllocationId: string; reversalId?: string }) => r.reversalId ?? r.fundsAllocationId
const sumTotals = (records: { amounts: { total: number } }[]) =>
  records.reduce((acc, r) => acc.plus(String(r.amounts.total)), new Decimal(0)).toString()

describe('GET /funds/allocations/impact', () => {
  it("lists the whole tree to the parent's key, in (fundsDateTime, id) order, reversals inline", async () => {
    const res = await list(parent.apiKey, `${WINDOW}&limit=100`)
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(body.hasMore).toBe(false)
    const expected = [...written].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    expect(body.data.map(recordId)).toEqual(expected.map((w) => w.id))
    const reversal = body.data.find((r: { reversal: boolean }) => r.reversal)
    expect(reversal).toMatchObject({ reversal: true, reversalId: expect.any(String) })
    expect(reversal.amounts.total).toBeLessThan(0)
    const original = body.data.find(
      (r: { fundsAllocationId: string; reversal: boolean }) => r.fundsAllocationId === reversal.fundsAllocationId && !r.reversal,
    )
    expect(reversal.amounts.total).toBe(-original.amounts.total)
    expect(reversal.credits[0].amounts.impactTaxRate).toBe(original.credits[0].amounts.impactTaxRate)
  })

  it('has the fields of ekko’s record', async () => {
    const body = (await list(parent.apiKey, `${WINDOW}&fundsOrganisationId=${childA.organisationId}&limit=1`)).json()
    const [record] = body.data
    expect(Object.keys(record)).toEqual([
      'fundsAllocationId',
      'quoteId',
      'fundsDateTime',
      'consumerReference',
      'fundsOrganisationId',
      'fundsOrganisationReference',
      'collectionOrganisationId',
      'fundsCurrencyCode',
      'reversal',
      'taxLiability',
      'amounts',
      'merchant',
      'credits',
      'contributions',
    ])
    expect(record).toMatchObject({
      fundsOrganisationId: childA.organisationId,
      fundsOrganisationReference: 'MID-A',
      collectionOrganisationId: childA.organisationId,
      fundsCurrencyCode: 'GBP',
      reversal: false,
      merchant: { name: 'Blossom & Bloom', mcc: '5992', address: { line1: '45 Rosewood Avenue', countryCode: 'GBR', state: null } },
    })
    // Where the parent's key made the allocation, the parent collected the funds.
    const all = (await list(parent.apiKey, `${WINDOW}&fundsOrganisationId=${childA.organisationId}&limit=100`)).json().data
    expect(
      all.filter((r: { collectionOrganisationId: string }) => r.collectionOrganisationId === parent.organisationId).length,
    ).toBeGreaterThan(0)
    const a = record.amounts
    expect(
      new Decimal(String(a.impact)).plus(String(a.impactTax)).plus(String(a.serviceFee)).plus(String(a.serviceFeeTax)).toString(),
    ).toBe(new Decimal(String(a.total)).toString())
  })

  it.each([
    ['the whole tree', () => parent, () => [parent, childA, childB], ''],
    ['one child, through the parent', () => parent, () => [childB], 'fundsOrganisationId=CHILD_B'],
    ["a child's own key", () => childA, () => [childA], ''],
  ])('totals equal the sums computed in SQL: %s', async (_name, key, orgs, extra) => {
    const from = '2026-11-21T10:05:00.000Z'
    const to = '2026-11-21T11:10:00.000Z'
    const query = `dateTimeFrom=${from}&dateTimeTo=${to}&limit=100&${extra.replace('CHILD_B', childB.organisationId)}`
    const body = (await list(key().apiKey, query)).json()
    expect(body.data.length).toBeGreaterThan(0)
    const ids = orgs().map((o) => o.organisationId)
    expect(body.data.every((r: { fundsOrganisationId: string }) => ids.includes(r.fundsOrganisationId))).toBe(true)
    expect(sumTotals(body.data)).toBe(await sqlTotal(ids, from, to))
    const inWindow = written.filter((w) => ids.includes(w.organisationId) && w.at >= from && w.at < to)
    expect(body.data.map(recordId).sort()).toEqual(inWindow.map((w) => w.id).sort())
  })

  it('filters by consumerReference and impactPartnerId (reversals included)', async () => {
    const byConsumer = (
      await list(parent.apiKey, `${WINDOW}&limit=100&consumerReference=${encodeURIComponent('=cmd|evil, "quoted"')}`)
    ).json()
    expect(byConsumer.data.length).toBeGreaterThan(0)
    expect(byConsumer.data.every((r: { consumerReference: string }) => r.consumerReference === '=cmd|evil, "quoted"')).toBe(true)
    expect(byConsumer.data.some((r: { reversal: boolean }) => r.reversal)).toBe(true)
    const byPartner = (await list(parent.apiKey, `${WINDOW}&limit=100&impactPartnerId=${DEMO_PARTNER_IDS.oceanCommons}`)).json()
    expect(byPartner.data.length).toBeGreaterThan(0)
    for (const r of byPartner.data)
      expect(r.contributions.map((c: { impactPartnerId: string }) => c.impactPartnerId)).toContain(DEMO_PARTNER_IDS.oceanCommons)
    const all = (await list(parent.apiKey, `${WINDOW}&limit=100`)).json().data
    const withPartner = all.filter((r: { contributions: { impactPartnerId: string }[] }) =>
      r.contributions.some((c) => c.impactPartnerId === DEMO_PARTNER_IDS.oceanCommons),
    )
    expect(byPartner.data.map(recordId)).toEqual(withPartner.map(recordId))
  })

  it('impactPartnerId gives exactly the records with a line for that partner, alone or with the other filters', async () => {
    const from = '2026-11-21T00:00:00.000Z'
    const to = '2026-11-22T00:00:00.000Z'
    const tree = [parent.organisationId, childA.organisationId, childB.organisationId]
    const partners = await treePartners()
    expect(partners.length).toBeGreaterThan(1)
    let parentOwn = 0
    for (const partner of partners) {
      const ids = async (key: string, extra = '') =>
        (await list(key, `${WINDOW}&limit=100&impactPartnerId=${partner}${extra}`)).json().data.map(recordId)
      const all = await sqlRecordsWithPartner(partner, tree, from, to)
      expect(all.length).toBeGreaterThan(0)
      expect(await ids(parent.apiKey)).toEqual(all)
      expect(await ids(parent.apiKey, `&fundsOrganisationId=${childA.organisationId}`)).toEqual(
        await sqlRecordsWithPartner(partner, [childA.organisationId], from, to),
      )
      expect(await ids(childB.apiKey)).toEqual(await sqlRecordsWithPartner(partner, [childB.organisationId], from, to))
      // The tree's top: its partner rows name no organisation (root_organisation_id is it), and the filter still finds them.
      const own = await sqlRecordsWithPartner(partner, [parent.organisationId], from, to)
      parentOwn += own.length
      expect(await ids(parent.apiKey, `&fundsOrganisationId=${parent.organisationId}`)).toEqual(own)
      expect(await ids(parent.apiKey, '&consumerReference=consumer_1')).toEqual(
        await sqlRecordsWithPartner(partner, tree, from, to, 'consumer_1'),
      )
    }
    expect(parentOwn).toBeGreaterThan(0)
    // Reversals are among them; a partner on no line of the tree has no records.
    const ocean = await sqlRecordsWithPartner(DEMO_PARTNER_IDS.oceanCommons, tree, from, to)
    expect(ocean.some((id) => written.find((w) => w.id === id)?.reversal)).toBe(true)
    expect((await list(parent.apiKey, `${WINDOW}&impactPartnerId=${randomUUID()}`)).json()).toEqual({ hasMore: false, data: [] })
    // A line's partner is one position of it: a project's id (another position of the same lines) is no partner's.
    const { rows: projects } = await sql<{ project: string }>`
      SELECT DISTINCT e->>2 AS project FROM allocations a, allocation_lines(a.entries) e
      WHERE a.root_organisation_id = ${parent.organisationId}::uuid AND a.consumer_reference = 'consumer_1' AND e->>0 = 'cr'`.execute(t.db)
    expect(projects.length).toBeGreaterThan(0)
    for (const { project } of projects) {
      for (const extra of ['', '&consumerReference=consumer_1']) {
        expect((await list(parent.apiKey, `${WINDOW}&impactPartnerId=${project}${extra}`)).json()).toEqual({ hasMore: false, data: [] })
      }
    }
  })

  it("never shows another tree's records, and a child's key sees only its own", async () => {
    const strangerList = (await list(stranger.apiKey, `${WINDOW}&limit=100`)).json()
    expect(strangerList.data.map(recordId)).toEqual([strangerAllocation])
    const childList = (await list(childB.apiKey, `${WINDOW}&limit=100`)).json()
    expect(childList.data.every((r: { fundsOrganisationId: string }) => r.fundsOrganisationId === childB.organisationId)).toBe(true)
    expect(childList.data.length).toBe(written.filter((w) => w.organisationId === childB.organisationId).length)
  })

  it('is served at the bare path too', async () => {
    const res = await client(t.app, parent.apiKey).get(`/funds/allocations/impact?${WINDOW}`)
    expect(res.statusCode).toBe(200)
    expect(res.json().data).toHaveLength(10)
    expect(res.json().hasMore).toBe(true)
  })

  it('pages forward then back cover exactly the window’s records, for any page size and direction, with or without a partner', async () => {
    const from = '2026-11-21T10:03:00.000Z'
    const to = '2026-11-21T11:20:00.000Z'
    const tree = [parent.organisationId, childA.organisationId, childB.organisationId]
    // No filter, or each partner of the tree (a partner's pages are read through impact_record_partners).
    const filters = [
      { query: '', expected: written.filter((w) => w.at >= from && w.at < to).map((w) => w.id) },
      ...(await Promise.all(
        (await treePartners()).map(async (partner) => ({
          query: `&impactPartnerId=${partner}`,
          expected: await sqlRecordsWithPartner(partner, tree, from, to),
        })),
      )),
    ]
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 12 }),
        fc.constantFrom(...filters),
        async (forwardSize, backSize, filter) => {
          const { expected } = filter
          const seen: string[] = []
          let cursor: string | undefined
          for (;;) {
            const body = (
              await list(
                parent.apiKey,
                `dateTimeFrom=${from}&dateTimeTo=${to}&limit=${forwardSize}${filter.query}${cursor ? `&startingAfter=${cursor}` : ''}`,
              )
            ).json()
            seen.push(...body.data.map(recordId))
            if (!body.hasMore) break
            cursor = recordId(body.data.at(-1))
          }
          expect([...seen].sort()).toEqual([...expected].sort())
          expect(new Set(seen).size).toBe(seen.length)
          // Back from the end: endingBefore the last record, then the first of each page.
          const back: string[] = [seen.at(-1) as string]
          cursor = seen.at(-1)
          for (;;) {
            const body = (
              await list(parent.apiKey, `dateTimeFrom=${from}&dateTimeTo=${to}&limit=${backSize}${filter.query}&endingBefore=${cursor}`)
            ).json()
            back.unshift(...body.data.map(recordId))
            if (!body.hasMore) break
            cursor = recordId(body.data[0])
          }
          expect(back).toEqual(seen)
        },
      ),
      { numRuns: 24 },
    )
  })

  it('pages see every record exactly once while allocations are being written', async () => {
    const from = '2026-11-21T00:00:00.000Z'
    const to = '2026-11-23T00:00:00.000Z'
    const before = (await list(parent.apiKey, `dateTimeFrom=${from}&dateTimeTo=${to}&limit=100`)).json().data.map(recordId)
    const quoteId = await quoteFor(childA, 'concurrent')
    const seen: string[] = []
    let cursor: string | undefined
    const writes: Promise<unknown>[] = []
    for (;;) {
      // New allocations land while we page (at the clock's now: after every record seen so far).
      t.clock.advance(1000)
      writes.push(allocate(childA.apiKey, { organisationId: childA.organisationId, quoteId, credits: { amount: 1 } }))
      const body = (
        await list(parent.apiKey, `dateTimeFrom=${from}&dateTimeTo=${to}&limit=3${cursor ? `&startingAfter=${cursor}` : ''}`)
      ).json()
      seen.push(...body.data.map(recordId))
      if (!body.hasMore) break
      cursor = recordId(body.data.at(-1))
    }
    await Promise.all(writes)
    expect(new Set(seen).size).toBe(seen.length)
    expect(seen.slice(0, before.length)).toEqual(before)
  })
})

describe('GET /funds/allocations/:id/impact', () => {
  it('reads one record by allocation id or by reversal id', async () => {
    const reversal = written.find((w) => w.reversal) as (typeof written)[number]
    const byReversal = await client(t.app, parent.apiKey).get(`/v3/funds/allocations/${reversal.id}/impact`)
    expect(byReversal.statusCode).toBe(200)
    expect(byReversal.json()).toMatchObject({ reversal: true, reversalId: reversal.id, fundsDateTime: reversal.at })
    const byAllocation = await client(t.app, parent.apiKey).get(`/funds/allocations/${byReversal.json().fundsAllocationId}/impact`)
    expect(byAllocation.json()).toMatchObject({ reversal: false, fundsAllocationId: byReversal.json().fundsAllocationId })
    expect(byAllocation.json().reversalId).toBeUndefined()
    expect(byAllocation.json().amounts.total).toBe(-byReversal.json().amounts.total)
  })

  it("is 404 outside the key's tree, and for unknown ids", async () => {
    const own = written[0] as (typeof written)[number]
    expect((await client(t.app, stranger.apiKey).get(`/funds/allocations/${own.id}/impact`)).statusCode).toBe(404)
    expect((await client(t.app, childB.apiKey).get(`/funds/allocations/${own.id}/impact`)).statusCode).toBe(404)
    expect((await client(t.app, parent.apiKey).get(`/funds/allocations/${randomUUID()}/impact`)).json().code).toBe('NOT_FOUND')
  })
})

describe('bad input', () => {
  const own = () => written[0]?.id as string
  it.each([
    ['no dateTimeFrom', () => 'dateTimeTo=2026-11-22T00:00:00Z', 'BAD_REQUEST'],
    ['no dateTimeTo', () => 'dateTimeFrom=2026-11-21T00:00:00Z', 'BAD_REQUEST'],
    ['an unparsable date', () => 'dateTimeFrom=yesterday&dateTimeTo=2026-11-22T00:00:00Z', 'BAD_REQUEST'],
    ['an impossible date', () => 'dateTimeFrom=2026-02-30T00:00:00Z&dateTimeTo=2026-11-22T00:00:00Z', 'BAD_REQUEST'],
    ['from = to', () => 'dateTimeFrom=2026-11-21T00:00:00Z&dateTimeTo=2026-11-21T00:00:00Z', 'INVALID_DATE_RANGE'],
    ['from > to', () => 'dateTimeFrom=2026-11-22T00:00:00Z&dateTimeTo=2026-11-21T00:00:00Z', 'INVALID_DATE_RANGE'],
    ['a window over 366 days', () => 'dateTimeFrom=2025-01-01T00:00:00Z&dateTimeTo=2026-01-02T00:00:01Z', 'INVALID_DATE_RANGE'],
    ['limit 0', () => `${WINDOW}&limit=0`, 'BAD_REQUEST'],
    ['limit 101', () => `${WINDOW}&limit=101`, 'BAD_REQUEST'],
    ['limit not a number', () => `${WINDOW}&limit=ten`, 'BAD_REQUEST'],
    ['both cursors', () => `${WINDOW}&startingAfter=${own()}&endingBefore=${own()}`, 'INVALID_CURSOR'],
    ['an unknown cursor', () => `${WINDOW}&startingAfter=${randomUUID()}`, 'INVALID_CURSOR'],
    ["another tree's cursor", () => `${WINDOW}&endingBefore=${strangerAllocation}`, 'INVALID_CURSOR'],
    ['a cursor that is not a uuid', () => `${WINDOW}&startingAfter=abc`, 'BAD_REQUEST'],
    ['an unknown parameter', () => `${WINDOW}&offset=10`, 'BAD_REQUEST'],
  ])('%s → 400 %s', async (_name, query, code) => {
    const res = await list(parent.apiKey, query())
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ code, error: expect.any(String), requestId: expect.any(String) })
  })

  it('a window of exactly 366 days is accepted', async () => {
    expect((await list(parent.apiKey, 'dateTimeFrom=2025-11-21T00:00:00Z&dateTimeTo=2026-11-22T00:00:00Z')).statusCode).toBe(200)
  })

  it("an unknown cursor and another tree's answer alike (nothing revealed)", async () => {
    const unknown = (await list(parent.apiKey, `${WINDOW}&startingAfter=${randomUUID()}`)).json()
    const foreign = (await list(parent.apiKey, `${WINDOW}&startingAfter=${strangerAllocation}`)).json()
    expect({ ...unknown, requestId: '' }).toEqual({ ...foreign, requestId: '' })
  })

  it('fundsOrganisationId outside the tree → 403 (a sibling, a parent, a stranger)', async () => {
    for (const [key, org] of [
      [childA, childB],
      [childA, parent],
      [parent, stranger],
    ] as const) {
      const res = await list(key.apiKey, `${WINDOW}&fundsOrganisationId=${org.organisationId}`)
      expect(res.statusCode).toBe(403)
      expect(res.json().code).toBe('FORBIDDEN')
    }
  })

  it('the export refuses the same input before streaming anything', async () => {
    const res = await client(t.app, parent.apiKey).get(
      '/funds/allocations/impact/export?dateTimeFrom=2026-11-22T00:00:00Z&dateTimeTo=2026-11-21T00:00:00Z',
    )
    expect(res.statusCode).toBe(400)
    expect(res.json().code).toBe('INVALID_DATE_RANGE')
    expect((await client(t.app, parent.apiKey).get(`/funds/allocations/impact/export?${WINDOW}&limit=5`)).statusCode).toBe(400)
    expect((await client(t.app).get(`/funds/allocations/impact/export?${WINDOW}`)).statusCode).toBe(401)
  })
})

/** A minimal RFC 4180 reader for the test: quoted fields, doubled quotes, CRLF rows. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = []
  let row: string[] = []
  let field = ''
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"'
        i++
      } else if (ch === '"') quoted = false
      else field += ch
    } else if (ch === '"') quoted = true
    else if (ch === ',') {
      row.push(field)
      field = ''
    } else if (ch === '\r' && text[i + 1] === '\n') {
      row.push(field)
      rows.push(row)
      row = []
      field = ''
      i++
    } else field += ch
  }
  return rows
}

describe('GET /funds/allocations/impact/export', () => {
  it('streams RFC 4180 CSV: one row per line, formulas neutralised, negative amounts plain', async () => {
    const res = await client(t.app, parent.apiKey).get(`/v3/funds/allocations/impact/export?${WINDOW}`)
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8')
    expect(res.body.endsWith('\r\n')).toBe(true)
    const [header, ...rows] = parseCsv(res.body)
    expect(header?.slice(0, 5)).toEqual(['recordId', 'fundsAllocationId', 'reversalId', 'reversal', 'fundsDateTime'])
    const records = (await list(parent.apiKey, `${WINDOW}&limit=100`)).json().data
    const lines = records.flatMap((r: { credits: unknown[]; contributions: unknown[] }) => [...r.credits, ...r.contributions])
    expect(rows).toHaveLength(lines.length)
    const col = (name: string) => (header ?? []).indexOf(name)
    expect(new Set(rows.map((r) => r[col('recordId')]))).toEqual(new Set(records.map(recordId)))
    // Σ of line totals = Σ of record totals, exactly.
    expect(rows.reduce((acc, r) => acc.plus(r[col('total')] ?? 'x'), new Decimal(0)).toString()).toBe(sumTotals(records))
    const evil = rows.find((r) => r[col('consumerReference')]?.includes('cmd'))
    expect(evil?.[col('consumerReference')]).toBe(`'=cmd|evil, "quoted"`)
    expect(rows.find((r) => r[col('fundsOrganisationId')] === childB.organisationId)?.[col('fundsOrganisationReference')]).toBe(
      `'=HYPERLINK("x")`,
    )
    const negative = rows.find((r) => r[col('reversal')] === 'true')
    expect(negative?.[col('total')]).toMatch(/^-\d+\.\d{2}$/)
    expect(rows.every((r) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(r[col('fundsDateTime')] ?? ''))).toBe(true)
    expect(res.body).toContain(`"'=cmd|evil, ""quoted"""`)
  })

  it('an empty window is the header alone', async () => {
    const res = await client(t.app, parent.apiKey).get(
      '/funds/allocations/impact/export?dateTimeFrom=2020-01-01T00:00:00Z&dateTimeTo=2020-02-01T00:00:00Z',
    )
    expect(res.statusCode).toBe(200)
    expect(parseCsv(res.body)).toHaveLength(1)
  })
})

// Last: it adds a grandchild, which the tests above do not expect.
describe('a key in the middle of the tree', () => {
  it('sees its organisation and its descendants, and nothing else', async () => {
    const grandchild = await createOrg(t.db, { parentId: childA.organisationId, organisationReference: 'MID-A1' })
    t.clock.advance(60 * MINUTE)
    const quoteId = await quoteFor(grandchild, 'consumer_grandchild')
    const res = await allocate(childA.apiKey, { organisationId: grandchild.organisationId, quoteId, credits: { amount: 2 } })
    expect(res.statusCode).toBe(201)
    const body = (await list(childA.apiKey, `${WINDOW}&limit=100`)).json()
    const orgs = new Set(body.data.map((r: { fundsOrganisationId: string }) => r.fundsOrganisationId))
    expect(orgs).toEqual(new Set([childA.organisationId, grandchild.organisationId]))
    expect(body.data.map(recordId)).toContain(res.json().fundsAllocationId)
    const own = (await list(parent.apiKey, `${WINDOW}&limit=100&fundsOrganisationId=${childA.organisationId}`)).json().data
    expect(body.data).toHaveLength(own.length + 1)
    expect(body.data.at(-1)).toMatchObject({ fundsOrganisationReference: 'MID-A1', collectionOrganisationId: childA.organisationId })
    // The parent's key sees the grandchild too; the grandchild's key only itself.
    expect((await list(parent.apiKey, `${WINDOW}&limit=100&fundsOrganisationId=${grandchild.organisationId}`)).json().data).toHaveLength(1)
    expect((await list(grandchild.apiKey, `${WINDOW}&limit=100`)).json().data.map(recordId)).toEqual([res.json().fundsAllocationId])
    expect((await list(grandchild.apiKey, `${WINDOW}&fundsOrganisationId=${childA.organisationId}`)).statusCode).toBe(403)
  })
})

// Writes go to a tree of their own, so the tests above see none of them.
describe('impact_record_partners', () => {
  it('is written with its record in the same statement: never for a replay or a refused write, batched or not', async () => {
    const own = await createOrg(t.db)
    const quoteId = await quoteFor(own, 'partners')
    const count = async () =>
      Number(
        (
          await sql<{
            n: string
          }>`SELECT count(*) AS n FROM impact_record_partners WHERE root_organisation_id = ${own.organisationId}::uuid`.execute(t.db)
        ).rows[0]?.n,
      )
    const body = { organisationId: own.organisationId, quoteId, credits: { amount: 1 }, contribution: { amount: 2.5 } }
    const key = randomUUID()
    const first = await client(t.app, own.apiKey).post('/funds/allocations', body, { 'idempotency-key': key })
    expect(first.statusCode).toBe(201)
    const partners = new Set([
      ...first.json().credits.map((c: { impactPartnerId: string }) => c.impactPartnerId),
      ...first.json().contributions.map((c: { impactPartnerId: string }) => c.impactPartnerId),
    ])
    expect(partners.size).toBeGreaterThan(1)
    expect(await count()).toBe(partners.size)
    // A replay, a key reused with another request, an unknown quote: nothing written.
    const replay = await client(t.app, own.apiKey).post('/funds/allocations', body, { 'idempotency-key': key })
    expect(replay.headers['idempotent-replayed']).toBe('true')
    expect(
      (await client(t.app, own.apiKey).post('/funds/allocations', { ...body, credits: { amount: 2 } }, { 'idempotency-key': key }))
        .statusCode,
    ).toBe(422)
    expect((await allocate(own.apiKey, { ...body, quoteId: randomUUID() })).statusCode).toBe(404)
    expect(await count()).toBe(partners.size)
    // Concurrent allocations are written by one batched statement; duplicates of a key within it write nothing more.
    const duplicate = randomUUID()
    const results = await Promise.all([
      ...Array.from({ length: 6 }, () => allocate(own.apiKey, body)),
      ...Array.from({ length: 3 }, () => client(t.app, own.apiKey).post('/funds/allocations', body, { 'idempotency-key': duplicate })),
    ])
    expect(results.every((r) => r.statusCode === 201)).toBe(true)
    expect(new Set(results.map((r) => r.json().fundsAllocationId)).size).toBe(7)
    // With a tax receipt (its own statement), and a reversal (its allocation's partners, at the reversal's time).
    const receipt = await allocate(own.apiKey, { ...body, issueTaxReceipt: true, consumerEmail: 'donor@example.com', credits: undefined })
    expect(receipt.statusCode).toBe(201)
    const reversed = await client(t.app, own.apiKey).post(`/funds/allocations/${first.json().fundsAllocationId}/reverse`)
    expect(reversed.statusCode).toBe(201)
    expect((await client(t.app, own.apiKey).post(`/funds/allocations/${first.json().fundsAllocationId}/reverse`)).statusCode).toBe(409)
    const receiptPartners = new Set(receipt.json().contributions.map((c: { impactPartnerId: string }) => c.impactPartnerId)).size
    expect(await count()).toBe(partners.size * 9 + receiptPartners)
    const { derived, stored } = await partnerRowsDerivedAndStored()
    expect(stored).toEqual(derived)
    // An allocation's rows do not repeat its id and time (bytes every allocation would write); a reversal's name its
    // allocation. Nor does a record of the top of its tree repeat its organisation (root_organisation_id says it).
    const { rows: kinds } = await sql<{ allocation_rows: number; repeating: number; reversal_rows: number; naming_root: number }>`
      SELECT count(*) FILTER (WHERE allocation_id IS NULL AND allocation_created_at IS NULL)::int AS allocation_rows,
             count(*) FILTER (WHERE allocation_id = record_id)::int AS repeating,
             count(*) FILTER (WHERE allocation_id <> record_id AND allocation_created_at IS NOT NULL)::int AS reversal_rows,
             count(*) FILTER (WHERE organisation_id IS NOT NULL)::int AS naming_root
      FROM impact_record_partners WHERE root_organisation_id = ${own.organisationId}::uuid`.execute(t.db)
    expect(kinds[0]).toEqual({
      allocation_rows: partners.size * 8 + receiptPartners,
      repeating: 0,
      reversal_rows: partners.size,
      naming_root: 0,
    })
    // Each (partner, tree, time, record) is held once, by whichever of its two unique indexes holds rows like it.
    for (const namingNothing of [true, false]) {
      const again = sql`
        INSERT INTO impact_record_partners
          (impact_partner_id, root_organisation_id, funds_date_time, record_id, organisation_id, allocation_id, allocation_created_at)
        SELECT impact_partner_id, root_organisation_id, funds_date_time, record_id, organisation_id, allocation_id, allocation_created_at
        FROM impact_record_partners
        WHERE root_organisation_id = ${own.organisationId}::uuid AND (organisation_id IS NULL AND allocation_id IS NULL) = ${namingNothing}
        LIMIT 1`
      await expect(again.execute(t.db)).rejects.toMatchObject({ code: '23505' })
    }
    // A child's rows name it.
    const { rows: children } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM impact_record_partners
      WHERE root_organisation_id = ${parent.organisationId}::uuid AND organisation_id = ${childA.organisationId}::uuid`.execute(t.db)
    expect(children[0]?.n).toBeGreaterThan(0)
  })

  it('a partner page is an ordered index-only read of its keys, then its allocations by primary key in their month: no Sort node, either direction', async () => {
    const filter = {
      rootOrganisationId: parent.organisationId,
      from: new Date('2026-11-21T00:00:00Z'),
      to: new Date('2026-11-22T00:00:00Z'),
      impactPartnerId: DEMO_PARTNER_IDS.oceanCommons,
    }
    const position = { time: '2026-11-21 10:30:00+00', id: randomUUID() }
    const pages: ImpactRecordPage[] = [
      { filter, direction: 'forward', limit: 11 },
      {
        filter: { ...filter, organisationIds: [childA.organisationId] },
        after: { ...position, time: '2026-11-21 10:00:00+00' },
        direction: 'forward',
        limit: 11,
      },
      { filter, before: position, direction: 'backward', limit: 11 },
    ]
    for (const page of pages) {
      expect((await findImpactRecords(t.db, page)).length, JSON.stringify(page)).toBeGreaterThan(0)
      const plan = await planAtScale(page)
      // The window's month of the partner rows, then the page's allocations by (id, created_at) in that month alone.
      // Index-only reads of the month's partner rows: the rows naming nothing else (an allocation of the top) and the
      // others, merged; a page of a child alone reads only the second (migration 003200).
      const partnerReads = plan.match(/Index Only Scan( Backward)? using \w+ on impact_record_partners_p2026_11\b/g) ?? []
      expect(partnerReads, plan).toHaveLength(page.filter.organisationIds?.includes(childA.organisationId) ? 1 : 2)
      if (partnerReads.length === 2) expect(plan, plan).toMatch(/Merge Append/)
      expect(plan, plan).toMatch(/Index Cond: \(\(id = ANY .*\) AND \(created_at = ANY /)
      expect(plan.match(/allocations_p\d{4}_\d{2}\b/g) ?? [], plan).toEqual(['allocations_p2026_11'])
      expect(plan, plan).not.toMatch(/_default|impact_record_partners_p2026_12/)
      expect(plan, plan).not.toMatch(/(^|->\s+)(Incremental\s+)?Sort\s+\(/m)
    }
  })

  it.runIf(onPostgres())('reads a page and a cursor as named prepared statements, parsed once per connection (Postgres)', async () => {
    // Planning a page's reads over every month of its window cost more than running them: a connection keeps their
    // plans (docs/partitioning.md, "Reading a page of records"). One connection, so pg_prepared_statements sees them all.
    const handle = await t.database.open(1)
    try {
      const filter = {
        rootOrganisationId: parent.organisationId,
        from: new Date('2026-11-21T00:00:00Z'),
        to: new Date('2026-11-22T00:00:00Z'),
      }
      const page: ImpactRecordPage = { filter, direction: 'forward', limit: 11 }
      const first = await findImpactRecords(handle.db, page)
      expect(first).toHaveLength(11)
      const cursor = first[10]?.id as string
      const position = await findImpactRecordPosition(handle.db, cursor)
      for (let i = 0; i < 6; i++) {
        expect(await findImpactRecords(handle.db, page)).toEqual(first)
        expect(await findImpactRecordPosition(handle.db, cursor)).toEqual(position)
      }
      // Other values, same statements: the next page.
      const next = await findImpactRecords(handle.db, { ...page, after: position })
      expect(next[0]?.id).not.toBe(cursor)
      const { rows } = await sql<{ statement: string; executions: number }>`
        SELECT statement, (generic_plans + custom_plans)::int AS executions FROM pg_prepared_statements
        WHERE name LIKE 'canopy\\_%' ORDER BY statement`.execute(handle.db)
      const executions = (fragment: RegExp) => rows.filter((r) => fragment.test(r.statement)).map((r) => r.executions)
      // The keys of a first page (7 reads) and of a page after a cursor (1), their allocations (8), the cursor (7).
      expect(executions(/FROM allocations a\s+WHERE a\.id = ANY/)).toEqual([8])
      expect(executions(/FROM allocations WHERE id = \$1::uuid\s+UNION ALL/)).toEqual([7])
      expect(rows).toHaveLength(4)
    } finally {
      await handle.close()
    }
  })

  it("a tree's page reads only its window's months of allocations and reversals, merged in order: no Sort node", async () => {
    const filter = {
      rootOrganisationId: parent.organisationId,
      from: new Date('2026-11-21T00:00:00Z'),
      to: new Date('2026-11-22T00:00:00Z'),
    }
    const pages: ImpactRecordPage[] = [
      { filter, direction: 'forward', limit: 11 },
      {
        filter: { ...filter, consumerReference: 'consumer_1', impactPartnerId: DEMO_PARTNER_IDS.oceanCommons },
        direction: 'forward',
        limit: 11,
      },
      { filter: { ...filter, consumerReference: 'consumer_1' }, direction: 'backward', limit: 11 },
    ]
    for (const page of pages) {
      expect((await findImpactRecords(t.db, page)).length, JSON.stringify(page)).toBeGreaterThan(0)
      const plan = await planAtScale(page)
      expect(plan, plan).toMatch(/Merge Append/)
      expect(plan, plan).toMatch(/allocation_reversals_p2026_11/)
      // Only a reversal's own allocation (read per row for a partner filter, pruned when run) may be in any month.
      const scans = plan.split('SubPlan')[0] ?? ''
      expect(scans, plan).not.toMatch(/_default|_p2026_12|_p2027_/)
      expect(plan, plan).not.toMatch(/(^|->\s+)Sort\s+\(/m)
      if (page.filter.consumerReference !== undefined) {
        // A consumer's pages read the consumer indexes, which hold only the records with a reference (migration 002600).
        expect(plan, plan).toMatch(/using allocations_p2026_11_root_organisation_id_consumer_\w+/)
        expect(plan, plan).toMatch(/using allocation_reversals_p2026_11_root_organisation_id_consumer\w*/)
      }
    }
    const { rows: definitions } = await sql<{ definition: string }>`
      SELECT indexdef AS definition FROM pg_indexes
      WHERE indexname IN ('allocations_consumer_time_idx', 'allocation_reversals_consumer_time_idx')`.execute(t.db)
    expect(definitions).toHaveLength(2)
    for (const { definition } of definitions) expect(definition).toMatch(/WHERE \(consumer_reference IS NOT NULL\)$/)
  })

  it('the migration fills it from the existing allocations and reversals', async () => {
    const { derived, stored } = await partnerRowsDerivedAndStored()
    expect(stored.length).toBeGreaterThan(written.length)
    // Down to before it (later migrations first), then up again.
    const undone: string[] = []
    while (!undone.includes('2026_11_23_001400_impact_partner_records')) undone.push(...(await migrateDown(t.db)))
    expect(undone.at(-1)).toBe('2026_11_23_001400_impact_partner_records')
    expect(await migrateToLatest(t.db)).toEqual([...undone].reverse())
    const after = await partnerRowsDerivedAndStored()
    expect(after.stored).toEqual(stored)
    expect(after.stored).toEqual(derived)
  })
})
