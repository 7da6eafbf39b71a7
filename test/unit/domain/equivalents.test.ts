import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { formatMinorUnits } from '../../../src/domain/money.js'
import { SUPPORTED_LOCALES, describeEquivalents, resolveLocale } from '../../../src/domain/equivalents.js'
import type { CarbonFootprint, NatureFootprint } from '../../../src/domain/types.js'
import { plainSpaces } from './fixtures.js'

const carbon = (co2eGrams: string): CarbonFootprint => ({ kind: 'carbon', co2eGrams, co2eOunces: '0' })
const nature = (areaSquareMetres: string): NatureFootprint => ({ kind: 'nature', areaSquareMetres, areaSquareFeet: '0' })

describe('resolveLocale', () => {
  it.each([
    ['en-GB', 'en-GB'],
    ['en-US', 'en-US'],
    ['EN-us', 'en-US'],
    ['de_DE', 'de-DE'],
    ['de', 'de-DE'],
    ['de-AT', 'de-DE'],
    ['fr-CA', 'fr-FR'],
    ['sv', 'sv-SE'],
    ['en-AU', 'en-GB'],
    ['en', 'en-GB'],
    ['ja-JP', 'en-GB'],
    ['pl-PL', 'en-GB'],
    ['', 'en-GB'],
    ['x', 'en-GB'],
    [undefined, 'en-GB'],
  ])('%j → %s', (requested, expected) => {
    expect(resolveLocale(requested)).toBe(expected)
  })

  it('supports at least the eight core locales', () => {
    expect(SUPPORTED_LOCALES).toEqual(expect.arrayContaining(['en-GB', 'en-US', 'de-DE', 'fr-FR', 'es-ES', 'it-IT', 'nl-NL', 'sv-SE']))
  })
})

describe('describeEquivalents: carbon', () => {
  // 18,099.2 g (USD 100 at a US restaurant):
  // car: 18,099.2 / 393 = 46.05 miles → 46; 18,099.2 / 244.2 = 74.12 km → 74
  // phone: 18,099.2 / 12.4 = 1,459.6 charges → 1,460
  // tree: 18,099.2 × 3,652.5 / 60,000 = 1,101.8 days → 1,102
  it.each([
    [
      'en-GB',
      46,
      [
        "That's about the same as driving an average petrol car for 46 miles.",
        "That's about the same as charging a smartphone 1,460 times.",
        "That's about as much CO₂ as a tree seedling absorbs in 1,102 days.",
      ],
    ],
    [
      'en-US',
      46,
      [
        "That's about the same as driving an average gas-powered car for 46 miles.",
        "That's about the same as charging a smartphone 1,460 times.",
        "That's about as much CO₂ as a tree seedling absorbs in 1,102 days.",
      ],
    ],
    [
      'de-DE',
      74,
      [
        'Das entspricht etwa einer Fahrt von 74 km mit einem durchschnittlichen Benzinauto.',
        'Das entspricht etwa 1.460 Smartphone-Ladungen.',
        'Das ist etwa so viel CO₂, wie ein Baumsetzling in 1.102 Tagen aufnimmt.',
      ],
    ],
    [
      'fr-FR',
      74,
      [
        'Cela équivaut à environ 74 km parcourus avec une voiture essence moyenne.',
        'Cela équivaut à environ 1 460 recharges de smartphone.',
        'C’est à peu près la quantité de CO₂ qu’un jeune arbre absorbe en 1 102 jours.',
      ],
    ],
    [
      'es-ES',
      74,
      [
        'Equivale a recorrer aproximadamente 74 km en un coche de gasolina medio.',
        'Equivale aproximadamente a cargar un smartphone 1460 veces.',
        'Es aproximadamente el CO₂ que absorbe un árbol joven en 1102 días.',
      ],
    ],
    [
      'it-IT',
      74,
      [
        'Equivale a percorrere circa 74 km con un’auto a benzina media.',
        'Equivale a ricaricare uno smartphone circa 1460 volte.',
        'È all’incirca la CO₂ che un giovane albero assorbe in 1102 giorni.',
      ],
    ],
    [
      'nl-NL',
      74,
      [
        'Dat staat gelijk aan ongeveer 74 km rijden met een gemiddelde benzineauto.',
        'Dat staat gelijk aan ongeveer 1.460 keer een smartphone opladen.',
        'Dat is ongeveer de hoeveelheid CO₂ die een jonge boom in 1.102 dagen opneemt.',
      ],
    ],
    [
      'sv-SE',
      74,
      [
        'Det motsvarar att köra ungefär 74 km med en genomsnittlig bensinbil.',
        'Det motsvarar att ladda en smartphone ungefär 1 460 gånger.',
        'Det är ungefär lika mycket koldioxid som ett ungt träd tar upp på 1 102 dagar.',
      ],
    ],
  ])('%s: full sentences with Intl-formatted numbers (miles only for en-GB/en-US)', (locale, distance, sentences) => {
    const equivalents = describeEquivalents(carbon('18099.2'), locale)
    expect(equivalents.map((e) => e.key)).toEqual(['car', 'phone', 'tree'])
    expect(equivalents.map((e) => e.value)).toEqual([distance, 1460, 1102])
    expect(equivalents.map((e) => plainSpaces(e.description))).toEqual(sentences)
  })

  it('falls back to en-GB for an unsupported locale', () => {
    expect(describeEquivalents(carbon('18099.2'), 'ja-JP')).toEqual(describeEquivalents(carbon('18099.2'), 'en-GB'))
  })

  it('uses singular forms and finer scales for small values', () => {
    // 12.4 g: one phone charge; 12.4 / 393 = 0.0316 → 0.03 miles; 12.4 × 3,652.5 / 60,000 = 0.7549 → 0.75 days
    const [car, phone, tree] = describeEquivalents(carbon('12.4'), 'en-GB')
    expect(car).toEqual({ key: 'car', value: 0.03, description: "That's about the same as driving an average petrol car for 0.03 miles." })
    expect(phone?.description).toBe("That's about the same as charging a smartphone once.")
    expect(tree?.value).toBe(0.75)
    // 393 g is exactly one mile
    expect(describeEquivalents(carbon('393'), 'en-US')[0]?.description).toBe(
      "That's about the same as driving an average gas-powered car for 1 mile.",
    )
    // French treats values below 2 as singular: « 0,75 jour », « 1 km parcouru »
    const french = describeEquivalents(carbon('244.2'), 'fr-FR').map((e) => plainSpaces(e.description))
    expect(french[0]).toBe('Cela équivaut à environ 1 km parcouru avec une voiture essence moyenne.')
    expect(plainSpaces(describeEquivalents(carbon('12.4'), 'fr-FR')[2]?.description ?? '')).toBe(
      'C’est à peu près la quantité de CO₂ qu’un jeune arbre absorbe en 0,75 jour.',
    )
  })

  it.each([
    ['0.0', [0, 0, 0]],
    ['39.3', [0.1, 3.2, 2.4]],
    ['1000000.0', [2545, 80645, 60875]],
  ])('rounds %s g sensibly: 2 dp below 1, 1 dp below 10, whole numbers above', (grams, values) => {
    expect(describeEquivalents(carbon(grams), 'en-GB').map((e) => e.value)).toEqual(values)
  })
})

describe('describeEquivalents: nature', () => {
  // 22.11 m²: 22.11 / 12.5 = 1.77 parking spaces → 1.8; 22.11 / 260.7569 = 0.0848 tennis courts → 0.08
  it.each([
    ['en-GB', ["That's about the area of 1.8 parking spaces.", "That's about the area of 0.08 tennis courts."]],
    ['de-DE', ['Das entspricht etwa der Fläche von 1,8 Parkplätzen.', 'Das entspricht etwa der Fläche von 0,08 Tennisplätzen.']],
    [
      'fr-FR',
      [
        'Cela correspond à peu près à la surface de 1,8 place de parking.',
        'Cela correspond à peu près à la surface de 0,08 court de tennis.',
      ],
    ],
    [
      'es-ES',
      [
        'Equivale aproximadamente a la superficie de 1,8 plazas de aparcamiento.',
        'Equivale aproximadamente a la superficie de 0,08 pistas de tenis.',
      ],
    ],
    ['it-IT', ['Equivale all’incirca alla superficie di 1,8 posti auto.', 'Equivale all’incirca alla superficie di 0,08 campi da tennis.']],
    ['nl-NL', ['Dat is ongeveer de oppervlakte van 1,8 parkeerplaatsen.', 'Dat is ongeveer de oppervlakte van 0,08 tennisbanen.']],
    ['sv-SE', ['Det motsvarar ungefär ytan av 1,8 parkeringsplatser.', 'Det motsvarar ungefär ytan av 0,08 tennisbanor.']],
  ])('%s', (locale, sentences) => {
    const equivalents = describeEquivalents(nature('22.11'), locale)
    expect(equivalents.map((e) => e.key)).toEqual(['parkingSpace', 'tennisCourt'])
    expect(equivalents.map((e) => e.value)).toEqual([1.8, 0.08])
    expect(equivalents.map((e) => plainSpaces(e.description))).toEqual(sentences)
  })
})

describe('describeEquivalents: exact ratios', () => {
  // A figure written with an exponent is no plain decimal: describeEquivalents takes DisplayDecimal's path for it, the
  // only path there was before the exact one. Both must give the same equivalents, sentence for sentence.
  const throughDecimal = (figure: string) => `${figure}e0`
  const figure = (units: bigint, scale: number) => formatMinorUnits(units, scale)
  // Up to 10^13 g (10 Mt) and far beyond, where the exact path gives way to DisplayDecimal's.
  const units = fc.oneof(
    fc.bigInt({ min: 0n, max: 10n ** 14n }),
    fc.bigInt({ min: 0n, max: 10n ** 26n }),
    fc.bigInt({ min: 0n, max: 20_000n }),
  )

  // Carbon footprints are in grams to 1 place, nature's in square metres to 2.
  it.each([
    ['carbon', carbon, 1],
    ['nature', nature, 2],
  ] as const)('gives what DisplayDecimal gives for %s, in every locale', (_kind, footprint, scale) => {
    fc.assert(
      fc.property(units, fc.constantFrom(...SUPPORTED_LOCALES), (value, locale) => {
        const text = figure(value, scale)
        expect(describeEquivalents(footprint(text), locale)).toEqual(describeEquivalents(footprint(throughDecimal(text)), locale))
      }),
      { numRuns: 2_000 },
    )
  })

  it.each([
    // Exactly on a tie at each number of digits: 15.5 g is 1.25 charges, 4,000 g is 243.5 days of a seedling, 4,126.5 g
    // is 10.5 miles (393 g a mile), and 3.1 g a quarter of a charge (no tie at 2 places).
    ['15.5', 'phone', 1.3],
    ['4000.0', 'tree', 244],
    ['4126.5', 'car', 11],
    ['3.1', 'phone', 0.25],
  ])('rounds %s g half-up at its display digits (%s: %d)', (grams, key, value) => {
    for (const figure of [grams, throughDecimal(grams)]) {
      expect(describeEquivalents(carbon(figure), 'en-GB').find((e) => e.key === key)?.value).toBe(value)
    }
  })
})
