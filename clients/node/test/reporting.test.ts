// The client's reporting resources against the real API: a parent with a child that shares its fee, one allocation
// of the child, then the summary, profit-share records (list, one, CSV), the statement (JSON and CSV), the
// catalogue, a quote's explanation, the audit log, and deactivating and reactivating the child.
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createOrg } from '../../../test/helpers/factories.js'
import { Canopy, CanopyNotFoundError, toMinorUnits, type Allocation } from '../src/index.js'
import { floristQuote, startApi, type TestApi } from './helpers/api.js'

let api: TestApi
let parent: Canopy
let childClient: Canopy
let childId: string
let quoteId: string
let allocation: Allocation
const window = () => ({ dateTimeFrom: new Date(Date.now() - 3_600_000), dateTimeTo: new Date(Date.now() + 3_600_000) })

const text = async (stream: AsyncIterable<unknown>): Promise<string> => {
  const chunks: Buffer[] = []
  for await (const chunk of stream) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

beforeAll(async () => {
  api = await startApi({ WEBHOOK_WORKER: 'false' })
  parent = new Canopy({ apiKey: api.org.apiKey, baseUrl: api.baseUrl })
  // A root's own share is the operator's to set (the CLI); the child's is its parent's, through the API below.
  await sql`UPDATE organisations SET relative_profit_share = 0.2 WHERE id = ${api.org.organisationId}`.execute(api.db)
  const child = await parent.organisations.create({
    parentOrganisationId: api.org.organisationId,
    tradingName: 'Sharing shop',
    legalName: 'Sharing shop Ltd',
    address: { line1: '2 High Street', city: 'London', postalCode: 'SW1A 1AA', countryCode: 'GBR' },
    currencyCode: 'GBP',
  })
  childId = child.organisationId
  await parent.organisations.update(childId, { relativeProfitShare: 0.5 })
  const key = await parent.apiKeys.create({ organisationId: childId, mode: 'test' })
  childClient = new Canopy({ apiKey: key.apiKey, baseUrl: api.baseUrl })
  const quote = await childClient.quotes.createCarbon(floristQuote(childId))
  quoteId = quote.quoteId
  allocation = await childClient.allocations.create({
    organisationId: childId,
    quoteId,
    credits: { amount: '0.28' },
    contribution: { amount: 1 },
  })
})
afterAll(async () => {
  await api?.close()
})

describe('reporting resources', () => {
  it('summaries.retrieve: the window per currency, equal to the allocation', async () => {
    const summary = await parent.summaries.retrieve({ ...window(), groupBy: 'currency' })
    expect(summary.groupBy).toBe('currency')
    expect(summary.totals).toHaveLength(1)
    const [gbp] = summary.totals
    expect(gbp).toMatchObject({ currencyCode: 'GBP', allocations: 1, reversals: 0 })
    expect(toMinorUnits(gbp!.credits.total, 'GBP') + toMinorUnits(gbp!.contributions.total, 'GBP')).toBe(128)
    expect(summary.groups.map((g) => g.key)).toEqual(['GBP'])
  })

  it('profitShare: list (auto-paginated), retrieve and the CSV export name the allocation; another tree sees nothing', async () => {
    const records = await parent.profitShare.list({ ...window(), limit: 1 }).toArray({ limit: 10 })
    expect(records.map((r) => r.fundsAllocationId)).toEqual([allocation.fundsAllocationId])
    const one = await parent.profitShare.retrieve(allocation.fundsAllocationId)
    expect(one.profitShareAllocations.map((line) => line.beneficiaryOrganisationId)).toContain(childId)
    const csv = await text(await parent.profitShare.exportCsv(window()))
    expect(csv.split(/\r?\n/)[0]).toMatch(/^[a-zA-Z]/)
    expect(csv).toContain(allocation.fundsAllocationId)
    const stranger = new Canopy({ apiKey: (await createOrg(api.db)).apiKey, baseUrl: api.baseUrl })
    await expect(stranger.profitShare.retrieve(allocation.fundsAllocationId)).rejects.toBeInstanceOf(CanopyNotFoundError)
  })

  it('statements: the month as JSON and as CSV', async () => {
    const period = new Date().toISOString().slice(0, 7)
    const statement = await parent.statements.retrieve({ organisationId: childId, period })
    expect(statement.period).toBe(period)
    const csv = await text(await parent.statements.retrieveCsv({ organisationId: childId, period }))
    expect(csv.trim().split(/\r?\n/).length).toBeGreaterThan(1)
    expect(csv.startsWith('{')).toBe(false)
  })

  it('impactPartners: the catalogue’s partners and projects, a page at a time', async () => {
    const partners = await parent.impactPartners.list()
    expect(partners.length).toBeGreaterThan(0)
    const projects = await parent.impactPartners.listProjects({ limit: 1 })
    expect(projects).toHaveLength(1)
    const next = await parent.impactPartners.listProjects({ limit: 1, startingAfter: projects[0]!.id })
    expect(next[0]?.id).not.toBe(projects[0]!.id)
  })

  it('quotes.explain: how the quote was priced', async () => {
    const explained = await childClient.quotes.explain(quoteId)
    expect(JSON.stringify(explained)).toContain(quoteId)
  })

  it('organisations: the tree, deactivate and reactivate a child (a repeat changes nothing); the audit log has it all', async () => {
    const tree = await parent.organisations.list()
    expect(JSON.stringify(tree)).toContain(childId)
    await parent.organisations.deactivate(childId)
    await parent.organisations.deactivate(childId)
    await parent.organisations.reactivate(childId)
    const events = await parent.auditEvents.list({ limit: 2 }).toArray({ limit: 50 })
    const types = events.map((e) => e.type)
    expect(types).toEqual(
      expect.arrayContaining(['organisation.created', 'organisation.updated', 'organisation.deactivated', 'organisation.reactivated']),
    )
    expect(types[0]).toBe('organisation.reactivated')
  })
})
