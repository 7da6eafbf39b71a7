import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { BoundedSet } from '../../src/services/bounded-set.js'

/** What BoundedSet replaces (src/services/allocation-store.ts before it): a Set that deletes its first member when over max. */
function setDeletingFirst(max: number, values: readonly string[]): Set<string> {
  const set = new Set<string>()
  for (const value of values) {
    if (set.has(value)) continue
    set.add(value)
    if (set.size > max) {
      for (const oldest of set) {
        set.delete(oldest)
        break
      }
    }
  }
  return set
}

describe('BoundedSet', () => {
  it.each([
    { max: 3, added: ['a', 'b', 'c'], held: ['a', 'b', 'c'], gone: [], why: 'up to max, all are held' },
    { max: 3, added: ['a', 'b', 'c', 'd'], held: ['b', 'c', 'd'], gone: ['a'], why: 'the oldest goes first' },
    { max: 3, added: ['a', 'b', 'c', 'a', 'd'], held: ['b', 'c', 'd'], gone: ['a'], why: 'adding again does not make it newer' },
    { max: 2, added: ['a', 'b', 'c', 'd', 'e'], held: ['d', 'e'], gone: ['a', 'b', 'c'], why: 'the ring wraps around' },
    { max: 2, added: ['a', 'b', 'c', 'a'], held: ['c', 'a'], gone: ['b'], why: 'a forgotten value comes back as the newest' },
    { max: 1, added: ['a', 'b'], held: ['b'], gone: ['a'], why: 'a single slot' },
  ])('$why (max $max, added $added)', ({ max, added, held, gone }) => {
    const set = new BoundedSet(max)
    for (const value of added) set.add(value)
    for (const value of held) expect(set.has(value)).toBe(true)
    for (const value of gone) expect(set.has(value)).toBe(false)
    expect(set.size).toBe(held.length)
  })

  it('refuses a max that is not a positive integer', () => {
    expect(() => new BoundedSet(0)).toThrow(RangeError)
    expect(() => new BoundedSet(1.5)).toThrow(RangeError)
  })

  it('property: holds exactly what a Set deleting its first member over max holds', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.array(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'), { maxLength: 60 }),
        (max, values) => {
          const set = new BoundedSet(max)
          for (const value of values) set.add(value)
          const expected = setDeletingFirst(max, values)
          expect(set.size).toBe(expected.size)
          for (const value of 'abcdefghij') expect(set.has(value)).toBe(expected.has(value))
        },
      ),
      { numRuns: 2_000 },
    )
  })
})
