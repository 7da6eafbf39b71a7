import { randomUUID } from 'node:crypto'
import { Decimal } from 'decimal.js'
import fc from 'fast-check'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_PARTNER_IDS } from '../../src/domain/data/demo-catalogue.js'
import { migrateDown, migrateToLatest } from '../../src/db/migrate.js'
import { readSummaries } from '../../src/db/repositories/allocation-rollups.js'
import { planPieces, ROLLUP_GRAINS } from '../../src/domain/summary.js'
import { rebuildRollups, resetRollups, rollUpTo, verifyRollups } from '../../src/services/summary-rollups.js'
import { client, createTestApp, type TestApp } from '../helpers/app.js'
import { createOrg, floristQuote, importDemoCatalogue, type OrgFixture } from '../helpers/factories.js'
import { onPostgres } from '../helpers/db.js'
import { rollupRows } from '../helpers/rollups.js'

// The summary against the records it sums. Expectations are computed here, independently of src/: from the records that
// GET /v3/funds/allocations/impact pages through, bucketed with Intl (not luxon) and summed with decimal.js.

let t: TestApp
/** One tree: parent → middle → leaf, and parent → sibling. */
let parent: OrgFixture
let middle: OrgFixture
let leaf: OrgFixture
let sibling: OrgFixture
let stranger: OrgFixture
/** A tree of its own for the DST fixtures, and one for the property test. */
let london: OrgFixture
let prop: { root: OrgFixture; child: OrgFixture; grandchild: OrgFixture }

const HOUR = 3_600_000
const DAY = 24 * HOUR
const quotes = new Map<string, string>()

async function quoteFor(org: OrgFixture, currencyCode: string): Promise<string> {
  // One quote per organisation, currency and month of the clock: a quote is allocated only within QUOTE_RETENTION_DAYS.
  const key = `${org.organisationId}|${currencyCode}|${t.clock.now().toISOString().slice(0, 7)}`
  const cached = quotes.get(key)
  if (cached) return cached
  const amount = currencyCode === 'JPY' ? 8000 : 47.97
  const res = await client(t.app, org.apiKey).post(
    '/quotes/carbon',
    floristQuote(org.organisationId, { transaction: { amount, currencyCode } }),
  )
  expect(res.statusCode).toBe(201)
  quotes.set(key, res.json().quoteId)
  return res.json().quoteId
}

async function allocate(
  org: OrgFixture,
  currencyCode: string,
  amounts: { credits?: number; contribution?: number; partners?: string[] },
  caller: OrgFixture = org,
): Promise<string> {
  const body: Record<string, unknown> = { organisationId: org.organisationId, quoteId: await quoteFor(org, currencyCode) }
  if (amounts.credits !== undefined) body.credits = { amount: amounts.credits }
  if (amounts.contribution !== undefined)
    body.contribution = { amount: amounts.contribution, ...(amounts.partners ? { impactPartnerIds: amounts.partners } : {}) }
  const res = await client(t.app, caller.apiKey).post('/funds/allocations', body, { 'idempotency-key': randomUUID() })
  expect(res.statusCode).toBe(201)
  return res.json().fundsAllocationId
}

async function reverse(caller: OrgFixture, id: string): Promise<void> {
  expect((await client(t.app, caller.apiKey).post(`/funds/allocations/${id}/reverse`)).statusCode).toBe(201)
}

/** Moves the test clock forward to `iso`. */
function clockTo(iso: string): void {
  const ms = new Date(iso).getTime() - t.clock.now().getTime()
  expect(ms).toBeGreaterThanOrEqual(0)
  t.clock.advance(ms)
}

const query = (params: Record<string, string | undefined>) =>
  Object.entries(params)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${encodeURIComponent(v as string)}`)
    .join('&')

const summary = (key: string, params: Record<string, string | undefined>) =>
  client(t.app, key).get(`/v3/funds/allocations/summary?${query(params)}`)

async function summaryOk(key: string, params: Record<string, string | undefined>) {
  const res = await summary(key, params)
  expect(res.statusCode, res.body).toBe(200)
  return res.json()
}

interface Line {
  impactPartnerId: string
  projectId?: string
  quantityTonnes?: number
  amounts: { impact: number; impactTax: number; serviceFee: number; serviceFeeTax: number }
}
interface Rec {
  reversal: boolean
  fundsDateTime: string
  fundsOrganisationId: string
  fundsCurrencyCode: string
  credits: Line[]
  contributions: Line[]
}

/** Every record of a window, paged through the reconciliation list 100 at a time. */
async function listAll(key: string, params: Record<string, string | undefined>): Promise<Rec[]> {
  const records: Rec[] = []
  let after: string | undefined
  for (;;) {
    const res = await client(t.app, key).get(`/v3/funds/allocations/impact?${query({ ...params, limit: '100', startingAfter: after })}`)
    expect(res.statusCode, res.body).toBe(200)
    const page = res.json() as { hasMore: boolean; data: (Rec & { fundsAllocationId: string; reversalId?: string })[] }
    records.push(...page.data)
    const last = page.data.at(-1)
    if (!page.hasMore || !last) return records
    after = last.reversalId ?? last.fundsAllocationId
  }
}

interface Sums {
  allocations: number
  reversals: number
  credits: Record<'impact' | 'impactTax' | 'serviceFee' | 'serviceFeeTax' | 'quantityTonnes', Decimal>
  contributions: Record<'impact' | 'impactTax' | 'serviceFee' | 'serviceFeeTax', Decimal>
}
const zero = (): Sums => ({
  allocations: 0,
  reversals: 0,
  credits: {
    impact: new Decimal(0),
    impactTax: new Decimal(0),
    serviceFee: new Decimal(0),
    serviceFeeTax: new Decimal(0),
    quantityTonnes: new Decimal(0),
  },
  contributions: { impact: new Decimal(0), impactTax: new Decimal(0), serviceFee: new Decimal(0), serviceFeeTax: new Decimal(0) },
})

function add(sums: Sums, record: Rec, credits: Line[], contributions: Line[]): void {
  if (record.reversal) sums.reversals++
  else sums.allocations++
  for (const line of credits) {
    for (const f of ['impact', 'impactTax', 'serviceFee', 'serviceFeeTax'] as const) sums.credits[f] = sums.credits[f].plus(line.amounts[f])
    sums.credits.quantityTonnes = sums.credits.quantityTonnes.plus(line.quantityTonnes ?? 0)
  }
  for (const line of contributions) {
    for (const f of ['impact', 'impactTax', 'serviceFee', 'serviceFeeTax'] as const)
      sums.contributions[f] = sums.contributions[f].plus(line.amounts[f])
  }
}

const section = (s: Record<'impact' | 'impactTax' | 'serviceFee' | 'serviceFeeTax', Decimal>) => ({
  total: s.impact.plus(s.impactTax).plus(s.serviceFee).plus(s.serviceFeeTax).toNumber(),
  impact: s.impact.toNumber(),
  impactTax: s.impactTax.toNumber(),
  serviceFee: s.serviceFee.toNumber(),
  serviceFeeTax: s.serviceFeeTax.toNumber(),
})

const present = (currencyCode: string, s: Sums) => ({
  currencyCode,
  allocations: s.allocations,
  reversals: s.reversals,
  credits: { ...section(s.credits), quantityTonnes: s.credits.quantityTonnes.toNumber() },
  contributions: section(s.contributions),
})

/** The local calendar date of an instant in a zone, with Intl. */
const localDate = (instant: Date, zone: string): string =>
  new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(instant)

/** The date `days` after a YYYY-MM-DD date (calendar arithmetic). */
const plusDays = (date: string, days: number): string => new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY).toISOString().slice(0, 10)
const mondayOf = (date: string): string => plusDays(date, -((new Date(`${date}T00:00:00Z`).getUTCDay() + 6) % 7))

function timeKey(date: string, groupBy: string): string {
  if (groupBy === 'week') return mondayOf(date)
  if (groupBy === 'month') return date.slice(0, 7)
  return date
}

/** Every time key of [from, to) in a zone, in order. */
function timeKeys(from: Date, to: Date, zone: string, groupBy: string): string[] {
  const keys: string[] = []
  const last = localDate(new Date(to.getTime() - 1), zone)
  for (let date = localDate(from, zone); date <= last; date = plusDays(date, 1)) {
    const key = timeKey(date, groupBy)
    if (keys.at(-1) !== key) keys.push(key)
  }
  return keys
}

/** The summary a list of records should give, computed from the records alone. */
function expectedSummary(records: Rec[], groupBy: string, zone: string, from: Date, to: Date) {
  const totals = new Map<string, Sums>()
  const groups = new Map<string, Map<string, Sums>>()
  const into = (key: string, record: Rec, credits: Line[], contributions: Line[]) => {
    const byCurrency = groups.get(key) ?? new Map<string, Sums>()
    groups.set(key, byCurrency)
    const sums = byCurrency.get(record.fundsCurrencyCode) ?? zero()
    byCurrency.set(record.fundsCurrencyCode, sums)
    add(sums, record, credits, contributions)
  }
  for (const record of records) {
    const all = totals.get(record.fundsCurrencyCode) ?? zero()
    totals.set(record.fundsCurrencyCode, all)
    add(all, record, record.credits, record.contributions)
    if (groupBy === 'impactPartner') {
      const partners = new Set([...record.credits, ...record.contributions].map((l) => l.impactPartnerId))
      for (const p of partners) {
        into(
          p,
          record,
          record.credits.filter((l) => l.impactPartnerId === p),
          record.contributions.filter((l) => l.impactPartnerId === p),
        )
      }
    } else if (groupBy === 'project') {
      for (const p of new Set(record.credits.map((l) => l.projectId as string))) {
        into(
          p,
          record,
          record.credits.filter((l) => l.projectId === p),
          [],
        )
      }
    } else {
      const key =
        groupBy === 'organisation'
          ? record.fundsOrganisationId
          : groupBy === 'currency'
            ? record.fundsCurrencyCode
            : timeKey(localDate(new Date(record.fundsDateTime), zone), groupBy)
      into(key, record, record.credits, record.contributions)
    }
  }
  const currencies = [...totals.keys()].sort()
  const presentGroup = (byCurrency: Map<string, Sums> | undefined, list: string[]) =>
    list
      .filter((c) => byCurrency?.has(c) || ['day', 'week', 'month'].includes(groupBy))
      .map((c) => present(c, byCurrency?.get(c) ?? zero()))
  const keys = ['day', 'week', 'month'].includes(groupBy) ? timeKeys(from, to, zone, groupBy) : [...groups.keys()].sort()
  return {
    totals: currencies.map((c) => present(c, totals.get(c) as Sums)),
    groups: keys.map((key) => ({ key, totals: presentGroup(groups.get(key), currencies) })),
  }
}

/** What of a summary the expectation covers (names, countries and bucket instants are checked on their own). */
const comparable = (body: { totals: unknown; groups: { key: string; totals: unknown }[] }) => ({
  totals: body.totals,
  groups: body.groups.map((g) => ({ key: g.key, totals: g.totals })),
})

async function checkAgainstRecords(
  key: string,
  params: { dateTimeFrom: string; dateTimeTo: string; fundsOrganisationId?: string },
  groupBy: string,
  zone: string,
) {
  const body = await summaryOk(key, { ...params, groupBy, timeZone: zone })
  const records = await listAll(key, params)
  expect(comparable(body)).toEqual(expectedSummary(records, groupBy, zone, new Date(params.dateTimeFrom), new Date(params.dateTimeTo)))
  return { body, records }
}

const GROUP_BYS = ['day', 'week', 'month', 'impactPartner', 'project', 'organisation', 'currency'] as const

/** Rollups up to `until` (none at all for null), from scratch. */
async function rollTo(until: Date | null): Promise<void> {
  await resetRollups(t.db, t.clock.now())
  if (until) await rollUpTo(t.db, until, { now: t.clock.now, skipLocked: false })
}

const state = async () => (await sql<{ rolled_until: Date | null }>`SELECT rolled_until FROM allocation_rollup_state`.execute(t.db)).rows[0]

let reversedLater: string

beforeAll(async () => {
  // The worker is driven by hand here (rollTo); its own schedule has a test of its own below.
  t = await createTestApp({ SUMMARY_ROLLUP_WORKER: 'false' }, { metrics: true, captureLogs: true })
  await importDemoCatalogue(t.db)
  parent = await createOrg(t.db, { organisationReference: 'PSP' })
  middle = await createOrg(t.db, { parentId: parent.organisationId, tradingName: 'Middle merchant' })
  leaf = await createOrg(t.db, { parentId: middle.organisationId, tradingName: 'Leaf merchant' })
  sibling = await createOrg(t.db, { parentId: parent.organisationId, tradingName: 'Sibling merchant' })
  stranger = await createOrg(t.db)
  london = await createOrg(t.db, { tradingName: 'London florist' })
  const propRoot = await createOrg(t.db, { tradingName: 'Property PSP' })
  const propChild = await createOrg(t.db, { parentId: propRoot.organisationId })
  prop = { root: propRoot, child: propChild, grandchild: await createOrg(t.db, { parentId: propChild.organisationId }) }

  // 2026-11-21 (UTC): the parent, the middle (credits and a contribution to one partner) and a stranger.
  reversedLater = await allocate(parent, 'GBP', { credits: 10 })
  t.clock.advance(30 * 60_000)
  await allocate(middle, 'GBP', { credits: 5, contribution: 3, partners: [DEMO_PARTNER_IDS.oceanCommons] }, parent)
  await allocate(stranger, 'GBP', { credits: 4 })
  // 2026-11-22: the leaf in EUR, the sibling in JPY, the parent's allocation reversed, a contribution only.
  clockTo('2026-11-22T09:00:00Z')
  await allocate(leaf, 'EUR', { credits: 7.5 })
  await allocate(sibling, 'JPY', { credits: 1000, contribution: 500 })
  clockTo('2026-11-22T12:00:00Z')
  await reverse(parent, reversedLater)
  await allocate(leaf, 'GBP', { contribution: 2.25 })

  // London's DST changes of 2027: 28 March has 23 hours, 31 October 25.
  for (const at of ['2027-03-27T23:30:00Z', '2027-03-28T00:30:00Z', '2027-03-28T22:30:00Z', '2027-03-28T23:30:00Z']) {
    clockTo(at)
    await allocate(london, 'GBP', { credits: 2 })
  }
  for (const at of ['2027-10-30T22:30:00Z', '2027-10-30T23:30:00Z', '2027-10-31T23:30:00Z', '2027-11-01T00:30:00Z']) {
    clockTo(at)
    await allocate(london, 'GBP', { credits: 3 })
  }
})
afterAll(() => t.close())

const TREE_WINDOW = { dateTimeFrom: '2026-11-20T00:00:00Z', dateTimeTo: '2026-11-24T00:00:00Z' }

describe('GET /v3/funds/allocations/summary', () => {
  it('by day in UTC: every day of the window, each currency apart, the reversal at its own time', async () => {
    await rollTo(null)
    const body = await summaryOk(parent.apiKey, { ...TREE_WINDOW, groupBy: 'day' })
    expect(body).toMatchObject({
      dateTimeFrom: '2026-11-20T00:00:00.000Z',
      dateTimeTo: '2026-11-24T00:00:00.000Z',
      timeZone: 'UTC',
      groupBy: 'day',
    })
    expect(body.groups.map((g: { key: string }) => g.key)).toEqual(['2026-11-20', '2026-11-21', '2026-11-22', '2026-11-23'])
    const day = (key: string, currency: string) =>
      body.groups.find((g: { key: string }) => g.key === key).totals.find((c: { currencyCode: string }) => c.currencyCode === currency)
    // Every bucket lists every currency of the window, zero where it has none.
    expect(
      body.groups.every((g: { totals: { currencyCode: string }[] }) => g.totals.map((c) => c.currencyCode).join() === 'EUR,GBP,JPY'),
    ).toBe(true)
    expect(day('2026-11-20', 'GBP')).toMatchObject({
      allocations: 0,
      reversals: 0,
      credits: { total: 0, quantityTonnes: 0 },
      contributions: { total: 0 },
    })
    expect(day('2026-11-21', 'GBP')).toMatchObject({ allocations: 2, reversals: 0, credits: { total: 15 }, contributions: { total: 3 } })
    expect(day('2026-11-22', 'GBP')).toMatchObject({
      allocations: 1,
      reversals: 1,
      credits: { total: -10 },
      contributions: { total: 2.25 },
    })
    expect(day('2026-11-22', 'EUR')).toMatchObject({ allocations: 1, reversals: 0, credits: { total: 7.5 } })
    expect(day('2026-11-22', 'JPY')).toMatchObject({ allocations: 1, credits: { total: 1000 }, contributions: { total: 500 } })
    // Net of the reversal; never summed across currencies; amounts at each currency's precision.
    expect(body.totals.map((c: { currencyCode: string }) => c.currencyCode)).toEqual(['EUR', 'GBP', 'JPY'])
    const gbp = body.totals.find((c: { currencyCode: string }) => c.currencyCode === 'GBP')
    expect(gbp).toMatchObject({ allocations: 3, reversals: 1, credits: { total: 5 }, contributions: { total: 5.25 } })
    for (const c of body.totals) {
      for (const s of [c.credits, c.contributions]) {
        expect(new Decimal(s.impact).plus(s.impactTax).plus(s.serviceFee).plus(s.serviceFeeTax).toNumber()).toBe(s.total)
      }
    }
    expect(Number.isInteger(body.totals.find((c: { currencyCode: string }) => c.currencyCode === 'JPY').credits.impact)).toBe(true)
    expect(comparable(body)).toEqual(
      expectedSummary(
        await listAll(parent.apiKey, TREE_WINDOW),
        'day',
        'UTC',
        new Date(TREE_WINDOW.dateTimeFrom),
        new Date(TREE_WINDOW.dateTimeTo),
      ),
    )
  })

  it('nets a reversal out of its allocation: a window holding both sums to zero, counting each', async () => {
    await rollTo(null)
    const body = await summaryOk(parent.apiKey, { ...TREE_WINDOW, fundsOrganisationId: parent.organisationId, groupBy: 'currency' })
    expect(body.groups).toHaveLength(1)
    expect(body.groups[0]).toMatchObject({
      key: 'GBP',
      totals: [{ currencyCode: 'GBP', allocations: 1, reversals: 1, credits: { total: 0, impact: 0, quantityTonnes: 0 } }],
    })
    expect(body.totals).toEqual(body.groups[0].totals)
  })

  it('gives the figures of the records for every groupBy, in UTC and in London, with and without rollups', async () => {
    for (const until of [null, new Date('2026-11-22T10:17:00Z'), new Date('2026-12-01T00:00:00Z')]) {
      await rollTo(until)
      for (const groupBy of GROUP_BYS) {
        for (const zone of ['UTC', 'Europe/London']) await checkAgainstRecords(parent.apiKey, TREE_WINDOW, groupBy, zone)
      }
    }
  })

  it('by impact partner: a credit line under its project’s partner, a contribution under its partner, with names', async () => {
    await rollTo(new Date('2026-12-01T00:00:00Z'))
    const { body, records } = await checkAgainstRecords(parent.apiKey, TREE_WINDOW, 'impactPartner', 'UTC')
    const partners = new Set(records.flatMap((r) => [...r.credits, ...r.contributions].map((l) => l.impactPartnerId)))
    expect(body.groups.map((g: { key: string }) => g.key)).toEqual([...partners].sort())
    const ocean = body.groups.find((g: { key: string }) => g.key === DEMO_PARTNER_IDS.oceanCommons)
    expect(ocean.name).toBe('Ocean Commons (demo)')
    // The middle's contribution went to Ocean Commons only: its GBP group has that allocation and no credits.
    expect(ocean.totals.find((c: { currencyCode: string }) => c.currencyCode === 'GBP')).toMatchObject({ credits: { total: 0 } })
    // A record with lines of two partners counts once in each partner's group, and once in the totals.
    const gbp = (g: { totals: { currencyCode: string; allocations: number }[] }) =>
      g.totals.find((c) => c.currencyCode === 'GBP')?.allocations ?? 0
    expect(body.groups.reduce((n: number, g: never) => n + gbp(g), 0)).toBeGreaterThan(
      body.totals.find((c: { currencyCode: string }) => c.currencyCode === 'GBP').allocations,
    )
  })

  it('by project: credit lines only, with each project’s name and country', async () => {
    await rollTo(new Date('2026-11-21T23:00:00Z'))
    const { body } = await checkAgainstRecords(parent.apiKey, TREE_WINDOW, 'project', 'UTC')
    expect(body.groups.length).toBeGreaterThan(0)
    for (const group of body.groups) {
      expect(group.name).toMatch(/\(demo\)$/)
      expect(group).toHaveProperty('countryCode')
      for (const c of group.totals) expect(c.contributions.total).toBe(0)
    }
    // Contributions still count in the window's totals.
    expect(body.totals.find((c: { currencyCode: string }) => c.currencyCode === 'GBP').contributions.total).toBe(5.25)
  })

  it('by organisation: every organisation of the tree with records, by name; a key in the middle sees its subtree', async () => {
    await rollTo(new Date('2026-11-22T09:30:00Z'))
    const { body } = await checkAgainstRecords(parent.apiKey, TREE_WINDOW, 'organisation', 'UTC')
    expect(body.groups.map((g: { key: string }) => g.key)).toEqual([parent, middle, leaf, sibling].map((o) => o.organisationId).sort())
    expect(body.groups.find((g: { key: string }) => g.key === leaf.organisationId).name).toBe('Leaf merchant')
    const mid = await checkAgainstRecords(middle.apiKey, TREE_WINDOW, 'organisation', 'UTC')
    expect(mid.body.groups.map((g: { key: string }) => g.key)).toEqual([middle.organisationId, leaf.organisationId].sort())
    for (const groupBy of GROUP_BYS) await checkAgainstRecords(middle.apiKey, TREE_WINDOW, groupBy, 'Asia/Kolkata')
    // One organisation of the tree, named by the top key.
    const one = await checkAgainstRecords(parent.apiKey, { ...TREE_WINDOW, fundsOrganisationId: leaf.organisationId }, 'currency', 'UTC')
    expect(one.body.groups.map((g: { key: string }) => g.key)).toEqual(['EUR', 'GBP'])
  })

  it('by currency: one group per currency, never summed across them', async () => {
    await rollTo(null)
    const { body } = await checkAgainstRecords(parent.apiKey, TREE_WINDOW, 'currency', 'UTC')
    expect(body.groups.map((g: { key: string; name?: string }) => [g.key, g.name])).toEqual([
      ['EUR', undefined],
      ['GBP', undefined],
      ['JPY', undefined],
    ])
    expect(body.groups.map((g: { totals: unknown[] }) => g.totals.length)).toEqual([1, 1, 1])
  })

  it('buckets London days of 23 and 25 hours by their local dates, with their instants', async () => {
    for (const until of [null, new Date('2027-03-28T12:00:00Z'), new Date('2027-10-31T00:10:00Z'), new Date('2027-12-01T00:00:00Z')]) {
      await rollTo(until)
      const spring = await summaryOk(london.apiKey, {
        dateTimeFrom: '2027-03-27T00:00:00Z',
        dateTimeTo: '2027-03-30T00:00:00Z',
        groupBy: 'day',
        timeZone: 'Europe/London',
      })
      expect(
        spring.groups.map((g: Record<string, unknown>) => [
          g.key,
          g.dateTimeFrom,
          g.dateTimeTo,
          (g.totals as { allocations: number }[])[0]?.allocations,
        ]),
      ).toEqual([
        ['2027-03-27', '2027-03-27T00:00:00.000Z', '2027-03-28T00:00:00.000Z', 1],
        ['2027-03-28', '2027-03-28T00:00:00.000Z', '2027-03-28T23:00:00.000Z', 2], // 23 hours
        ['2027-03-29', '2027-03-28T23:00:00.000Z', '2027-03-29T23:00:00.000Z', 1],
        ['2027-03-30', '2027-03-29T23:00:00.000Z', '2027-03-30T00:00:00.000Z', 0], // 00:00 UTC is 01:00 BST
      ])
      const autumn = await summaryOk(london.apiKey, {
        dateTimeFrom: '2027-10-29T23:00:00Z',
        dateTimeTo: '2027-11-01T01:00:00Z',
        groupBy: 'day',
        timeZone: 'Europe/London',
      })
      expect(
        autumn.groups.map((g: Record<string, unknown>) => [
          g.key,
          g.dateTimeFrom,
          g.dateTimeTo,
          (g.totals as { allocations: number }[])[0]?.allocations,
        ]),
      ).toEqual([
        ['2027-10-30', '2027-10-29T23:00:00.000Z', '2027-10-30T23:00:00.000Z', 1],
        ['2027-10-31', '2027-10-30T23:00:00.000Z', '2027-11-01T00:00:00.000Z', 2], // 25 hours
        ['2027-11-01', '2027-11-01T00:00:00.000Z', '2027-11-01T01:00:00.000Z', 1],
      ])
      const weeks = await summaryOk(london.apiKey, {
        dateTimeFrom: '2027-03-20T00:00:00Z',
        dateTimeTo: '2027-11-03T00:00:00Z',
        groupBy: 'week',
        timeZone: 'Europe/London',
      })
      expect(weeks.groups[0].key).toBe('2027-03-15') // the Monday of the window's first week
      const counted = weeks.groups.filter((g: { totals: { allocations: number }[] }) => g.totals[0]?.allocations)
      expect(counted.map((g: { key: string; totals: { allocations: number }[] }) => [g.key, g.totals[0]?.allocations])).toEqual([
        ['2027-03-22', 3],
        ['2027-03-29', 1],
        ['2027-10-25', 3],
        ['2027-11-01', 1],
      ])
      const months = await summaryOk(london.apiKey, {
        dateTimeFrom: '2027-03-01T00:00:00Z',
        dateTimeTo: '2027-12-01T00:00:00Z',
        groupBy: 'month',
        timeZone: 'Europe/London',
      })
      expect(months.groups.map((g: { key: string }) => g.key)).toEqual([
        '2027-03',
        '2027-04',
        '2027-05',
        '2027-06',
        '2027-07',
        '2027-08',
        '2027-09',
        '2027-10',
        '2027-11',
      ])
      expect(months.groups.map((g: { totals: { allocations: number }[] }) => g.totals[0]?.allocations)).toEqual([4, 0, 0, 0, 0, 0, 0, 3, 1])
      // Kathmandu (+05:45): its days start at 18:15 UTC.
      const kathmandu = await summaryOk(london.apiKey, {
        dateTimeFrom: '2027-03-26T18:15:00Z',
        dateTimeTo: '2027-03-28T18:15:00Z',
        groupBy: 'day',
        timeZone: 'Asia/Kathmandu',
      })
      expect(
        kathmandu.groups.map((g: Record<string, unknown>) => [
          g.key,
          g.dateTimeFrom,
          (g.totals as { allocations: number }[])[0]?.allocations,
        ]),
      ).toEqual([
        ['2027-03-27', '2027-03-26T18:15:00.000Z', 0],
        ['2027-03-28', '2027-03-27T18:15:00.000Z', 2],
      ])
    }
  })

  it('refuses bad input with a clear 4xx naming the parameter', async () => {
    const base = { ...TREE_WINDOW, groupBy: 'day' }
    const bad = async (key: string, params: Record<string, string | undefined>, status: number, code: string, path?: string) => {
      const res = await summary(key, params)
      expect(res.statusCode, res.body).toBe(status)
      expect(res.json().code).toBe(code)
      if (path) expect(res.json().details.map((d: { path: string }) => d.path)).toContain(path)
      return res.json()
    }
    expect(
      (await bad(parent.apiKey, { ...base, timeZone: 'Mars/Olympus_Mons' }, 400, 'BAD_REQUEST', '/querystring/timeZone')).error,
    ).toMatch(/timeZone/)
    // An offset is not a zone's name, on any Node (Node 24's Intl takes it; src/domain/summary.ts, isTimeZone).
    await bad(parent.apiKey, { ...base, timeZone: '+05:30' }, 400, 'BAD_REQUEST', '/querystring/timeZone')
    expect((await bad(parent.apiKey, { ...base, groupBy: 'hour' }, 400, 'BAD_REQUEST', '/querystring/groupBy')).error).toMatch(/groupBy/)
    await bad(parent.apiKey, { ...base, groupBy: undefined }, 400, 'BAD_REQUEST', '/querystring/groupBy')
    await bad(parent.apiKey, { ...base, dateTimeTo: undefined }, 400, 'BAD_REQUEST', '/querystring/dateTimeTo')
    await bad(parent.apiKey, { ...base, dateTimeFrom: '2026-11-20' }, 400, 'BAD_REQUEST', '/querystring/dateTimeFrom')
    await bad(parent.apiKey, { ...base, limit: '10' }, 400, 'BAD_REQUEST', '/querystring/limit')
    await bad(
      parent.apiKey,
      { ...base, dateTimeFrom: '2025-01-01T00:00:00Z', dateTimeTo: '2026-01-02T00:00:01Z' },
      400,
      'INVALID_DATE_RANGE',
    )
    await bad(
      parent.apiKey,
      { ...base, dateTimeFrom: TREE_WINDOW.dateTimeTo, dateTimeTo: TREE_WINDOW.dateTimeFrom },
      400,
      'INVALID_DATE_RANGE',
    )
    await bad(parent.apiKey, { ...base, fundsOrganisationId: stranger.organisationId }, 403, 'FORBIDDEN', '/fundsOrganisationId')
    // A key in the middle of the tree may not read its parent, nor its sibling.
    await bad(middle.apiKey, { ...base, fundsOrganisationId: parent.organisationId }, 403, 'FORBIDDEN')
    await bad(middle.apiKey, { ...base, fundsOrganisationId: sibling.organisationId }, 403, 'FORBIDDEN')
    expect((await client(t.app).get(`/v3/funds/allocations/summary?${query(base)}`)).statusCode).toBe(401)
    // 366 days exactly is allowed.
    expect(
      (
        await summary(parent.apiKey, {
          ...base,
          groupBy: 'month',
          dateTimeFrom: '2026-01-01T00:00:00Z',
          dateTimeTo: '2027-01-02T00:00:00Z',
        })
      ).statusCode,
    ).toBe(200)
  })

  it('is documented in OpenAPI with every code it can answer', async () => {
    const spec = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json()
    const op = spec.paths['/funds/allocations/summary'].get
    expect(Object.keys(op.responses).sort()).toEqual(['200', '400', '401', '403', '429', '500', '503'])
    expect(op.parameters.map((p: { name: string }) => p.name).sort()).toEqual([
      'dateTimeFrom',
      'dateTimeTo',
      'fundsOrganisationId',
      'groupBy',
      'timeZone',
    ])
  })
})

describe('rollups', () => {
  const rows = () => rollupRows(t.db)

  it('are the same whether rolled up at once or bit by bit by concurrent workers', async () => {
    const until = new Date('2027-12-01T00:00:00Z')
    await rollTo(until)
    const atOnce = await rows()
    expect(atOnce.length).toBeGreaterThan(0)
    expect(new Set(atOnce.map((r) => r.grain))).toEqual(new Set(['week', 'day', 'hour', 'quarter']))
    await resetRollups(t.db, t.clock.now())
    // Ragged steps, three callers each time: the state row's lock lets one add each span once.
    for (const step of [
      '2026-11-21T10:07:00Z',
      '2026-11-22T09:00:00Z',
      '2026-11-22T11:59:59.999Z',
      '2027-03-28T00:45:00Z',
      '2027-12-01T00:00:00Z',
    ]) {
      const results = await Promise.all([0, 1, 2].map(() => rollUpTo(t.db, new Date(step), { now: t.clock.now, skipLocked: true })))
      expect(results.some((r) => r.caughtUp)).toBe(true)
    }
    expect(await rows()).toEqual(atOnce)
    expect((await state())?.rolled_until?.toISOString()).toBe(until.toISOString())
  })

  it('gain their week rows by migration exactly as the worker writes them (the sums of the day rows)', async () => {
    await rollTo(new Date('2027-03-28T00:45:00Z'))
    const byWorker = await rows()
    expect(byWorker.some((r) => r.grain === 'week')).toBe(true)
    expect(await migrateDown(t.db)).toEqual(['2026_11_28_003300_organisation_root_by_steps'])
    expect(await migrateDown(t.db)).toEqual(['2026_11_28_003200_partner_key_without_nulls'])
    expect(await migrateDown(t.db)).toEqual(['2026_11_28_003100_entries_as_strings'])
    expect(await migrateDown(t.db)).toEqual(['2026_11_28_003000_organisation_index_for_children'])
    expect(await migrateDown(t.db)).toEqual(['2026_11_28_002900_drop_allocations_quote_index'])
    expect(await migrateDown(t.db)).toEqual(['2026_11_28_002800_partner_rows_organisation_once'])
    expect(await migrateDown(t.db)).toEqual(['2026_11_28_002700_merchant_snapshots'])
    expect(await migrateDown(t.db)).toEqual(['2026_11_28_002600_lean_partner_rows_and_consumer_index'])
    expect(await migrateDown(t.db)).toEqual(['2026_11_27_002500_plpgsql_write_functions'])
    expect(await migrateDown(t.db)).toEqual(['2026_11_27_002400_compact_entries'])
    expect(await migrateDown(t.db)).toEqual(['2026_11_27_002310_analyze_partitioned_tables'])
    expect(await migrateDown(t.db)).toEqual(['2026_11_25_002300_partition_ledger'])
    expect(await migrateDown(t.db)).toEqual(['2026_11_25_002200_weekly_rollups'])
    expect((await rows()).some((r) => r.grain === 'week')).toBe(false)
    expect(await migrateToLatest(t.db)).toEqual([
      '2026_11_25_002200_weekly_rollups',
      '2026_11_25_002300_partition_ledger',
      '2026_11_27_002310_analyze_partitioned_tables',
      '2026_11_27_002400_compact_entries',
      '2026_11_27_002500_plpgsql_write_functions',
      '2026_11_28_002600_lean_partner_rows_and_consumer_index',
      '2026_11_28_002700_merchant_snapshots',
      '2026_11_28_002800_partner_rows_organisation_once',
      '2026_11_28_002900_drop_allocations_quote_index',
      '2026_11_28_003000_organisation_index_for_children',
      '2026_11_28_003100_entries_as_strings',
      '2026_11_28_003200_partner_key_without_nulls',
      '2026_11_28_003300_organisation_root_by_steps',
    ])
    expect(await rows()).toEqual(byWorker)
  })

  it('hold, in every grain, dimension and scope, exactly the records before rolled_until (gaps of months skipped)', async () => {
    for (const until of ['2026-11-22T10:17:00.123Z', '2027-03-28T00:00:00Z', '2027-12-01T00:00:00Z']) {
      await rollTo(new Date(until))
      // The records' sums per tree and currency, straight from the allocations' entries (a line is an array:
      // src/db/database.ts, StoredAllocationEntry).
      const { rows: expected } = await sql<Record<string, string>>`
        WITH recs AS (
          SELECT a.root_organisation_id AS root, a.currency_code AS currency, 1 AS sign, a.entries FROM allocations a
          WHERE a.created_at < ${until}::timestamptz
          UNION ALL
          SELECT r.root_organisation_id, a.currency_code, -1, a.entries FROM allocation_reversals r JOIN allocations a ON a.id = r.allocation_id
          WHERE r.created_at < ${until}::timestamptz
        )
        SELECT root::text, currency, count(*) FILTER (WHERE sign = 1)::text AS allocations, count(*) FILTER (WHERE sign = -1)::text AS reversals,
          (SELECT coalesce(sum(sign * ((e->>4)::numeric + (e->>9)::numeric)), 0) FROM recs r2,
             allocation_lines(r2.entries) e WHERE r2.root = recs.root AND r2.currency = recs.currency AND e->>0 = 'cr')::text AS credits,
          (SELECT coalesce(sum(sign * (e->>4)::numeric), 0) FROM recs r2, allocation_lines(r2.entries) e
             WHERE r2.root = recs.root AND r2.currency = recs.currency AND e->>0 = 'co')::text AS contributions
        FROM recs GROUP BY root, currency ORDER BY root, currency`.execute(t.db)
      expect(expected.length).toBeGreaterThan(3)
      const sets = (
        await sql<{ dimension: string; scope: string; grain: string }>`
        SELECT DISTINCT dimension, CASE WHEN organisation_id = '00000000-0000-0000-0000-000000000000' THEN 'tree' ELSE 'organisation' END AS scope, grain
        FROM allocation_rollups`.execute(t.db)
      ).rows
      // total: week, day, hour, quarter (tree) + day, hour (organisations); partner and project: week, day, hour + day.
      expect(sets).toHaveLength(14)
      for (const set of sets) {
        const { rows: stored } = await sql<Record<string, string>>`
          SELECT root_organisation_id::text AS root, currency_code AS currency, sum(allocations)::text AS allocations, sum(reversals)::text AS reversals,
            sum(credits_impact + credits_service_fee_tax)::text AS credits, sum(contributions_impact)::text AS contributions
          FROM allocation_rollups
          WHERE dimension = ${set.dimension} AND grain = ${set.grain}
            AND (organisation_id = '00000000-0000-0000-0000-000000000000') = ${set.scope === 'tree'}
          GROUP BY 1, 2 ORDER BY 1, 2`.execute(t.db)
        const amounts = (rows: Record<string, string>[], withContributions: boolean) =>
          rows.map((r) => [
            r.root,
            r.currency,
            new Decimal(r.credits as string).toString(),
            withContributions ? new Decimal(r.contributions as string).toString() : '-',
          ])
        // Partners and projects count a record once per group, so only `total` rows add up to the records' counts.
        if (set.dimension === 'total')
          expect(stored.map((r) => [r.root, r.currency, r.allocations, r.reversals])).toEqual(
            expected.map((r) => [r.root, r.currency, r.allocations, r.reversals]),
          )
        // Projects hold the credit lines only.
        const withContributions = set.dimension !== 'project'
        expect(amounts(stored, withContributions), JSON.stringify(set)).toEqual(
          amounts(expected, withContributions).filter((r) => withContributions || r[2] !== '0'),
        )
      }
    }
  })

  it('are verified day by day against the records, and a rebuild repairs them', async () => {
    await rollTo(new Date('2027-12-01T00:00:00Z'))
    expect((await verifyRollups(t.db)).mismatches).toEqual([])
    // A record that arrived after its day was rolled up, as if: the day's row lacks one allocation.
    await sql`UPDATE allocation_rollups SET allocations = allocations - 1
              WHERE root_organisation_id = ${london.organisationId}::uuid AND dimension = 'total' AND grain = 'day'
                AND organisation_id = '00000000-0000-0000-0000-000000000000' AND period_start = '2027-03-28T00:00:00Z'`.execute(t.db)
    expect((await verifyRollups(t.db)).mismatches).toEqual([
      {
        rootOrganisationId: london.organisationId,
        currencyCode: 'GBP',
        day: '2027-03-28',
        stored: { allocations: 2, reversals: 0 },
        records: { allocations: 3, reversals: 0 },
      },
    ])
    const rebuilt = await rebuildRollups({ db: t.db, clock: t.clock.now, delayMs: 300_000 })
    expect(rebuilt).toMatchObject({ caughtUp: true, busy: false })
    expect(rebuilt.rolledUntil?.getTime()).toBe(t.clock.now().getTime() - 300_000)
    expect((await verifyRollups(t.db)).mismatches).toEqual([])
  })

  it('a summary read while the worker commits still gives the records’ sums', async () => {
    await rollTo(null)
    const expected = expectedSummary(
      await listAll(parent.apiKey, TREE_WINDOW),
      'day',
      'Europe/London',
      new Date(TREE_WINDOW.dateTimeFrom),
      new Date(TREE_WINDOW.dateTimeTo),
    )
    const steps = [
      '2026-11-21T10:10:00Z',
      '2026-11-21T10:20:00Z',
      '2026-11-21T10:40:00Z',
      '2026-11-22T09:00:00.001Z',
      '2026-11-22T11:00:00Z',
      '2026-11-22T12:00:00.001Z',
      '2026-11-23T00:00:00Z',
    ]
    const worker = (async () => {
      for (const step of steps) await rollUpTo(t.db, new Date(step), { now: t.clock.now, skipLocked: true })
    })()
    const bodies = await Promise.all(
      Array.from({ length: 12 }, () => summaryOk(parent.apiKey, { ...TREE_WINDOW, groupBy: 'day', timeZone: 'Europe/London' })),
    )
    await worker
    for (const body of bodies) expect(comparable(body)).toEqual(expected)
    // What lets a summary notice the worker moved in between its two statements: the read reports the instant it saw.
    await rollTo(new Date('2026-11-22T10:00:00.007Z'))
    const seen = await readSummaries(t.db, [
      { rootOrganisationId: parent.organisationId, organisations: 'tree', dimension: 'total', key: 'currency', pieces: [] },
    ])
    expect(seen.rolledUntil?.toISOString()).toBe('2026-11-22T10:00:00.007Z')
    await rollTo(null)
    expect((await readSummaries(t.db, [])).rolledUntil).toBeNull()
  })

  it('never move rolled_until backwards', async () => {
    await rollTo(new Date('2027-01-01T00:00:00Z'))
    const progress = await rollUpTo(t.db, new Date('2026-12-01T00:00:00Z'), { now: t.clock.now, skipLocked: true })
    expect(progress).toMatchObject({ caughtUp: true, chunks: 0 })
    expect((await state())?.rolled_until?.toISOString()).toBe('2027-01-01T00:00:00.000Z')
  })

  it.runIf(onPostgres())('runs as one named prepared statement per shape, parsed once per connection (Postgres)', async () => {
    await rollTo(new Date('2026-11-22T10:00:00Z'))
    // One connection, so that every read and pg_prepared_statements (per session) see the same one.
    const handle = await t.database.open(1)
    try {
      const from = new Date(TREE_WINDOW.dateTimeFrom)
      const to = new Date(TREE_WINDOW.dateTimeTo)
      const reads = (organisations: 'tree' | string[]) => [
        {
          rootOrganisationId: parent.organisationId,
          organisations,
          dimension: 'partner' as const,
          key: 'group' as const,
          pieces: planPieces([{ from, to }], new Date('2026-11-22T10:00:00Z'), ROLLUP_GRAINS.partner.tree),
        },
      ]
      const first = await readSummaries(handle.db, reads('tree'))
      for (let i = 0; i < 7; i++) expect(await readSummaries(handle.db, reads('tree'))).toEqual(first)
      // Same shape, other values: the same statement, and the figures of those values.
      const leafOnly = await readSummaries(handle.db, reads([leaf.organisationId]))
      expect(leafOnly).not.toEqual(first)
      const { rows } = await sql<{ name: string; executions: number }>`
        SELECT name, (generic_plans + custom_plans)::int AS executions FROM pg_prepared_statements
        WHERE name LIKE 'canopy\\_%' ORDER BY executions DESC`.execute(handle.db)
      expect(rows.map((r) => r.executions)).toEqual([8, 1])
      // Partner rows come with their partner's name, read in the same statement.
      expect(first.results[0]?.length).toBeGreaterThan(0)
      for (const row of first.results[0] ?? []) expect(row.label?.name).toEqual(expect.any(String))
    } finally {
      await handle.close()
    }
  })

  it('a failing worker is logged and counted, summaries stay exact meanwhile, and it recovers', async () => {
    await rollTo(new Date('2026-11-22T00:00:00Z'))
    // Refuse any new rollup row (NOT VALID: the rows already there stay).
    await sql`ALTER TABLE allocation_rollups ADD CONSTRAINT refuse_all CHECK (allocations < 0) NOT VALID`.execute(t.db)
    try {
      const worker = t.app.summaryRollups
      worker.start()
      await expect
        .poll(() => t.logs.some((l) => l.includes('summary rollups could not be brought up to date')), { timeout: 5000 })
        .toBe(true)
      await worker.stop()
      expect(await t.metrics?.scrape()).toMatch(/canopy_summary_rollup_failures_total [1-9]/)
      expect((await state())?.rolled_until?.toISOString()).toBe('2026-11-22T00:00:00.000Z')
      for (const groupBy of ['day', 'impactPartner'] as const) await checkAgainstRecords(parent.apiKey, TREE_WINDOW, groupBy, 'UTC')
    } finally {
      await sql`ALTER TABLE allocation_rollups DROP CONSTRAINT refuse_all`.execute(t.db)
    }
    const progress = await t.app.summaryRollups.runOnce()
    expect(progress.caughtUp).toBe(true)
    // The worker rolls up to the clock minus SUMMARY_ROLLUP_DELAY_SECONDS.
    expect(progress.rolledUntil?.getTime()).toBe(t.clock.now().getTime() - t.config.SUMMARY_ROLLUP_DELAY_SECONDS * 1000)
    expect(await t.metrics?.scrape()).toMatch(/canopy_summary_rollup_lag_seconds 300\b/)
  })
})

describe('the property: summary = sum of the records', () => {
  const ZONES = [
    'UTC',
    'Europe/London',
    'America/New_York',
    'Asia/Kolkata',
    'Asia/Kathmandu',
    'Australia/Lord_Howe',
    'America/Santiago',
    'Pacific/Chatham',
  ]
  // Records from 2028-03-08 on, a few per run at random steps: US (12 March), EU (26 March), Chile, Lord Howe and
  // Chatham (2 April) DST changes fall among them.
  const SPAN_START = new Date('2028-03-08T00:00:00Z').getTime()
  const made: { id: string; reversed: boolean }[] = []

  it('holds for random allocations, reversals, windows, zones, groupings and rollup points', async () => {
    clockTo('2028-03-08T00:00:00Z')
    const orgs = [prop.root, prop.child, prop.grandchild]
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            gapMs: fc.integer({ min: 60_000, max: 9 * HOUR }),
            org: fc.integer({ min: 0, max: 2 }),
            currency: fc.constantFrom('GBP', 'EUR', 'JPY'),
            credits: fc.option(fc.integer({ min: 1, max: 5000 }), { nil: undefined }),
            contribution: fc.option(fc.integer({ min: 1, max: 5000 }), { nil: undefined }),
            reverseOne: fc.boolean(),
          }),
          { minLength: 1, maxLength: 4 },
        ),
        fc.record({
          // Fractions of the span of the records so far (a day either side): windows and rollup points fall among them.
          from: fc.double({ min: 0, max: 1, noNaN: true }),
          length: fc.double({ min: 0, max: 1, noNaN: true }),
          rolled: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: null }),
          zone: fc.constantFrom(...ZONES),
          groupBy: fc.constantFrom(...GROUP_BYS),
          scope: fc.constantFrom('root', 'middle key', 'one organisation'),
        }),
        async (writes, view) => {
          for (const w of writes) {
            t.clock.advance(w.gapMs)
            const org = orgs[w.org] as OrgFixture
            const scale = w.currency === 'JPY' ? 1 : 100
            const credits = w.credits === undefined && w.contribution === undefined ? 1 : w.credits
            made.push({
              id: await allocate(org, w.currency, {
                credits: credits && credits / scale,
                contribution: w.contribution && w.contribution / scale,
              }),
              reversed: false,
            })
            const candidate = made.find((m) => !m.reversed)
            if (w.reverseOne && candidate) {
              t.clock.advance(60_000)
              await reverse(prop.root, candidate.id)
              candidate.reversed = true
            }
          }
          const spanFrom = SPAN_START - DAY
          const spanTo = t.clock.now().getTime() + DAY
          const at = (fraction: number) => new Date(spanFrom + Math.round(fraction * (spanTo - spanFrom)))
          const from = at(view.from)
          // Short windows as often as long ones (the square), at least 1 ms.
          const to = new Date(from.getTime() + Math.max(1, Math.round(view.length ** 2 * (spanTo - from.getTime()))))
          await rollTo(view.rolled === null ? null : at(view.rolled))
          const key = view.scope === 'middle key' ? prop.child.apiKey : prop.root.apiKey
          const params = {
            dateTimeFrom: from.toISOString(),
            dateTimeTo: to.toISOString(),
            ...(view.scope === 'one organisation' ? { fundsOrganisationId: prop.grandchild.organisationId } : {}),
          }
          await checkAgainstRecords(key, params, view.groupBy, view.zone)
        },
      ),
      // Each run adds records to the same database, so a failing run is reported as it is (shrinking would replay it on
      // different records).
      { numRuns: 40, endOnFailure: true },
    )
    expect(made.length).toBeGreaterThan(40)
  }, 120_000)
})
