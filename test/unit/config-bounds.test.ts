// The database bounds: defaults in the low seconds, and an order that is checked at start-up.
import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../src/config.js'
import { POSTGRES_BOUNDS } from '../../src/db/connect.js'

describe('database bounds', () => {
  it('default to a few seconds, nested: lock wait < statement_timeout < client-side bound', () => {
    const config = loadConfig({})
    expect(config).toMatchObject({
      DATABASE_CONNECT_TIMEOUT_MS: 2000,
      IDEMPOTENCY_LOCK_TIMEOUT_MS: 2000,
      DATABASE_STATEMENT_TIMEOUT_MS: 3000,
      DATABASE_QUERY_TIMEOUT_MS: 4000,
      DATABASE_STARTUP_TIMEOUT_MS: 30000,
      READINESS_TIMEOUT_MS: 750,
    })
    expect(config.IDEMPOTENCY_LOCK_TIMEOUT_MS).toBeLessThan(config.DATABASE_STATEMENT_TIMEOUT_MS)
    expect(config.DATABASE_STATEMENT_TIMEOUT_MS).toBeLessThan(config.DATABASE_QUERY_TIMEOUT_MS)
    expect(config.READINESS_TIMEOUT_MS).toBeLessThan(1000)
  })

  it('openPostgres uses the same defaults when called without configuration (tests, bench)', () => {
    const config = loadConfig({})
    expect(POSTGRES_BOUNDS).toEqual({
      connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
      queryTimeoutMs: config.DATABASE_QUERY_TIMEOUT_MS,
      statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
      lockTimeoutMs: config.IDEMPOTENCY_LOCK_TIMEOUT_MS,
    })
  })

  it.each([
    [{ DATABASE_STATEMENT_TIMEOUT_MS: '4000' }, /DATABASE_STATEMENT_TIMEOUT_MS=4000: must be below DATABASE_QUERY_TIMEOUT_MS \(4000\)/],
    [{ DATABASE_QUERY_TIMEOUT_MS: '2500' }, /DATABASE_STATEMENT_TIMEOUT_MS=3000: must be below DATABASE_QUERY_TIMEOUT_MS \(2500\)/],
    [{ IDEMPOTENCY_LOCK_TIMEOUT_MS: '5000' }, /IDEMPOTENCY_LOCK_TIMEOUT_MS=5000: must be below DATABASE_STATEMENT_TIMEOUT_MS \(3000\)/],
  ])('refuses %j, naming both keys', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError)
    expect(() => loadConfig(env)).toThrow(message)
  })

  it('accepts larger bounds that keep the order (a long migration)', () => {
    expect(loadConfig({ DATABASE_STATEMENT_TIMEOUT_MS: '600000', DATABASE_QUERY_TIMEOUT_MS: '610000' })).toMatchObject({
      DATABASE_STATEMENT_TIMEOUT_MS: 600000,
      DATABASE_QUERY_TIMEOUT_MS: 610000,
    })
  })

  it('refuses a read replica without a primary, and replica bounds out of range', () => {
    expect(() => loadConfig({ DATABASE_REPLICA_URL: 'postgres://r:5432/canopy' })).toThrow(/DATABASE_REPLICA_URL: needs DATABASE_URL/)
    expect(() => loadConfig({ DATABASE_URL: 'postgres://p/c', DATABASE_REPLICA_URL: 'mysql://r/c' })).toThrow(/DATABASE_REPLICA_URL/)
    expect(() => loadConfig({ DATABASE_REPLICA_MAX_LAG_MS: '50' })).toThrow(/DATABASE_REPLICA_MAX_LAG_MS/)
    expect(() => loadConfig({ DATABASE_REPLICA_CHECK_INTERVAL_MS: '0' })).toThrow(/DATABASE_REPLICA_CHECK_INTERVAL_MS/)
    expect(loadConfig({ DATABASE_URL: 'postgres://p/c', DATABASE_REPLICA_URL: 'postgres://r/c' })).toMatchObject({
      DATABASE_REPLICA_URL: 'postgres://r/c',
      DATABASE_REPLICA_MAX_LAG_MS: 5000,
      DATABASE_REPLICA_CHECK_INTERVAL_MS: 1000,
    })
  })

  it.each([
    ['DATABASE_QUERY_TIMEOUT_MS', '0'],
    ['DATABASE_STARTUP_TIMEOUT_MS', '-1'],
    ['READINESS_TIMEOUT_MS', '20000'],
  ])('rejects %s=%s', (key, value) => {
    expect(() => loadConfig({ [key]: value })).toThrow(new RegExp(key))
  })
})
