// IP allowlist entries: what is accepted and how it is stored, and which client addresses a list lets through.
import { describe, expect, it } from 'vitest'
import { compileIpAllowlist, normaliseIpAllowlist, parseIpEntry } from '../../../src/domain/ip-allowlist.js'

describe('IP allowlist entries', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    [' 203.0.113.7 ', '203.0.113.7'],
    ['10.1.2.3/8', '10.0.0.0/8'],
    ['0.0.0.0/0', '0.0.0.0/0'],
    ['2001:DB8:0:0::1', '2001:db8::1'],
    ['2001:db8::1/32', '2001:db8::/32'],
    ['::ffff:192.0.2.1', '192.0.2.1'],
    ['192.0.2.10-192.0.2.50', '192.0.2.10-192.0.2.50'],
    ['2001:db8::1-2001:db8::ff', '2001:db8::1-2001:db8::ff'],
  ])('accepts %j as %j', (input, normalised) => {
    expect(parseIpEntry(input)).toMatchObject({ normalised })
  })

  it.each([
    '',
    'localhost',
    '10.1',
    '010.0.0.1',
    '0x7f.0.0.1',
    '10.0.0.0/33',
    '10.0.0.0/x',
    '2001:db8::/129',
    '1.2.3.4-::1',
    '1.2.3.9-1.2.3.1',
    '1-2-3',
    '300.1.1.1',
  ])('refuses %j', (input) => {
    expect(parseIpEntry(input)).toHaveProperty('error')
  })

  it('drops duplicates after normalising and names every bad entry by index', () => {
    expect(normaliseIpAllowlist({ enabled: true, entries: ['10.0.0.1/8', '10.0.0.0/8', '203.0.113.7'] })).toEqual({
      allowlist: { enabled: true, entries: ['10.0.0.0/8', '203.0.113.7'] },
    })
    const result = normaliseIpAllowlist({ enabled: true, entries: ['nope', '10.0.0.1', 'x/1'] })
    expect(result).toEqual({ errors: [expect.objectContaining({ index: 0 }), expect.objectContaining({ index: 2 })] })
  })
})

describe('a compiled allowlist', () => {
  const allows = compileIpAllowlist({ enabled: true, entries: ['203.0.113.7', '10.0.0.0/8', '192.0.2.10-192.0.2.50', '2001:db8::/32'] })

  it.each([
    ['203.0.113.7', true],
    ['203.0.113.8', false],
    ['10.255.1.1', true],
    ['11.0.0.1', false],
    ['192.0.2.10', true],
    ['192.0.2.50', true],
    ['192.0.2.51', false],
    ['::ffff:10.0.0.9', true],
    ['2001:db8:1::5', true],
    ['2001:db9::1', false],
    ['garbage', false],
    ['', false],
  ])('%s → %s', (address, expected) => {
    expect(allows(address)).toBe(expected)
  })

  it('lets everything through when the list is off or absent, and nothing when it is on and empty', () => {
    expect(compileIpAllowlist({ enabled: false, entries: ['10.0.0.1'] })('8.8.8.8')).toBe(true)
    expect(compileIpAllowlist(null)('8.8.8.8')).toBe(true)
    expect(compileIpAllowlist({ enabled: true, entries: [] })('10.0.0.1')).toBe(false)
  })
})
