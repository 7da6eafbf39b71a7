// randomBase62 (src/services/api-keys.ts) draws from a pooled CSPRNG buffer: across many refills every string is new,
// of the asked length and alphabet, and every character is about as frequent as any other.
import { describe, expect, it } from 'vitest'
import { randomBase62 } from '../../src/services/api-keys.js'

describe('randomBase62', () => {
  it('gives distinct base62 strings of the asked length across many refills of its buffer', () => {
    const seen = new Set<string>()
    for (let i = 0; i < 5000; i++) {
      const value = randomBase62(24)
      expect(value).toMatch(/^[0-9A-Za-z]{24}$/)
      seen.add(value)
    }
    expect(seen.size).toBe(5000)
    expect(randomBase62(1)).toHaveLength(1)
    expect(randomBase62(200)).toMatch(/^[0-9A-Za-z]{200}$/)
  })

  it('uses every character about equally (no modulo bias)', () => {
    const counts = new Map<string, number>()
    const text = randomBase62(620_000)
    for (const c of text) counts.set(c, (counts.get(c) ?? 0) + 1)
    expect(counts.size).toBe(62)
    // 10,000 expected each; a standard deviation is about 100.
    for (const count of counts.values()) expect(Math.abs(count - 10_000)).toBeLessThan(700)
  })
})
