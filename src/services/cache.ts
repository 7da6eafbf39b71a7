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

/**
 * A cache of loaded values, for what is read from the database and kept for at most `ttlMs` (API keys, organisation
 * settings, the catalogue): concurrent misses share one load, and a value past half its TTL that is read again is
 * loaded again in the background while the cached one keeps answering. So steady traffic never waits for a reload
 * (when an entry simply expired, every request that came meanwhile waited for the one read that refilled it), and no
 * value is ever served longer than `ttlMs` after its load began: a refresh that fails or is late leaves the entry to
 * expire, and the next read loads as on a miss. A value deleted (or the cache cleared) while a load is in flight is
 * not put back by it.
 */
export interface LoadingCache<V> {
  /** The value of `key`, loaded with `load` on a miss or in the background for a refresh (`previous`: the value kept). */
  get(key: string, load: (previous: V | undefined) => Promise<V>): Promise<V>
  /**
   * The value of `key` when one is loaded already, at once (past half its TTL it is loaded again in the background, as
   * `get` does); undefined on a miss or while the first load is in flight, when the caller awaits `get`. For the hot
   * paths: a value in the cache costs no promise and no turn of the microtask queue. (V never holds undefined here.)
   */
  getLoaded(key: string, load: (previous: V | undefined) => Promise<V>): V | undefined
  /** The cached value, if any, without loading or refreshing. */
  peek(key: string): Promise<V> | undefined
  /** Puts a value just loaded elsewhere (its TTL starts now). */
  set(key: string, value: V): void
  delete(key: string): void
  clear(): void
}

interface LoadingEntry<V> {
  value: Promise<V>
  /** Whether `value` has fulfilled, and with what: a refresh is given it as `previous`. */
  settled: boolean
  loaded: V | undefined
  refreshing: boolean
}

export function createLoadingCache<V>(options: { max: number; ttlMs: number; now?: () => number }): LoadingCache<V> {
  const { max, ttlMs } = options
  if (max <= 0 || ttlMs <= 0) {
    return {
      get: (_key, load) => load(undefined),
      getLoaded: () => undefined,
      peek: () => undefined,
      set: () => {},
      delete: () => {},
      clear: () => {},
    }
  }
  const now = options.now ?? (() => performance.now())
  const entries = new LRUCache<string, LoadingEntry<V>>({ max, ttl: ttlMs, ttlResolution: 0, perf: { now } })
  // Bumped by delete and clear: a load begun before either may not store what it read.
  let generation = 0

  /** A value already loaded, whose TTL started at `start` (when its load began). */
  const storeLoaded = (key: string, loaded: V, start: number): void => {
    entries.set(key, { value: Promise.resolve(loaded), settled: true, loaded, refreshing: false }, { start })
  }
  const loadMissing = (key: string, load: (previous: V | undefined) => Promise<V>): Promise<V> => {
    const entry: LoadingEntry<V> = { value: load(undefined), settled: false, loaded: undefined, refreshing: false }
    entries.set(key, entry)
    entry.value.then(
      (loaded) => {
        entry.settled = true
        entry.loaded = loaded
      },
      () => {
        if (entries.peek(key) === entry) entries.delete(key)
      },
    )
    return entry.value
  }
  const refresh = (key: string, entry: LoadingEntry<V>, load: (previous: V | undefined) => Promise<V>): void => {
    // One refresh per entry: if it fails, the entry is left to expire and the next read after that loads.
    entry.refreshing = true
    const start = now()
    const began = generation
    load(entry.loaded).then(
      (loaded) => {
        if (generation === began && entries.peek(key) === entry) storeLoaded(key, loaded, start)
      },
      () => {},
    )
  }

  return {
    get(key, load) {
      const entry = entries.get(key)
      if (entry === undefined) return loadMissing(key, load)
      if (!entry.refreshing && entry.settled && entries.getRemainingTTL(key) <= ttlMs / 2) refresh(key, entry, load)
      return entry.value
    },
    getLoaded(key, load) {
      const entry = entries.get(key)
      if (entry === undefined || !entry.settled) return undefined
      if (!entry.refreshing && entries.getRemainingTTL(key) <= ttlMs / 2) refresh(key, entry, load)
      return entry.loaded
    },
    peek: (key) => entries.get(key)?.value,
    set: (key, value) => storeLoaded(key, value, now()),
    delete(key) {
      generation++
      entries.delete(key)
    },
    clear() {
      generation++
      entries.clear()
    },
  }
}
