import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import {
  decimalTextToMinorUnits,
  Decimal,
  exactHalfUpClearOfTies,
  formatDecimal,
  formatRate,
  fromMinorUnits,
  minorUnitsOf,
  parseDecimal,
  plainDecimalOf,
  quotientHalfUp,
  roundHalfUp,
  scaledWeightsOf,
  splitByScaledWeights,
  splitByWeights,
  toMinorUnits,
} from '../../../src/domain/money.js'
import { DomainError } from '../../../src/domain/errors.js'

describe('minorUnitsOf', () => {
  it.each([
    ['JPY', 0],
    ['ISK', 0],
    ['GBP', 2],
    ['USD', 2],
    ['EUR', 2],
    ['HUF', 2],
    ['KWD', 3],
    ['BHD', 3],
    ['CLF', 4],
  ])('%s has %i ISO 4217 minor-unit digits', (code, digits) => {
    expect(minorUnitsOf(code)).toBe(digits)
  })

  it.each(['XYZ', 'gbp', '', 'EURO'])('rejects %j as UNSUPPORTED_CURRENCY', (code) => {
    expect(() => minorUnitsOf(code)).toThrow(expect.objectContaining({ code: 'UNSUPPORTED_CURRENCY' }))
  })
})

describe('toMinorUnits / fromMinorUnits', () => {
  it.each([
    ['12.60', 2, 1260n],
    ['12.6', 2, 1260n],
    ['1000', 0, 1000n],
    ['12.345', 3, 12345n],
    ['0.001', 3, 1n],
    ['-4.50', 2, -450n],
    ['0', 2, 0n],
  ])('%s with %i digits is %s minor units and back', (amount, digits, minor) => {
    expect(toMinorUnits(new Decimal(amount), digits)).toBe(minor)
    expect(fromMinorUnits(minor, digits).equals(new Decimal(amount))).toBe(true)
  })

  it.each([
    ['100.5', 0],
    ['12.345', 2],
    ['1.2345', 3],
  ])('%s has too many decimals for %i digits → AMOUNT_PRECISION with the path', (amount, digits) => {
    let error: unknown
    try {
      toMinorUnits(new Decimal(amount), digits, '/transaction/amount')
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(DomainError)
    expect(error).toMatchObject({ code: 'AMOUNT_PRECISION', path: '/transaction/amount' })
  })
})

describe('roundHalfUp and formatting', () => {
  it.each([
    ['0.125', 2, '0.13'],
    ['0.124999', 2, '0.12'],
    ['2.5', 0, '3'],
    ['3.5', 0, '4'],
    ['-0.125', 2, '-0.13'],
    ['10833.1835', 1, '10833.2'],
    ['1.0005', 3, '1.001'],
  ])('roundHalfUp(%s, %i) = %s', (value, digits, expected) => {
    expect(formatDecimal(roundHalfUp(new Decimal(value), digits), digits)).toBe(expected)
  })

  it.each([
    ['-0', 2, '0.00'],
    ['-0.001', 2, '0.00'],
    ['0', 0, '0'],
    ['12.6', 2, '12.60'],
    ['1e-9', 3, '0.000'],
    ['123456789012345678901234567890', 0, '123456789012345678901234567890'],
  ])('formatDecimal(%s, %i) = %s (never -0, never exponent)', (value, digits, expected) => {
    expect(formatDecimal(new Decimal(value), digits)).toBe(expected)
  })

  it.each([
    ['0.20', '0.2'],
    ['0.149750', '0.14975'],
    ['-0', '0'],
    ['0', '0'],
    ['1', '1'],
  ])('formatRate(%s) = %s', (value, expected) => {
    expect(formatRate(value)).toBe(expected)
  })
})

describe('splitByWeights', () => {
  it.each([
    { total: 100n, weights: ['1', '1', '1'], expected: [34n, 33n, 33n], why: 'one leftover unit, tie → lowest index' },
    { total: 101n, weights: ['1', '1', '1'], expected: [34n, 34n, 33n], why: 'two leftover units, ties → lowest indexes' },
    // ekko's fee example lists 10.00 + 0.00 + 2.00 + 0.40 (it prints the total as 12.60, but they sum to 12.40).
    { total: 1240n, weights: ['1', '0', '0.2', '0.04'], expected: [1000n, 0n, 200n, 40n], why: '12.40 = 10.00 + 0 + 2.00 + 0.40' },
    { total: 36n, weights: ['1', '0.2', '0.2', '0.04'], expected: [25n, 5n, 5n, 1n], why: '36 × [1, .2, .2, .04] / 1.44 is exact' },
    { total: 10n, weights: ['0.3', '0.7'], expected: [3n, 7n], why: 'decimal weights' },
    { total: 1n, weights: ['1', '1'], expected: [1n, 0n], why: 'a single unit goes to the first of equals' },
    { total: 7n, weights: ['0', '5', '0'], expected: [0n, 7n, 0n], why: 'zero weights get nothing' },
    { total: 5n, weights: ['1', '3'], expected: [1n, 4n], why: 'exact shares 1.25 / 3.75: the larger remainder wins' },
    { total: -100n, weights: ['1', '1', '1'], expected: [-34n, -33n, -33n], why: 'negative totals mirror positive ones' },
    { total: 0n, weights: ['1', '2'], expected: [0n, 0n], why: 'zero total' },
  ])('$total by $weights → $expected ($why)', ({ total, weights, expected }) => {
    expect(splitByWeights(total, weights)).toEqual(expected)
  })

  it('throws on all-zero or negative weights', () => {
    expect(() => splitByWeights(10n, ['0', '0'])).toThrow(RangeError)
    expect(() => splitByWeights(10n, [])).toThrow(RangeError)
    expect(() => splitByWeights(10n, ['1', '-1'])).toThrow(RangeError)
  })

  const weight = fc
    .tuple(fc.integer({ min: 0, max: 1_000_000 }), fc.integer({ min: 0, max: 12 }))
    .map(([units, scale]) => new Decimal(units).div(new Decimal(10).pow(scale)).toFixed(scale))

  it('property: parts sum to the total exactly and each is within one minor unit of its exact share', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: -(10n ** 15n), max: 10n ** 15n }),
        fc.array(weight, { minLength: 1, maxLength: 8 }).filter((ws) => ws.some((w) => !new Decimal(w).isZero())),
        (total, weights) => {
          const parts = splitByWeights(total, weights)
          expect(parts).toHaveLength(weights.length)
          expect(parts.reduce((a, b) => a + b, 0n)).toBe(total)
          const weightSum = weights.reduce((acc, w) => acc.plus(w), new Decimal(0))
          parts.forEach((part, i) => {
            const exact = new Decimal(total).times(weights[i] ?? '0').div(weightSum)
            expect(new Decimal(part).minus(exact).abs().lessThan(1)).toBe(true)
            if (new Decimal(weights[i] ?? '0').isZero()) expect(part).toBe(0n)
          })
        },
      ),
      { numRuns: 10_000 },
    )
  })

  it('property: deterministic, and a negative total splits as the mirror of the positive one', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 10n ** 12n }),
        fc.array(weight, { minLength: 1, maxLength: 6 }).filter((ws) => ws.some((w) => !new Decimal(w).isZero())),
        (total, weights) => {
          const parts = splitByWeights(total, weights)
          expect(splitByWeights(total, weights)).toEqual(parts)
          expect(splitByWeights(-total, weights)).toEqual(parts.map((part) => -part))
        },
      ),
      { numRuns: 10_000 },
    )
  })
})

describe('decimalTextToMinorUnits', () => {
  it.each([
    ['12.3400', 2, 1234n],
    ['-12.34', 2, -1234n],
    ['0', 2, 0n],
    ['-0.0000', 2, 0n],
    ['7', 0, 7n],
    ['0.050000', 6, 50000n],
    ['1e2', 2, 10000n],
  ])('%s at %i digits is %s minor units', (text, digits, expected) => {
    expect(decimalTextToMinorUnits(text, digits)).toBe(expected)
  })

  it('refuses more significant decimals than the currency has, as toMinorUnits does', () => {
    expect(() => decimalTextToMinorUnits('1.005', 2, '/x')).toThrow(expect.objectContaining({ code: 'AMOUNT_PRECISION', path: '/x' }))
  })

  it('property: equals toMinorUnits(parseDecimal(text)) for any numeric text Postgres prints', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: -(10n ** 18n), max: 10n ** 18n }),
        fc.integer({ min: 0, max: 6 }),
        fc.integer({ min: 0, max: 4 }),
        (minor, digits, zeros) => {
          const negative = minor < 0n
          const magnitude = (negative ? -minor : minor).toString().padStart(digits + 1, '0')
          const whole = magnitude.slice(0, magnitude.length - digits)
          const fraction = magnitude.slice(magnitude.length - digits) + '0'.repeat(zeros)
          const text = `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`
          expect(decimalTextToMinorUnits(text, digits)).toBe(toMinorUnits(parseDecimal(text), digits))
          expect(decimalTextToMinorUnits(text, digits)).toBe(minor)
        },
      ),
    )
  })
})

describe('splitByScaledWeights', () => {
  it.each([
    { total: 100n, weights: ['1', '1', '1'] },
    { total: 1240n, weights: ['1', '0', '0.2', '0.04'] },
    { total: 5n, weights: ['1', '3'] },
    { total: -100n, weights: ['1', '1', '1'] },
    { total: 0n, weights: ['1', '2'] },
  ])('$total by $weights: the parts of splitByWeights', ({ total, weights }) => {
    expect(splitByScaledWeights(total, scaledWeightsOf(weights))).toEqual(splitByWeights(total, weights))
  })
})

describe('plainDecimalOf', () => {
  it.each([
    ['12.50', { units: 1250n, scale: 2 }],
    ['0', { units: 0n, scale: 0 }],
    ['007.0', { units: 70n, scale: 1 }],
    ['-1', undefined],
    ['+1', undefined],
    ['1e2', undefined],
    [' 1', undefined],
    ['.5', undefined],
    ['5.', undefined],
  ])('%s → %o', (text, expected) => {
    expect(plainDecimalOf(text)).toEqual(expected)
  })
})

describe('exactHalfUpClearOfTies', () => {
  const big = 10n ** 60n
  it.each([
    { numerator: 1234n, denominator: 100n, decimals: 1, expected: 123n, why: '12.34 → 12.3' },
    { numerator: 1236n, denominator: 100n, decimals: 1, expected: 124n, why: '12.36 → 12.4' },
    { numerator: 1n, denominator: 3n, decimals: 2, expected: 33n, why: 'a third, far from a tie' },
    { numerator: 0n, denominator: 7n, decimals: 2, expected: 0n, why: 'zero' },
    { numerator: 1235n, denominator: 100n, decimals: 1, expected: undefined, why: '12.35: on a tie' },
    { numerator: 1235n * big + 1n, denominator: 100n * big, decimals: 1, expected: undefined, why: '10^-62 above a tie' },
    { numerator: 1235n * big - 1n, denominator: 100n * big, decimals: 1, expected: undefined, why: '10^-62 below a tie' },
    { numerator: 1235n * 10n ** 44n + 1n, denominator: 10n ** 46n, decimals: 1, expected: 124n, why: '10^-46 above: clear of 5 × 10^-49' },
  ])('$why', ({ numerator, denominator, decimals, expected }) => {
    expect(exactHalfUpClearOfTies(numerator, denominator, decimals, 5)).toBe(expected)
  })

  it('is undefined within operations × 10^-49 of a tie (relatively), and answers just outside', () => {
    // 12.35 + d·10^-52: with 5 operations the margin is 5 × 10^-49 × 12.35 = 6.175 × 10^-48, i.e. d ≈ 61,750.
    const at = (d: bigint) => exactHalfUpClearOfTies(1235n * 10n ** 50n + d, 10n ** 52n, 1, 5)
    expect(at(61_749n)).toBeUndefined()
    expect(at(61_760n)).toBe(124n)
    expect(at(-61_749n)).toBeUndefined()
    expect(at(-61_760n)).toBe(123n)
  })
})

describe('quotientHalfUp', () => {
  const viaDecimal = (minor: bigint, digits: number, divisor: string, decimals: number) =>
    formatDecimal(roundHalfUp(fromMinorUnits(minor, digits).div(divisor), decimals), decimals)

  it.each([
    { minor: 1000n, digits: 2, divisor: '20.00', decimals: 6, expected: '0.500000', why: '10.00 / 20.00' },
    { minor: 1n, digits: 2, divisor: '3', decimals: 6, expected: '0.003333', why: 'rounds down below the tie' },
    { minor: 2n, digits: 2, divisor: '3', decimals: 6, expected: '0.006667', why: 'rounds up above the tie' },
    { minor: 1n, digits: 0, divisor: '2000000', decimals: 6, expected: '0.000001', why: 'exactly on the tie: half up' },
    { minor: 1n, digits: 0, divisor: '2000001', decimals: 6, expected: '0.000000', why: 'just below the tie' },
    { minor: 0n, digits: 2, divisor: '7', decimals: 6, expected: '0.000000', why: 'nothing paid' },
    { minor: 12345n, digits: 3, divisor: '0.5', decimals: 6, expected: '24.690000', why: 'a divisor below 1' },
  ])('$minor at $digits digits ÷ $divisor = $expected ($why)', ({ minor, digits, divisor, decimals, expected }) => {
    const plain = plainDecimalOf(divisor)
    expect(plain).toBeDefined()
    if (plain === undefined) return
    expect(quotientHalfUp(minor, digits, plain, decimals)).toBe(expected)
    expect(viaDecimal(minor, digits, divisor, decimals)).toBe(expected)
  })

  it('leaves to Decimal what it cannot prove equal: a negative amount, a zero divisor, figures past 49 digits', () => {
    expect(quotientHalfUp(-1n, 2, { units: 1n, scale: 0 }, 6)).toBeUndefined()
    expect(quotientHalfUp(1n, 2, { units: 0n, scale: 0 }, 6)).toBeUndefined()
    expect(quotientHalfUp(1n, 2, { units: 10n ** 48n + 1n, scale: 0 }, 6)).toBeUndefined()
  })

  it('property: the text Decimal division gives (50 digits, then half up), ties included', () => {
    const divisor = fc.oneof(
      fc.tuple(fc.bigInt({ min: 1n, max: 10n ** 15n }), fc.integer({ min: 0, max: 15 })).map(([units, scale]) => ({ units, scale })),
      // Powers of two and five: quotients that end exactly on a tie.
      fc
        .tuple(fc.integer({ min: 0, max: 30 }), fc.integer({ min: 0, max: 10 }), fc.integer({ min: 0, max: 12 }))
        .map(([twos, fives, scale]) => ({
          units: 2n ** BigInt(twos) * 5n ** BigInt(fives),
          scale,
        })),
    )
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 10n ** 18n }),
        fc.integer({ min: 0, max: 4 }),
        divisor,
        fc.integer({ min: 0, max: 8 }),
        (minor, digits, { units, scale }, decimals) => {
          const text = units.toString().padStart(scale + 1, '0')
          const divisorText = scale === 0 ? text : `${text.slice(0, -scale)}.${text.slice(-scale)}`
          const exact = quotientHalfUp(minor, digits, { units, scale }, decimals)
          if (exact !== undefined) expect(exact).toBe(viaDecimal(minor, digits, divisorText, decimals))
        },
      ),
      { numRuns: 10_000 },
    )
  })
})
