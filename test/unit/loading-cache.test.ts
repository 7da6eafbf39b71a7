// The services' cache of loaded values (src/services/cache.ts, createLoadingCache): shared misses, a refresh in the
// background past half the TTL, and never a value served longer than the TTL after its load began.
import { describe, expect, it } from 'vitest'
import { createLoadingCache } from '../../src/services/cache.js'

/** A load whose completion the test decides, counting its calls. */
function loads<V>() {
  const pending: { resolve: (value: V) => void; reject: (error: Error) => void; previous: V | undefined }[] = []
  const load = (previous: V | undefined) =>
    new Promise<V>((resolve, reject) => {
      pending.push({ resolve, reject, previous })
    })
  return { load, pending }
}

const settle = () => new Promise((resolve) => setImmediate(resolve))

function clockAt(start: number) {
  const clock = { t: start, now: () => clock.t }
  return clock
}

/** A cache (TTL 100 ms) holding `value` for 'k', loaded at 1,000 ms, with the clock and the loads that follow. */
async function loadedAt1000(value: string) {
  const clock = clockAt(1_000)
  const cache = createLoadingCache<string>({ max: 10, ttlMs: 100, now: clock.now })
  const { load, pending } = loads<string>()
  const first = cache.get('k', load)
  pending[0]!.resolve(value)
  await first
  return { clock, cache, load, pending }
}

describe('createLoadingCache', () => {
  it('shares one load between concurrent misses, then answers from the cache', async () => {
    const clock = clockAt(1_000)
    const cache = createLoadingCache<string>({ max: 10, ttlMs: 100, now: clock.now })
    const { load, pending } = loads<string>()
    const a = cache.get('k', load)
    const b = cache.get('k', load)
    expect(pending).toHaveLength(1)
    pending[0]!.resolve('v1')
    expect(await a).toBe('v1')
    expect(await b).toBe('v1')
    clock.t += 49
    expect(await cache.get('k', load)).toBe('v1')
    expect(pending).toHaveLength(1)
  })

  it('past half its TTL, answers the cached value at once and loads the next one in the background, once', async () => {
    const { clock, cache, load, pending } = await loadedAt1000('v1')
    clock.t += 60
    expect(await cache.get('k', load)).toBe('v1')
    expect(await cache.get('k', load)).toBe('v1')
    expect(pending).toHaveLength(2)
    expect(pending[1]!.previous).toBe('v1')
    pending[1]!.resolve('v2')
    await settle()
    expect(await cache.get('k', load)).toBe('v2')
    expect(pending).toHaveLength(2)
  })

  it("starts a refreshed value's TTL when its load began, not when it ended", async () => {
    const { clock, cache, load, pending } = await loadedAt1000('v1')
    clock.t = 1_060
    await cache.get('k', load) // the refresh begins at 1,060
    clock.t = 1_090
    pending[1]!.resolve('v2')
    await settle()
    clock.t = 1_159
    expect(await cache.get('k', load)).toBe('v2')
    clock.t = 1_161
    const after = cache.get('k', load)
    expect(pending).toHaveLength(4) // 1,110: a refresh of v2; 1,161: expired, loaded as a miss
    pending[3]!.resolve('v3')
    expect(await after).toBe('v3')
  })

  it('never serves a value past its TTL when the refresh hangs or fails', async () => {
    for (const outcome of ['hangs', 'fails'] as const) {
      const { clock, cache, load, pending } = await loadedAt1000('v1')
      clock.t = 1_070
      expect(await cache.get('k', load)).toBe('v1')
      if (outcome === 'fails') pending[1]!.reject(new Error('database down'))
      await settle()
      clock.t = 1_099
      expect(await cache.get('k', load)).toBe('v1')
      expect(pending).toHaveLength(2) // one refresh per entry, even after a failure
      clock.t = 1_101
      const next = cache.get('k', load)
      expect(pending).toHaveLength(3)
      pending[2]!.resolve('v2')
      expect(await next).toBe('v2')
      pending[1]!.resolve('late') // a hung refresh that ends now changes nothing
      await settle()
      expect(await cache.get('k', load)).toBe('v2')
    }
  })

  it('forgets a failed load at once: its callers get the error, the next read loads again', async () => {
    const cache = createLoadingCache<string>({ max: 10, ttlMs: 100, now: clockAt(0).now })
    const { load, pending } = loads<string>()
    const failed = cache.get('k', load)
    pending[0]!.reject(new Error('database down'))
    await expect(failed).rejects.toThrow('database down')
    const next = cache.get('k', load)
    pending[1]!.resolve('v1')
    expect(await next).toBe('v1')
  })

  it('does not put back a value whose load began before a delete or a clear', async () => {
    for (const forget of ['delete', 'clear'] as const) {
      const { clock, cache, load, pending } = await loadedAt1000('before')
      clock.t = 1_060
      await cache.get('k', load) // a refresh begins
      if (forget === 'delete') cache.delete('k')
      else cache.clear()
      pending[1]!.resolve('read before the change')
      await settle()
      const after = cache.get('k', load)
      expect(pending).toHaveLength(3)
      pending[2]!.resolve('after')
      expect(await after).toBe('after')
    }
  })

  it('keeps what set puts for the TTL, and with a TTL of 0 loads on every read', async () => {
    const clock = clockAt(1_000)
    const cache = createLoadingCache<string>({ max: 10, ttlMs: 100, now: clock.now })
    const { load, pending } = loads<string>()
    cache.set('k', 'put')
    expect(await cache.peek('k')).toBe('put')
    expect(await cache.get('k', load)).toBe('put')
    expect(pending).toHaveLength(0)
    const uncached = createLoadingCache<string>({ max: 10, ttlMs: 0, now: clock.now })
    void uncached.get('k', load)
    void uncached.get('k', load)
    expect(pending).toHaveLength(2)
    expect(uncached.peek('k')).toBeUndefined()
  })

  it('getLoaded answers a loaded value at once, nothing on a miss or while loading, and refreshes past half the TTL like get', async () => {
    const clock = clockAt(1_000)
    const cache = createLoadingCache<string>({ max: 10, ttlMs: 100, now: clock.now })
    const { load, pending } = loads<string>()
    expect(cache.getLoaded('k', load)).toBeUndefined()
    expect(pending).toHaveLength(0) // a miss is the caller's to load, with get
    const first = cache.get('k', load)
    expect(cache.getLoaded('k', load)).toBeUndefined() // still loading
    pending[0]!.resolve('v1')
    await first
    expect(cache.getLoaded('k', load)).toBe('v1')
    clock.t = 1_060
    expect(cache.getLoaded('k', load)).toBe('v1')
    expect(cache.getLoaded('k', load)).toBe('v1')
    expect(pending).toHaveLength(2) // one refresh in the background
    pending[1]!.resolve('v2')
    await settle()
    expect(cache.getLoaded('k', load)).toBe('v2')
    clock.t = 1_161
    expect(cache.getLoaded('k', load)).toBeUndefined() // expired: never past the TTL
    expect(createLoadingCache<string>({ max: 10, ttlMs: 0, now: clock.now }).getLoaded('k', load)).toBeUndefined()
  })
})
