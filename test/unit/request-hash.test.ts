import fc from 'fast-check'
import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { canonicalJson, requestHashOf, type AllocationInput } from '../../src/services/allocations.js'

/** canonicalJson as src/services/allocations.ts wrote it before building one string: stored request hashes depend on it. */
function canonicalJsonByEntries(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJsonByEntries).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJsonByEntries(v)}`).join(',')}}`
  }
  return JSON.stringify(value)
}

describe('canonicalJson', () => {
  it.each([
    [{ b: 1, a: 2 }, '{"a":2,"b":1}'],
    [{ a: undefined, b: null }, '{"b":null}'],
    [{ z: { y: [3, { d: 1, c: 2 }] } }, '{"z":{"y":[3,{"c":2,"d":1}]}}'],
    [[undefined, 1], '[,1]'],
    [{ f: () => 1 }, '{"f":undefined}'],
    [{ '\u00e9': 1, e: 2, E: 3, '10': 4, '9': 5 }, '{"10":4,"9":5,"E":3,"e":2,"\u00e9":1}'],
    [{ 'a"b': 'x\ny' }, '{"a\\"b":"x\\ny"}'],
    [[], '[]'],
    [{}, '{}'],
    ['text', '"text"'],
    [12.4, '12.4'],
  ])('%o → %s', (value, expected) => {
    expect(canonicalJson(value)).toBe(expected)
    expect(canonicalJsonByEntries(value)).toBe(expected)
  })

  it('property: writes what the entries-and-join version wrote, for any JSON value (and undefined members)', () => {
    const value = fc.letrec((tie) => ({
      any: fc.oneof(
        { depthSize: 'small' },
        fc.constantFrom(null, undefined, true, false),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.string({ unit: 'binary' }),
        fc.array(tie('any')),
        fc.dictionary(fc.string({ unit: 'binary' }), tie('any')),
      ),
    })).any
    fc.assert(
      fc.property(value, (v) => {
        expect(canonicalJson(v)).toBe(canonicalJsonByEntries(v))
      }),
      { numRuns: 5_000 },
    )
  })
})

describe('requestHashOf', () => {
  it('is the SHA-256 of the route and the canonical request, whatever its key order', () => {
    const input: AllocationInput = { quoteId: 'q', organisationId: 'o', credits: { amount: 12.4 }, contribution: undefined }
    const expected = createHash('sha256')
      .update('POST /funds/allocations\n{"credits":{"amount":12.4},"organisationId":"o","quoteId":"q"}')
      .digest('hex')
    expect(requestHashOf(input)).toBe(expected)
    expect(requestHashOf({ credits: { amount: 12.4 }, organisationId: 'o', quoteId: 'q' })).toBe(expected)
  })
})

describe('requestHashOf, written field by field', () => {
  const text = fc.string({ unit: 'binary', maxLength: 12 })
  const optional = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined })
  const amount = fc.oneof(fc.integer({ min: 0, max: 10 ** 9 }), fc.double({ min: 0, max: 1e9, noNaN: true }))
  const input = fc.record(
    {
      organisationId: text,
      quoteId: text,
      currencyCode: optional(text),
      credits: fc.oneof(fc.constant(undefined), fc.constant(null), fc.record({ amount })),
      contribution: fc.oneof(
        fc.constant(undefined),
        fc.constant(null),
        fc.record({ amount, impactPartnerIds: optional(fc.array(text, { maxLength: 3 })) }, { requiredKeys: ['amount'] }),
      ),
      issueTaxReceipt: optional(fc.boolean()),
      consumerEmail: optional(text),
    },
    { requiredKeys: ['organisationId', 'quoteId'] },
  )
  const expected = (value: unknown) =>
    createHash('sha256')
      .update(`POST /funds/allocations\n${canonicalJson(value)}`)
      .digest('hex')

  it('property: the hash of canonicalJson, for requests of the route shape with any fields present, absent, undefined or null', () => {
    fc.assert(
      fc.property(input, (value) => {
        expect(requestHashOf(value as AllocationInput)).toBe(expected(value))
      }),
      { numRuns: 5_000 },
    )
  })

  it('takes canonicalJson itself for a request of another shape (a key it does not know, at any level)', () => {
    const odd = [
      { organisationId: 'o', quoteId: 'q', note: 'x' },
      { organisationId: 'o', quoteId: 'q', credits: { amount: 1, extra: true } },
      { organisationId: 'o', quoteId: 'q', contribution: { amount: 1, impactPartnerIds: 'p' } },
    ]
    for (const value of odd) expect(requestHashOf(value as unknown as AllocationInput)).toBe(expected(value))
  })
})
