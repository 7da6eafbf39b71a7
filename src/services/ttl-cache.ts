// A small in-process cache: entries expire after a TTL (0 = nothing is kept) and the oldest go first beyond a bound.

interface Cached<T> {
  value: T
  expiresAt: number
}

/** A small TTL map bounded by entry count; the oldest entries go first. */
export class TtlCache<T> {
  private readonly entries = new Map<string, Cached<T>>()
  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
    private readonly now: () => number,
  ) {}

  get(key: string): T | undefined {
    const hit = this.entries.get(key)
    if (!hit) return undefined
    if (hit.expiresAt <= this.now()) {
      this.entries.delete(key)
      return undefined
    }
    return hit.value
  }

  set(key: string, value: T): void {
    if (this.ttlMs <= 0) return
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value
      if (oldest !== undefined) this.entries.delete(oldest)
    }
    this.entries.set(key, { value, expiresAt: this.now() + this.ttlMs })
  }

  delete(key: string): void {
    this.entries.delete(key)
  }

  clear(): void {
    this.entries.clear()
  }
}
