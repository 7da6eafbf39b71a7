// organisation_root (migrations/2026_11_28_003300_organisation_root_by_steps.ts), which every allocation INSERT calls
// to find the top of the allocating organisation's tree, gives what the recursive CTE it replaced gave, for every
// shape of tree: a root, a PSP's merchant, a chain deeper than its 32 steps, an unknown organisation.
import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { migrateDown, migrateToLatest } from '../../src/db/migrate.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { createOrg } from '../helpers/factories.js'

const MIGRATION = '2026_11_28_003300_organisation_root_by_steps'

let t: TestApp
/** Every organisation of the tests, and one that does not exist. */
let ids: string[]

beforeAll(async () => {
  t = await createTestApp({ WEBHOOK_WORKER: 'false' })
  const alone = await createOrg(t.db)
  const psp = await createOrg(t.db)
  const merchant = await createOrg(t.db, { parentId: psp.organisationId })
  const subMerchant = await createOrg(t.db, { parentId: merchant.organisationId })
  // A chain of 40, linked by hand: deeper than the 32 steps the walk takes.
  const chain: string[] = []
  for (let i = 0; i < 40; i++) chain.push((await createOrg(t.db)).organisationId)
  for (let i = 1; i < chain.length; i++) {
    await sql`UPDATE organisations SET parent_id = ${chain[i - 1]}::uuid WHERE id = ${chain[i]}::uuid`.execute(t.db)
  }
  ids = [alone, psp, merchant, subMerchant].map((o) => o.organisationId).concat(chain, randomUUID())
})
afterAll(() => t.close())

/** organisation_root of every id, by the function. */
const roots = async (): Promise<(string | null)[]> => {
  const found: (string | null)[] = []
  for (const id of ids) {
    const { rows } = await sql<{ root: string | null }>`SELECT organisation_root(${id}::uuid) AS root`.execute(t.db)
    found.push(rows[0]?.root ?? null)
  }
  return found
}

/** The same, by the recursive CTE of migrations 001200 and 002500. */
const rootsByCte = async (): Promise<(string | null)[]> => {
  const found: (string | null)[] = []
  for (const id of ids) {
    const { rows } = await sql<{ root: string | null }>`
      SELECT (
        WITH RECURSIVE up AS (
          SELECT id, parent_id, 0 AS depth FROM organisations WHERE id = ${id}::uuid
          UNION ALL
          SELECT o.id, o.parent_id, up.depth + 1 FROM organisations o JOIN up ON o.id = up.parent_id WHERE up.depth < 32
        )
        SELECT id FROM up ORDER BY depth DESC LIMIT 1
      ) AS root`.execute(t.db)
    found.push(rows[0]?.root ?? null)
  }
  return found
}

describe('organisation_root by steps', () => {
  it('gives the top of every tree as the recursive CTE did, within 32 steps, and NULL for an unknown organisation', async () => {
    const found = await roots()
    expect(found).toEqual(await rootsByCte())
    const [alone, psp] = ids
    expect(found.slice(0, 4)).toEqual([alone, psp, psp, psp])
    // The chain: its first 33 reach its head; the 34th is 33 steps below it, so its walk stops one below the head.
    const chain = ids.slice(4, 44)
    expect(found.slice(4, 37)).toEqual(Array(33).fill(chain[0]))
    expect(found[37]).toBe(chain[1])
    expect(found.at(-1)).toBeNull()
  })

  it('is the CTE again after its migration is undone, and the steps after it is applied again', async () => {
    const before = await roots()
    expect(await migrateDown(t.db)).toEqual([MIGRATION])
    expect(await roots()).toEqual(before)
    const { rows } = await sql<{ source: string }>`SELECT prosrc AS source FROM pg_proc WHERE proname = 'organisation_root'`.execute(t.db)
    expect(rows[0]?.source).toContain('WITH RECURSIVE')
    await migrateToLatest(t.db)
    expect(await roots()).toEqual(before)
  })
})
