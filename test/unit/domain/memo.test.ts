import { describe, expect, it } from 'vitest'
import { memo } from '../../../src/domain/memo.js'

describe("memo (the domain's one cache)", () => {
  it('computes a value once per key and returns the same value after', () => {
    const calls: string[] = []
    const upper = memo(10, (key) => {
      calls.push(key)
      return { value: key.toUpperCase() }
    })
    const first = upper('gbp')
    expect(upper('gbp')).toBe(first)
    expect(upper('eur')).toEqual({ value: 'EUR' })
    expect(calls).toEqual(['gbp', 'eur'])
  })

  it('keeps at most max entries, dropping the least recently used', () => {
    const calls: string[] = []
    const id = memo(2, (key) => {
      calls.push(key)
      return key
    })
    id('a')
    id('b')
    id('a') // a is now the most recent
    id('c') // evicts b
    id('a')
    id('b')
    expect(calls).toEqual(['a', 'b', 'c', 'b'])
  })

  it('remembers nothing when the computation throws', () => {
    let calls = 0
    const failing = memo(10, () => {
      calls++
      throw new RangeError('bad input')
    })
    expect(() => failing('x')).toThrow(RangeError)
    expect(() => failing('x')).toThrow(RangeError)
    expect(calls).toBe(2)
  })
})
