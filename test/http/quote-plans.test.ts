// Quote plans (src/services/quote-plans.ts) with the reference-data cache on (its default TTL): quotes of one context
// reuse one plan while the catalogue, the exchange rates and the organisation's settings stay loaded, and give exactly
// the bytes a freshly planned quote gives; once any of those inputs is loaded again (after the cache's TTL), the next
// quote is priced from it, as without plans.
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_PARTNER_IDS } from '../../src/domain/data/demo-catalogue.js'
import { demoCatalogue, importCatalogue } from '../../src/services/catalogue.js'
import { importFxRates } from '../../src/services/fx.js'
import { client, createTestApp, type TestApp } from '../helpers/app.js'
import { createOrg, floristQuote, importDemoCatalogue, type OrgFixture } from '../helpers/factories.js'
import { DAILY } from '../helpers/fx-files.js'

let t: TestApp
let merchant: OrgFixture

beforeAll(async () => {
  // The reference cache's default TTL; no quote cache, so reading a quote back goes to its row and snapshot.
  t = await createTestApp({ QUOTE_CACHE_SIZE: '0' })
  await importDemoCatalogue(t.db)
  merchant = await createOrg(t.db)
})
afterAll(() => t.close())

const details = { responseOptions: { includeImpactPartnerDetails: true, includeImpactPartnerRates: true } }
const quote = async (extra: Record<string, unknown> = {}) => {
  const res = await client(t.app, merchant.apiKey).post('/quotes/carbon', floristQuote(merchant.organisationId, { ...details, ...extra }))
  expect(res.statusCode).toBe(201)
  return res
}
/** The body without what differs between any two quotes (their id and time). */
const withoutId = (body: string) => body.replace(/"quoteId":"[^"]+"/, '"quoteId":"…"').replace(/"createdAt":"[^"]+"/, '"createdAt":"…"')
/** Past the reference cache's TTL: the organisation, the catalogue and the rates are loaded again. */
const reload = () => t.clock.advance(t.config.CATALOGUE_CACHE_TTL_MS + 1)
const explain = async (quoteId: string) => (await client(t.app, merchant.apiKey).get(`/quotes/${quoteId}/explain`)).json()

describe('quote plans', () => {
  it('quotes priced from a kept plan are byte for byte those priced from a fresh one, as created and as read back', async () => {
    const amounts = [47.97, 0.01, 1, 3.5, 12345.67, 47.97, 250]
    const kept: string[] = []
    for (const amount of amounts) kept.push((await quote({ transaction: { amount, currencyCode: 'GBP' } })).body)
    const fresh: string[] = []
    for (const amount of amounts) {
      reload()
      fresh.push((await quote({ transaction: { amount, currencyCode: 'GBP' } })).body)
    }
    expect(kept.map(withoutId)).toEqual(fresh.map(withoutId))
    for (const body of [...kept, ...fresh]) {
      const read = await client(t.app, merchant.apiKey).get(`/quotes/${JSON.parse(body).quoteId}`)
      expect(read.body).toBe(body)
    }
  })

  it('a catalogue import (a project price) prices the next quote once the catalogue is loaded again', async () => {
    reload()
    const before = await quote()
    const [first] = (await client(t.app, merchant.apiKey).get(`/quotes/${before.json().quoteId}/projects`)).json()
    const catalogue = demoCatalogue()
    const changed = catalogue.projects.find((p) => p.id === first.id)
    if (!changed) throw new Error(`project ${first.id} is not in the demo catalogue`)
    changed.price = (Number(changed.price) * 2).toFixed(2)
    await importCatalogue(t.db, catalogue, t.clock.now())

    // Within the TTL the loaded catalogue still prices, plans or not.
    expect((await quote()).json().credits.unit.price).toBe(before.json().credits.unit.price)
    reload()
    const after = await quote()
    expect(after.json().credits.unit.price).toBeGreaterThan(before.json().credits.unit.price)
    expect(after.json().credits.amounts.total).toBeGreaterThan(before.json().credits.amounts.total)
    const [repriced] = (await client(t.app, merchant.apiKey).get(`/quotes/${after.json().quoteId}/projects`)).json()
    expect(repriced.id).toBe(first.id)
    expect(repriced.unit.price).toBeGreaterThan(first.unit.price * 1.99)
    await importDemoCatalogue(t.db)
  })

  it('an FX import prices the next quote with the new rate once the rates are loaded again', async () => {
    reload()
    const before = await quote()
    expect((await explain(before.json().quoteId)).footprint.fx).toMatchObject({ date: '2026-02-06' })
    await importFxRates(t.db, { csv: DAILY, fileName: 'eurofxref.csv' }, t.clock.now())
    reload()
    const after = await quote()
    const fx = (await explain(after.json().quoteId)).footprint.fx
    expect(fx).toMatchObject({ date: '2026-11-20' })
    expect(fx.rate).not.toBe((await explain(before.json().quoteId)).footprint.fx.rate)
  })

  it("an organisation's new service fee prices the next quote once its settings are loaded again", async () => {
    reload()
    const before = (await quote()).json()
    expect(before.credits.effectiveRates.serviceFee).toBeGreaterThan(0)
    await sql`UPDATE organisations SET service_fee_rate = 0 WHERE id = ${merchant.organisationId}`.execute(t.db)
    reload()
    const after = (await quote()).json()
    expect(after.credits.effectiveRates.serviceFee).toBe(0)
    expect(after.credits.amounts.serviceFee).toBe(0)
    await sql`UPDATE organisations SET service_fee_rate = 0.2 WHERE id = ${merchant.organisationId}`.execute(t.db)
  })

  it("an organisation's allowed partners (not part of a plan's key) decide the next quote's partners once loaded again", async () => {
    reload()
    const before = (await quote()).json()
    const contribution = before.contribution.impactPartners.map((p: { id: string }) => p.id)
    expect(contribution.length).toBeGreaterThan(1)
    const credits = before.credits.impactPartners.map((p: { id: string }) => p.id)
    const keep = [...credits, contribution[0]]
    for (const id of keep) {
      await sql`INSERT INTO organisation_impact_partners (organisation_id, impact_partner_id) VALUES (${merchant.organisationId}, ${id})`.execute(
        t.db,
      )
    }
    reload()
    const after = (await quote()).json()
    expect(after.contribution.impactPartners.map((p: { id: string }) => p.id)).toEqual([contribution[0]])
    expect(after.partnerRates.contribution.map((p: { partnerId: string }) => p.partnerId)).toEqual([contribution[0]])
    await sql`DELETE FROM organisation_impact_partners WHERE organisation_id = ${merchant.organisationId}`.execute(t.db)
    expect(Object.values(DEMO_PARTNER_IDS)).toEqual(expect.arrayContaining(keep))
  })
})
