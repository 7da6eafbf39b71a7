// Record ids are UUIDv7 (src/ids.ts): the creation time in their first 48 bits, version 7, the RFC's variant, and
// random bits in the rest.
import { describe, expect, it } from 'vitest'
import { newId, uuidV7At } from '../../src/ids.js'

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

describe('newId', () => {
  it('is a UUIDv7 whose first 48 bits are the time in ms', () => {
    for (const ms of [0, 1, 1_796_160_380_709, 2 ** 48 - 1]) {
      const id = uuidV7At(ms)
      expect(id).toMatch(V7)
      expect(parseInt(id.slice(0, 8) + id.slice(9, 13), 16)).toBe(ms)
    }
    const before = Date.now()
    const id = newId()
    const ms = parseInt(id.slice(0, 8) + id.slice(9, 13), 16)
    expect(ms).toBeGreaterThanOrEqual(before)
    expect(ms).toBeLessThanOrEqual(Date.now())
  })

  it('differs in its random bits from one id to the next, and orders ids of later milliseconds after', () => {
    const ids = Array.from({ length: 10_000 }, () => uuidV7At(1_796_160_380_709))
    expect(new Set(ids).size).toBe(ids.length)
    expect(new Set(ids.map((id) => id.slice(15))).size).toBe(ids.length)
    expect(uuidV7At(1_796_160_380_710) > (ids.sort().at(-1) as string)).toBe(true)
  })
})
