// The one in-process cache of the services (API keys, organisation trees, reference data, quotes): lru-cache,
// bounded by entry count and, where a TTL is given, by age on an injectable clock.
import { LRUCache } from 'lru-cache'

export interface Cache<V> {
  get(key: string): V | undefined
  set(key: string, value: V): void
  delete(key: string): void
  clear(): void
}

const keepNothing: Cache<never> = { get: () => undefined, set: () => {}, delete: () => {}, clear: () => {} }

/**
 * At most `max` entries, least recently used out first; with `ttlMs`, an entry also expires that long after it
 * was set, by `now` (ms). `max` 0 or `ttlMs` 0 keeps nothing.
 */
export function createCache<V extends object | boolean | string>(options: { max: number; ttlMs?: number; now?: () => number }): Cache<V> {
  const { max, ttlMs, now } = options
  if (max <= 0 || ttlMs === 0) return keepNothing
  return new LRUCache<string, V>({
    max,
    ...(ttlMs === undefined ? {} : { ttl: ttlMs, ttlResolution: 0, ...(now ? { perf: { now } } : {}) }),
  })
}
