// Locale fallback (exact → language → en-GB) and Intl formatting in the session's locale.
import { describe, expect, it } from 'vitest'
import { formatArea, formatCo2e, formatList, formatMoney, formatPercent } from '../../sdk/src/format.js'
import { fill, resolveLocale, stringsFor } from '../../sdk/src/i18n.js'
import { spaces } from './helpers.js'

describe('resolveLocale', () => {
  it.each([
    ['en-GB', 'en-GB'],
    ['en-US', 'en-US'],
    ['de-DE', 'de-DE'],
    ['en-us', 'en-US'],
    ['EN-gb', 'en-GB'],
    ['en', 'en-GB'],
    ['en-AU', 'en-GB'],
    ['de', 'de-DE'],
    ['de-AT', 'de-DE'],
    ['de-CH', 'de-DE'],
    ['fr-FR', 'en-GB'],
    ['xx-XX', 'en-GB'],
    [undefined, 'en-GB'],
    ['', 'en-GB'],
  ])('%s → %s', (tag, resolved) => expect(resolveLocale(tag)).toBe(resolved))

  it('gives each locale its strings; only en-US has the disclosure and imperial units', () => {
    expect(stringsFor('de-AT').confirm).toBe('Bestätigen')
    expect(stringsFor('en-US').disclosure?.text).toContain('tax-deductible')
    expect(stringsFor('en-US').imperial).toBe(true)
    expect(stringsFor('en-GB').disclosure).toBeUndefined()
    expect(stringsFor('de-DE').disclosure).toBeUndefined()
    expect(stringsFor('fr-FR')).toBe(stringsFor('en-GB'))
  })

  it('the bundled locales have every string of en-GB', () => {
    const keys = Object.keys(stringsFor('en-GB')).sort()
    for (const tag of ['en-US', 'de-DE'])
      expect(
        Object.keys(stringsFor(tag))
          .filter((k) => k !== 'disclosure' && k !== 'imperial')
          .sort(),
      ).toEqual(keys)
  })
})

describe('fill', () => {
  it('splits a template into text and values, leaving unknown placeholders as they are', () => {
    const node = { node: true }
    expect(fill('Offset it for {price}', { price: node })).toEqual(['Offset it for ', node])
    expect(fill('{a} and {b}', { a: 'A' })).toEqual(['A', ' and ', '{b}'])
  })
})

describe('formatMoney', () => {
  it.each([
    [45, 'GBP', 'de-DE', '0,45 £'],
    [45, 'GBP', 'en-GB', '£0.45'],
    [45, 'GBP', 'en-US', '£0.45'],
    [4797, 'EUR', 'de-DE', '47,97 €'],
    [4797, 'USD', 'en-US', '$47.97'],
    [4800, 'JPY', 'en-US', '¥4,800'],
    [73, 'KWD', 'en-US', 'KWD 0.073'],
    [100, 'GBP', 'en-GB', '£1.00'],
    [123456789, 'EUR', 'de-DE', '1.234.567,89 €'],
    [9007199254740991, 'USD', 'en-US', '$90,071,992,547,409.91'],
  ])('%i %s in %s → %s', (minor, currency, locale, text) => expect(spaces(formatMoney(minor, currency, locale))).toBe(text))
})

describe('footprint figures', () => {
  const gb = stringsFor('en-GB')
  const us = stringsFor('en-US')
  const de = stringsFor('de-DE')
  it.each([
    [105.8, 3.73, 'en-GB', gb, '106 g CO₂e'],
    [10833.2, 382.13, 'en-GB', gb, '10.8 kg CO₂e'],
    [10833.2, 382.13, 'de-DE', de, '10,8 kg CO₂e'],
    [2_500_000, 88184.9, 'en-GB', gb, '2.5 t CO₂e'],
    [10833.2, 382.13, 'en-US', us, '23.9 lb CO₂e'],
    [105.8, 3.73, 'en-US', us, '3.7 oz CO₂e'],
  ])('%d g / %d oz in %s → %s', (grams, ounces, locale, strings, text) =>
    expect(spaces(formatCo2e(grams, ounces, locale, strings))).toBe(text),
  )

  it('areas in m² (1 decimal) or ft² (whole) for en-US', () => {
    expect(spaces(formatArea(22.11, 237.97, 'en-GB', gb))).toBe('22.1 m²')
    expect(spaces(formatArea(22.11, 237.97, 'de-DE', de))).toBe('22,1 m²')
    expect(spaces(formatArea(22.11, 237.97, 'en-US', us))).toBe('238 ft²')
    expect(spaces(formatArea(1234.5, 13288, 'en-US', us))).toBe('13,288 ft²')
  })

  it('percentages and lists in the locale', () => {
    expect(formatPercent(0.1935483871, 'en-US')).toBe('19.4%')
    expect(spaces(formatPercent(0.1935483871, 'de-DE'))).toBe('19,4 %')
    expect(formatList(['A', 'B', 'C'], 'en-GB')).toBe('A, B and C')
    expect(formatList(['A', 'B', 'C'], 'en-US')).toBe('A, B, and C')
    expect(formatList(['A', 'B'], 'de-DE')).toBe('A und B')
  })
})
