import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MIN_ROLLUP_SPAN_MS, resetRollups, rollUpTo } from '../../src/services/summary-rollups.js'
import { client, createTestApp, type TestApp } from '../helpers/app.js'
import { onPostgres } from '../helpers/db.js'
import { rollupRows } from '../helpers/rollups.js'
import { createOrg, floristQuote, importDemoCatalogue } from '../helpers/factories.js'

// A span of records too large for one statement (a busy day after an outage, a rebuild) must still be rolled up: the
// roll-up tries shorter spans after a statement timeout instead of failing the same way at every tick. Postgres only:
// the timeout is the server's statement_timeout. Which spans time out is made deterministic by a trigger that sleeps
// 0.1 s for each quarter-hour row of the tree's totals: a span of n quarters with records takes at least n × 0.1 s.

const QUARTER = 15 * 60_000
const QUARTERS = 24
const DAY = 24 * 60 * 60_000

let t: TestApp
let until: Date

const rows = () => rollupRows(t.db)

describe.runIf(onPostgres())('summary roll-up spans', () => {
  beforeAll(async () => {
    t = await createTestApp({ SUMMARY_ROLLUP_WORKER: 'false' })
    await importDemoCatalogue(t.db)
    const org = await createOrg(t.db)
    const quote = await client(t.app, org.apiKey).post('/quotes/carbon', floristQuote(org.organisationId))
    expect(quote.statusCode).toBe(201)
    // One allocation in each of 24 quarter hours (six hours of one UTC day).
    for (let i = 0; i < QUARTERS; i++) {
      const res = await client(t.app, org.apiKey).post(
        '/funds/allocations',
        { organisationId: org.organisationId, quoteId: quote.json().quoteId, credits: { amount: 1 } },
        { 'idempotency-key': randomUUID() },
      )
      expect(res.statusCode).toBe(201)
      t.clock.advance(QUARTER)
    }
    until = t.clock.now()
  })
  afterAll(() => t?.close())

  it('a span that outlasts the statement timeout is rolled up in shorter spans, to the same rows', async () => {
    await rollUpTo(t.db, until, { now: t.clock.now, skipLocked: false })
    const atOnce = await rows()
    expect(atOnce.filter((r) => r.grain === 'quarter')).toHaveLength(QUARTERS)
    await resetRollups(t.db, t.clock.now())

    await sql`
      CREATE FUNCTION test_slow_quarter() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.grain = 'quarter' THEN PERFORM pg_sleep(0.1); END IF;
        RETURN NEW;
      END $$`.execute(t.db)
    await sql`CREATE TRIGGER test_slow_quarter BEFORE INSERT ON allocation_rollups FOR EACH ROW EXECUTE FUNCTION test_slow_quarter()`.execute(
      t.db,
    )
    // One connection with a 1 s statement timeout: the whole six hours (2.4 s of sleep) cannot pass in one statement.
    const slow = await t.database.open(1)
    try {
      await sql`SET statement_timeout = 1000`.execute(slow.db)
      const progress = await rollUpTo(slow.db, until, { now: t.clock.now, skipLocked: false })
      expect(progress).toMatchObject({ caughtUp: true, rolledUntil: until })
      expect(progress.chunks).toBeGreaterThan(1)
      expect(progress.spanMs).toBeLessThan(DAY)
      expect(await rows()).toEqual(atOnce)

      // At the shortest span a statement still too slow is not hidden: the timeout is thrown.
      await resetRollups(t.db, t.clock.now())
      await sql`SET statement_timeout = 50`.execute(slow.db)
      await expect(rollUpTo(slow.db, until, { now: t.clock.now, skipLocked: false, spanMs: MIN_ROLLUP_SPAN_MS })).rejects.toMatchObject({
        code: '57014',
      })
    } finally {
      await slow.close()
      await sql`DROP TRIGGER test_slow_quarter ON allocation_rollups`.execute(t.db)
      await sql`DROP FUNCTION test_slow_quarter()`.execute(t.db)
    }
    // Starting from the shortest span (the spans then double), without the trigger: the same rows again.
    await resetRollups(t.db, t.clock.now())
    const fromShortest = await rollUpTo(t.db, until, { now: t.clock.now, skipLocked: false, spanMs: MIN_ROLLUP_SPAN_MS })
    expect(fromShortest.caughtUp).toBe(true)
    expect(fromShortest.chunks).toBeGreaterThan(10)
    expect(await rows()).toEqual(atOnce)
  })
})
