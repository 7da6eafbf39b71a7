// Minor-unit arithmetic of the SDK: exact, from decimal strings, for 0, 2 and 3-decimal currencies.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { fromMinor, minorUnitsOf, roundUpMinor, toMinor, wireToMinor } from '../../sdk/src/money.js'

describe('minorUnitsOf', () => {
  it.each([
    ['GBP', 2],
    ['USD', 2],
    ['EUR', 2],
    ['JPY', 0],
    ['KRW', 0],
    ['KWD', 3],
    ['BHD', 3],
    ['CLF', 4],
  ])('%s → %i', (code, digits) => expect(minorUnitsOf(code)).toBe(digits))

  it('refuses anything but an upper-case three-letter code', () => {
    for (const code of ['gbp', 'GB', 'JPY ', 'P KW']) expect(() => minorUnitsOf(code)).toThrow('not a currency code')
  })
})

describe('toMinor / fromMinor', () => {
  it.each([
    ['0.45', 2, 45],
    ['0', 2, 0],
    ['47.97', 2, 4797],
    ['1', 2, 100],
    ['1.5', 2, 150],
    ['1.50', 2, 150],
    ['1.500', 2, 150],
    ['4797', 0, 4797],
    ['4797.0', 0, 4797],
    ['0.073', 3, 73],
    ['15.125', 3, 15125],
    ['0.1', 3, 100],
    ['90071992547409.91', 2, 9007199254740991],
  ])('toMinor(%s, %i) = %i', (amount, digits, minor) => expect(toMinor(amount, digits)).toBe(minor))

  it.each([
    ['0.455', 2, 'more than 2 decimal places'],
    ['1.5', 0, 'more than 0 decimal places'],
    ['-1.00', 2, 'not a decimal amount'],
    ['1e2', 2, 'not a decimal amount'],
    [' 1.00', 2, 'not a decimal amount'],
    ['1.', 2, 'not a decimal amount'],
    ['.5', 2, 'not a decimal amount'],
    ['', 2, 'not a decimal amount'],
    ['90071992547409.92', 2, 'too large'],
  ])('toMinor(%j, %i) throws (%s)', (amount, digits, message) => expect(() => toMinor(amount, digits)).toThrow(message))

  it.each([
    [45, 2, '0.45'],
    [5, 2, '0.05'],
    [0, 2, '0.00'],
    [4797, 2, '47.97'],
    [4797, 0, '4797'],
    [73, 3, '0.073'],
    [15125, 3, '15.125'],
    [-28, 2, '-0.28'],
  ])('fromMinor(%i, %i) = %s', (minor, digits, amount) => expect(fromMinor(minor, digits)).toBe(amount))

  it('fromMinor refuses non-integers', () => {
    expect(() => fromMinor(0.5, 2)).toThrow('not an integer')
  })
})

describe('wireToMinor (JSON numbers from the API)', () => {
  it.each([
    [0.28, 2, 28],
    [0.29, 2, 29],
    [1.005, 3, 1005],
    [0.073, 3, 73],
    [1, 0, 1],
    [47.97, 2, 4797],
    [1234567.89, 2, 123456789],
  ])('%d at %i decimals → %i', (value, digits, minor) => expect(wireToMinor(value, digits)).toBe(minor))

  it.each([
    [0.283, 2],
    [1.5, 0],
    [-0.28, 2],
    [Number.NaN, 2],
    [Number.POSITIVE_INFINITY, 2],
  ])('refuses %d at %i decimals', (value, digits) => expect(() => wireToMinor(value, digits)).toThrow())
})

describe('roundUpMinor', () => {
  it.each([
    [4797, 100, 3],
    [4800, 100, 0],
    [4750, 100, 50],
    [4797, 500, 203],
    [4797, 1, 0],
    [15125, 1000, 875],
  ])('%i up to a multiple of %i → +%i', (total, increment, extra) => expect(roundUpMinor(total, increment)).toBe(extra))
})

describe('properties', () => {
  const digits = fc.constantFrom(0, 2, 3)
  const minor = fc.integer({ min: 0, max: 2 ** 50 })

  it('decimal string ↔ minor units round-trips for 0, 2 and 3-decimal currencies', () => {
    fc.assert(
      fc.property(minor, digits, (m, d) => {
        const text = fromMinor(m, d)
        expect(text).toMatch(d === 0 ? /^\d+$/ : new RegExp(`^\\d+\\.\\d{${d}}$`))
        expect(toMinor(text, d)).toBe(m)
      }),
      { numRuns: 5000 },
    )
  })

  it('any decimal string with at most d decimals converts and comes back in canonical form', () => {
    const amount = digits.chain((d) =>
      fc
        .tuple(fc.stringMatching(/^(0|[1-9]\d{0,9})$/), fc.stringMatching(new RegExp(`^\\d{0,${d}}$`)))
        .map(([int, frac]) => ({ d, text: frac ? `${int}.${frac}` : int })),
    )
    fc.assert(
      fc.property(amount, ({ d, text }) => {
        const m = toMinor(text, d)
        expect(Number.isSafeInteger(m)).toBe(true)
        const back = fromMinor(m, d)
        expect(toMinor(back, d)).toBe(m)
        // Same value: padding or trimming zeros only.
        const [int = '', frac = ''] = text.split('.')
        expect(back).toBe(d ? `${int}.${frac.padEnd(d, '0')}` : int)
      }),
      { numRuns: 5000 },
    )
  })

  it('the JSON number the API sends for an amount converts to the same minor units', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e13 }), digits, (m, d) => {
        const wire = JSON.parse(fromMinor(m, d)) as number
        expect(wireToMinor(wire, d)).toBe(m)
      }),
      { numRuns: 5000 },
    )
  })

  it('round-up lands on a multiple, adding less than one increment', () => {
    fc.assert(
      fc.property(minor, fc.integer({ min: 1, max: 100_000 }), (total, increment) => {
        const extra = roundUpMinor(total, increment)
        expect((total + extra) % increment).toBe(0)
        expect(extra >= 0 && extra < increment).toBe(true)
      }),
    )
  })
})
