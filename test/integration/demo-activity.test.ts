import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { bootstrapDemo, seedDemoActivity } from '../../src/bootstrap/demo.js'
import { loadConfig } from '../../src/config.js'
import type { DatabaseHandle } from '../../src/db/connect.js'
import { client } from '../helpers/app.js'
import { createTestDatabase, type TestDatabase } from '../helpers/db.js'

// npm run demo (DEMO_ACTIVITY): four weeks of allocations and reversals through the real services, written once.
let database: TestDatabase
let handle: DatabaseHandle
let dataDir: string

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'canopy-demo-'))
  database = await createTestDatabase()
  handle = await database.open()
})
afterAll(async () => {
  await database.drop()
  rmSync(dataDir, { recursive: true, force: true })
})

describe('demo activity', () => {
  it('seeds weeks of allocations and reversals for the demo organisation and two children, once; summaries show them', async () => {
    const createdAt = new Date('2026-11-24T12:00:00Z')
    const credentials = await bootstrapDemo(handle.db, dataDir, createdAt)
    expect(credentials).toBeDefined()
    const first = await seedDemoActivity(handle.db, dataDir)
    expect(first?.allocations).toBeGreaterThan(80)
    expect(first?.reversals).toBeGreaterThan(3)
    expect(first?.written).toBe((first?.allocations ?? 0) + (first?.reversals ?? 0))
    // A restart writes nothing again.
    expect(await seedDemoActivity(handle.db, dataDir)).toEqual({ ...first, written: 0 })

    const app = await buildApp({ config: loadConfig({ LOG_LEVEL: 'silent', SUMMARY_ROLLUP_WORKER: 'false' }), database: handle })
    try {
      const api = client(app, credentials?.apiKey)
      const window = 'dateTimeFrom=2026-10-26T00:00:00Z&dateTimeTo=2026-11-25T00:00:00Z'
      const byWeek = (await api.get(`/v3/funds/allocations/summary?${window}&groupBy=week&timeZone=Europe/London`)).json()
      expect(byWeek.totals.map((t: { currencyCode: string }) => t.currencyCode)).toEqual(['EUR', 'GBP'])
      expect(byWeek.groups.length).toBeGreaterThanOrEqual(5)
      const gbp = byWeek.totals.find((t: { currencyCode: string }) => t.currencyCode === 'GBP')
      expect(gbp.allocations + (byWeek.totals[0]?.allocations ?? 0)).toBe(first?.allocations)
      expect(gbp.reversals + (byWeek.totals[0]?.reversals ?? 0)).toBe(first?.reversals)
      expect(gbp.credits.quantityTonnes).toBeGreaterThan(0)
      const byOrganisation = (await api.get(`/v3/funds/allocations/summary?${window}&groupBy=organisation`)).json()
      expect(byOrganisation.groups.map((g: { name: string }) => g.name).sort()).toEqual([
        'Blossom & Bloom (demo)',
        'Blossom & Bloom Dublin (demo)',
        'Blossom & Bloom Manchester (demo)',
      ])
      const byPartner = (await api.get(`/v3/funds/allocations/summary?${window}&groupBy=impactPartner`)).json()
      expect(byPartner.groups.length).toBeGreaterThanOrEqual(4)
    } finally {
      await app.close()
    }
  }, 120_000)
})
