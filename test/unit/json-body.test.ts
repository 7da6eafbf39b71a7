// Duplicate keys in a JSON body: the cheap count that decides whether to look, and the search that names the key.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { countKeysInText, countKeysInValue, findDuplicateKey } from '../../src/http/json-body.js'

const hasDuplicate = (text: string) => countKeysInText(text) !== countKeysInValue(JSON.parse(text))

describe('duplicate keys in JSON text', () => {
  it.each([
    ['{}', 0, undefined],
    ['{"a":1}', 1, undefined],
    ['{"a":1,"a":2}', 2, '/a'],
    ['{"a":{"b":1,"b":2}}', 3, '/a/b'],
    ['[{"a":1},{"a":2}]', 2, undefined],
    ['{"a":"x\\":","b" : ["c", "d:"]}', 2, undefined],
    ['{"k\\\\":1,"k\\\\"\n:\t2}', 2, '/k\\'],
    ['"a:" ', 0, undefined],
    ['{"a/b":1,"a~b":2,"a/b":3}', 3, '/a~1b'],
  ])('%s', (text, keys, duplicate) => {
    expect(countKeysInText(text)).toBe(keys)
    expect(findDuplicateKey(text)).toBe(duplicate)
    expect(hasDuplicate(text)).toBe(duplicate !== undefined)
  })

  it('counts as many keys in the text as the value holds, for any JSON without repeats', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify(value, null, 1)
        expect(countKeysInText(text)).toBe(countKeysInValue(JSON.parse(text)))
      }),
      { numRuns: 2000 },
    )
  })

  it('sees a repeated key wherever it is written', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.string(), fc.jsonValue(), (value, key, other) => {
        const text = `{${JSON.stringify(key)}:${JSON.stringify(value)},${JSON.stringify(key)}:${JSON.stringify(other)}}`
        expect(hasDuplicate(text)).toBe(true)
        expect(findDuplicateKey(text)).toBeDefined()
      }),
      { numRuns: 2000 },
    )
  })
})
