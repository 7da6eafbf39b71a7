import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../src/config.js'

describe('loadConfig', () => {
  it('applies documented defaults to an empty environment', () => {
    const config = loadConfig({})
    expect(config).toMatchObject({
      PORT: 3000,
      HOST: '127.0.0.1',
      DATA_DIR: '.data',
      LOG_LEVEL: 'info',
      RATE_LIMIT_PER_MINUTE: 6000,
      SESSION_TTL_SECONDS: 1800,
      IDEMPOTENCY_LOCK_TIMEOUT_MS: 2000,
      BODY_LIMIT_BYTES: 1048576,
      MIGRATE_ON_START: false,
    })
    expect(config.DATABASE_URL).toBeUndefined()
    expect(Object.isFrozen(config)).toBe(true)
  })

  it('converts numbers and booleans', () => {
    const config = loadConfig({ PORT: '8080', MIGRATE_ON_START: 'true', DEMO_BOOTSTRAP: '0', DATABASE_URL: 'postgres://u@h:5432/d' })
    expect(config).toMatchObject({ PORT: 8080, MIGRATE_ON_START: true, DEMO_BOOTSTRAP: false, DATABASE_URL: 'postgres://u@h:5432/d' })
  })

  it('ignores unrelated and empty variables', () => {
    expect(loadConfig({ PATH: '/bin', PORT: '' }).PORT).toBe(3000)
  })

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['LOG_LEVEL', 'loud'],
    ['DATABASE_URL', 'mysql://x'],
    ['MIGRATE_ON_START', 'maybe'],
    ['AUTH_CACHE_TTL_MS', '60000'],
    ['IDEMPOTENCY_LOCK_TIMEOUT_MS', '0'],
    ['SMTP_URL', 'http://mail'],
  ])('rejects %s=%s with a message naming the key', (key, value) => {
    expect(() => loadConfig({ [key]: value })).toThrow(ConfigError)
    expect(() => loadConfig({ [key]: value })).toThrow(new RegExp(key))
  })

  it('reports every problem at once', () => {
    try {
      loadConfig({ PORT: 'x', LOG_LEVEL: 'y' })
      expect.unreachable()
    } catch (error) {
      expect((error as ConfigError).problems.join('\n')).toMatch(/PORT[\s\S]*LOG_LEVEL|LOG_LEVEL[\s\S]*PORT/)
    }
  })
})
