// The sign-in throttle's counters in Redis (REDIS_URL; the local Redis, or TEST_REDIS_URL) shared by two API apps,
// and its fall-back to the database when Redis fails: failures counted in one app slow the next attempt in the other.
import { randomUUID } from 'node:crypto'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { databaseFailureStore, redisFailureStore, SignInThrottle, throttleKeys, withFallback } from '../../src/services/hub/throttle.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { onPostgres } from '../helpers/db.js'

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'
let redis: Redis
let t: TestApp

// Redis is part of the Postgres run's setup (.ci/run starts it), as for the replicas test.
describe.runIf(onPostgres())('the sign-in throttle in Redis', () => {
  beforeAll(async () => {
    redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 })
    await redis.connect()
    t = await createTestApp()
  })
  afterAll(async () => {
    redis?.disconnect()
    await t?.close()
  })

  it('shares the counts between processes and forgets an account on success', async () => {
    const [a, b] = [new SignInThrottle(redisFailureStore(redis)), new SignInThrottle(redisFailureStore(redis))]
    const keys = throttleKeys(`${randomUUID()}@example.com`, `198.51.100.${Math.floor(Math.random() * 200)}`)
    const now = new Date('2026-11-21T10:00:00Z')
    for (let i = 0; i < 5; i++) await (i % 2 ? a : b).recordFailure(keys, now)
    expect(await a.waitMs(keys, now)).toBe(1000)
    expect(await b.waitMs(keys, new Date(now.getTime() + 400))).toBe(600)
    expect(await b.waitMs(keys, new Date(now.getTime() + 1000))).toBe(0)
    expect(await redis.pttl(`canopy:sign-in:${keys.account}`)).toBeGreaterThan(59 * 60_000)
    await a.recordSuccess(keys)
    expect(await b.waitMs({ ...keys, address: 'address:none' }, now)).toBe(0)
  })

  it('counts in the database while Redis fails (never fails open)', async () => {
    const broken = new Redis('redis://127.0.0.1:1', { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false })
    broken.on('error', () => {})
    const errors: unknown[] = []
    const throttle = new SignInThrottle(withFallback(redisFailureStore(broken), databaseFailureStore(t.db), (e) => errors.push(e)))
    const keys = throttleKeys(`${randomUUID()}@example.com`, '198.51.100.250')
    const now = t.clock.now()
    for (let i = 0; i < 6; i++) await throttle.recordFailure(keys, now)
    expect(await throttle.waitMs(keys, now)).toBe(2000)
    expect(errors.length).toBeGreaterThan(0)
    broken.disconnect()
  })
})
