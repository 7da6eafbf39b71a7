// The domain's one memo cache, for the few pure computations that measurably pay for it (bench/domain.ts):
// a bounded LRU map from a string key to a value computed once. Results must be immutable and depend only on
// the key, so caching them is invisible to callers.
import { LRUCache } from 'lru-cache'

export interface Memo<V> {
  (key: string): V
}

/** `compute(key)` at most once per key while it stays among the `max` most recently used. */
export function memo<V extends object | string>(max: number, compute: (key: string) => V): Memo<V> {
  const cache = new LRUCache<string, V>({ max, memoMethod: (key) => compute(key) })
  return (key) => cache.memo(key)
}
