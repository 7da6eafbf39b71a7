// Localised, ready-to-show equivalents of a footprint (docs/pricing.md, "Equivalents and locale"). Constants: data/SOURCES.md §5.
import type { Equivalent, Footprint } from './types.js'
import { DisplayDecimal as Decimal, plainDecimalOf, pow10, quotientHalfUp, roundHalfUp, type PlainDecimal } from './money.js'
import type { Decimal as MoneyDecimal } from './money.js'

/** The locales we write sentences for; the first of each language is its fallback. */
export const SUPPORTED_LOCALES: readonly string[] = ['en-GB', 'en-US', 'de-DE', 'fr-FR', 'es-ES', 'it-IT', 'nl-NL', 'sv-SE']
export const DEFAULT_LOCALE = 'en-GB'

/** EPA: 3.93e-4 t CO2e per mile by an average gasoline passenger vehicle. */
export const CAR_GRAMS_PER_MILE = '393'
/** 393 g/mile ÷ 1.609344 km/mile, as docs/pricing.md fixes it. */
export const CAR_GRAMS_PER_KM = '244.2'
/** EPA: 1.24e-5 t CO2 per smartphone charged. */
export const PHONE_GRAMS_PER_CHARGE = '12.4'
/** EPA: 0.060 t CO2 per urban tree seedling grown for 10 years = 60,000 g over 3,652.5 days. */
export const TREE_GRAMS_PER_10_YEARS = '60000'
export const DAYS_PER_10_YEARS = '3652.5'
/** An assumed car parking space of 2.5 m × 5.0 m. */
export const PARKING_SPACE_SQUARE_METRES = '12.5'
/** A doubles tennis court, 23.77 m × 10.97 m (ITF Rules of Tennis). */
export const TENNIS_COURT_SQUARE_METRES = '260.7569'

type Plural = Intl.LDMLPluralRule
type Count = (count: string, plural: Plural) => string

interface LocaleText {
  readonly distanceUnit: 'mile' | 'kilometer'
  readonly unitDisplay: 'long' | 'short'
  readonly car: Count
  readonly phone: Count
  readonly tree: Count
  readonly parkingSpace: Count
  readonly tennisCourt: Count
}

const one = (plural: Plural, singular: string, other: string): string => (plural === 'one' ? singular : other)

const english = (car: string): LocaleText => ({
  distanceUnit: 'mile',
  unitDisplay: 'long',
  car: (d) => `That's about the same as driving an average ${car} for ${d}.`,
  phone: (n, p) =>
    p === 'one' ? "That's about the same as charging a smartphone once." : `That's about the same as charging a smartphone ${n} times.`,
  tree: (n, p) => `That's about as much CO₂ as a tree seedling absorbs in ${n} ${one(p, 'day', 'days')}.`,
  parkingSpace: (n, p) => `That's about the area of ${n} ${one(p, 'parking space', 'parking spaces')}.`,
  tennisCourt: (n, p) => `That's about the area of ${n} ${one(p, 'tennis court', 'tennis courts')}.`,
})

const TEXTS: Readonly<Record<string, LocaleText>> = {
  'en-GB': english('petrol car'),
  'en-US': english('gas-powered car'),
  'de-DE': {
    distanceUnit: 'kilometer',
    unitDisplay: 'short',
    car: (d) => `Das entspricht etwa einer Fahrt von ${d} mit einem durchschnittlichen Benzinauto.`,
    phone: (n, p) => `Das entspricht etwa ${n} ${one(p, 'Smartphone-Ladung', 'Smartphone-Ladungen')}.`,
    tree: (n, p) => `Das ist etwa so viel CO₂, wie ein Baumsetzling in ${n} ${one(p, 'Tag', 'Tagen')} aufnimmt.`,
    parkingSpace: (n, p) => `Das entspricht etwa der Fläche von ${n} ${one(p, 'Parkplatz', 'Parkplätzen')}.`,
    tennisCourt: (n, p) => `Das entspricht etwa der Fläche von ${n} ${one(p, 'Tennisplatz', 'Tennisplätzen')}.`,
  },
  'fr-FR': {
    distanceUnit: 'kilometer',
    unitDisplay: 'short',
    car: (d, p) => `Cela équivaut à environ ${d} ${one(p, 'parcouru', 'parcourus')} avec une voiture essence moyenne.`,
    phone: (n, p) => `Cela équivaut à environ ${n} ${one(p, 'recharge', 'recharges')} de smartphone.`,
    tree: (n, p) => `C’est à peu près la quantité de CO₂ qu’un jeune arbre absorbe en ${n} ${one(p, 'jour', 'jours')}.`,
    parkingSpace: (n, p) => `Cela correspond à peu près à la surface de ${n} ${one(p, 'place', 'places')} de parking.`,
    tennisCourt: (n, p) => `Cela correspond à peu près à la surface de ${n} ${one(p, 'court', 'courts')} de tennis.`,
  },
  'es-ES': {
    distanceUnit: 'kilometer',
    unitDisplay: 'short',
    car: (d) => `Equivale a recorrer aproximadamente ${d} en un coche de gasolina medio.`,
    phone: (n, p) => `Equivale aproximadamente a cargar un smartphone ${n} ${one(p, 'vez', 'veces')}.`,
    tree: (n, p) => `Es aproximadamente el CO₂ que absorbe un árbol joven en ${n} ${one(p, 'día', 'días')}.`,
    parkingSpace: (n, p) => `Equivale aproximadamente a la superficie de ${n} ${one(p, 'plaza', 'plazas')} de aparcamiento.`,
    tennisCourt: (n, p) => `Equivale aproximadamente a la superficie de ${n} ${one(p, 'pista', 'pistas')} de tenis.`,
  },
  'it-IT': {
    distanceUnit: 'kilometer',
    unitDisplay: 'short',
    car: (d) => `Equivale a percorrere circa ${d} con un’auto a benzina media.`,
    phone: (n, p) => `Equivale a ricaricare uno smartphone circa ${n} ${one(p, 'volta', 'volte')}.`,
    tree: (n, p) => `È all’incirca la CO₂ che un giovane albero assorbe in ${n} ${one(p, 'giorno', 'giorni')}.`,
    parkingSpace: (n, p) => `Equivale all’incirca alla superficie di ${n} ${one(p, 'posto auto', 'posti auto')}.`,
    tennisCourt: (n, p) => `Equivale all’incirca alla superficie di ${n} ${one(p, 'campo da tennis', 'campi da tennis')}.`,
  },
  'nl-NL': {
    distanceUnit: 'kilometer',
    unitDisplay: 'short',
    car: (d) => `Dat staat gelijk aan ongeveer ${d} rijden met een gemiddelde benzineauto.`,
    phone: (n) => `Dat staat gelijk aan ongeveer ${n} keer een smartphone opladen.`,
    tree: (n, p) => `Dat is ongeveer de hoeveelheid CO₂ die een jonge boom in ${n} ${one(p, 'dag', 'dagen')} opneemt.`,
    parkingSpace: (n, p) => `Dat is ongeveer de oppervlakte van ${n} ${one(p, 'parkeerplaats', 'parkeerplaatsen')}.`,
    tennisCourt: (n, p) => `Dat is ongeveer de oppervlakte van ${n} ${one(p, 'tennisbaan', 'tennisbanen')}.`,
  },
  'sv-SE': {
    distanceUnit: 'kilometer',
    unitDisplay: 'short',
    car: (d) => `Det motsvarar att köra ungefär ${d} med en genomsnittlig bensinbil.`,
    phone: (n, p) => `Det motsvarar att ladda en smartphone ungefär ${n} ${one(p, 'gång', 'gånger')}.`,
    tree: (n, p) => `Det är ungefär lika mycket koldioxid som ett ungt träd tar upp på ${n} ${one(p, 'dag', 'dagar')}.`,
    parkingSpace: (n, p) => `Det motsvarar ungefär ytan av ${n} ${one(p, 'parkeringsplats', 'parkeringsplatser')}.`,
    tennisCourt: (n, p) => `Det motsvarar ungefär ytan av ${n} ${one(p, 'tennisbana', 'tennisbanor')}.`,
  },
}

/** The supported locales, as resolveLocale gives them. */
const SUPPORTED_LOCALE_SET: ReadonlySet<string> = new Set(SUPPORTED_LOCALES)
const BY_LOWER_TAG: ReadonlyMap<string, string> = new Map(SUPPORTED_LOCALES.map((tag) => [tag.toLowerCase(), tag]))
const BY_LANGUAGE: ReadonlyMap<string, string> = new Map(
  [...SUPPORTED_LOCALES].reverse().map((tag) => [tag.slice(0, tag.indexOf('-')).toLowerCase(), tag]),
)

/**
 * The supported locale to use for a requested tag: the exact tag (case-insensitive, "_" accepted
 * for "-"), else the first supported locale of the same language ("de-AT" → "de-DE",
 * "en-AU" → "en-GB"), else "en-GB" (the contract's fallback). Undefined or blank → "en-GB".
 */
export function resolveLocale(requested: string | undefined): string {
  if (requested === undefined) return DEFAULT_LOCALE
  const tag = requested.trim().replace(/_/g, '-').toLowerCase()
  const exact = BY_LOWER_TAG.get(tag)
  if (exact !== undefined) return exact
  const language = tag.split('-')[0] ?? ''
  return BY_LANGUAGE.get(language) ?? DEFAULT_LOCALE
}

/** Digits an equivalent is displayed with (displayDigits): 0, 1 or 2. */
const DISPLAY_DIGITS = [0, 1, 2] as const

/**
 * A supported locale's sentences and its Intl objects, by displayed digits: numbers, distances in its unit, plural
 * rules. Building an Intl object costs tens of microseconds and every quote formats three equivalents, so each is made
 * once per locale (on its first quote), and found without building a key.
 */
interface LocaleFormats {
  readonly text: LocaleText
  readonly numbers: readonly Intl.NumberFormat[]
  readonly distances: readonly Intl.NumberFormat[]
  readonly plurals: readonly Intl.PluralRules[]
}

const formatsByLocale = new Map<string, LocaleFormats>()

/** The formats of a resolved locale (one of SUPPORTED_LOCALES). */
function formatsOf(locale: string): LocaleFormats {
  let formats = formatsByLocale.get(locale)
  if (formats === undefined) {
    const text = TEXTS[locale] ?? (TEXTS[DEFAULT_LOCALE] as LocaleText)
    const number = (digits: number, unit?: Intl.NumberFormatOptions) =>
      new Intl.NumberFormat(locale, { minimumFractionDigits: 0, maximumFractionDigits: digits, ...unit })
    formats = {
      text,
      numbers: DISPLAY_DIGITS.map((digits) => number(digits)),
      distances: DISPLAY_DIGITS.map((digits) => number(digits, { style: 'unit', unit: text.distanceUnit, unitDisplay: text.unitDisplay })),
      plurals: DISPLAY_DIGITS.map((digits) => new Intl.PluralRules(locale, { minimumFractionDigits: 0, maximumFractionDigits: digits })),
    }
    formatsByLocale.set(locale, formats)
  }
  return formats
}

/** Display scale of an equivalent: 2 dp below 1, 1 dp below 10, whole numbers from 10 up. */
export function displayDigits(value: MoneyDecimal): number {
  const magnitude = value.abs()
  return magnitude.lessThan(1) ? 2 : magnitude.lessThan(10) ? 1 : 0
}

/** An equivalent's displayed number: its value rounded as displayDigits says, and that number of digits. */
interface Rounded {
  readonly value: number
  readonly digits: number
}

/** DisplayDecimal's significant digits (src/domain/money.ts). */
const DISPLAY_PRECISION = 20n
const BEYOND_DISPLAY_PRECISION = 10n ** DISPLAY_PRECISION

/**
 * a × b ÷ c rounded as displayDigits says (2 places below 1, 1 below 10, else none), in bigint arithmetic: the answer
 * the DisplayDecimal path (roundedOf) gives, where that is proven, else undefined (the caller then takes that path).
 * The product a × b is exact in DisplayDecimal when it has at most 20 digits; the quotient's rounding is
 * quotientHalfUp's at 20 digits, whose bound also keeps a quotient below 1 or 10 far enough below them that the 20-digit
 * quotient picks the same number of places.
 */
function exactRounded(a: PlainDecimal, b: PlainDecimal, c: PlainDecimal): Rounded | undefined {
  const product = a.units * b.units
  if (product >= BEYOND_DISPLAY_PRECISION) return undefined
  const scale = a.scale + b.scale
  // q < 1 and q < 10, with q = (product / 10^scale) ÷ (c.units / 10^c.scale).
  const numerator = product * pow10(c.scale)
  const denominator = c.units * pow10(scale)
  const digits = numerator < denominator ? 2 : numerator < 10n * denominator ? 1 : 0
  const text = quotientHalfUp(product, scale, c, digits, DISPLAY_PRECISION)
  return text === undefined ? undefined : { value: Number(text), digits }
}

/** The same rounding by DisplayDecimal, for any figure. */
function roundedOf(exact: MoneyDecimal): Rounded {
  const digits = displayDigits(exact)
  return { value: Number(roundHalfUp(exact, digits).toString()), digits }
}

function equivalent(
  key: string,
  { value, digits }: Rounded,
  sentence: Count,
  numbers: readonly Intl.NumberFormat[],
  plurals: readonly Intl.PluralRules[],
): Equivalent {
  const text = (numbers[digits] as Intl.NumberFormat).format(value)
  return { key, value, description: sentence(text, (plurals[digits] as Intl.PluralRules).select(value)) }
}

/** A constant of the equivalents, parsed once: as a Decimal for DisplayDecimal's path, as a plain decimal for the exact one. */
interface Constant {
  readonly decimal: MoneyDecimal
  readonly plain: PlainDecimal
}

const constant = (text: string): Constant => {
  const plain = plainDecimalOf(text)
  if (plain === undefined) throw new Error(`not a plain decimal: ${text}`)
  return { decimal: new Decimal(text), plain }
}

const PER = {
  carMile: constant(CAR_GRAMS_PER_MILE),
  carKm: constant(CAR_GRAMS_PER_KM),
  phone: constant(PHONE_GRAMS_PER_CHARGE),
  treeDays: constant(DAYS_PER_10_YEARS),
  tree: constant(TREE_GRAMS_PER_10_YEARS),
  parkingSpace: constant(PARKING_SPACE_SQUARE_METRES),
  tennisCourt: constant(TENNIS_COURT_SQUARE_METRES),
}
const ONE = constant('1')

/** figure × times ÷ over, rounded for display: exactly where proven (exactRounded), else through DisplayDecimal. */
function ratiosOf(figure: string, ratios: readonly (readonly [times: Constant, over: Constant])[]): Rounded[] {
  const plain = plainDecimalOf(figure)
  let decimal: MoneyDecimal | undefined
  return ratios.map(([times, over]) => {
    const exact = plain === undefined ? undefined : exactRounded(plain, times.plain, over.plain)
    if (exact !== undefined) return exact
    decimal ??= new Decimal(figure)
    return roundedOf(times === ONE ? decimal.div(over.decimal) : decimal.times(times.decimal).div(over.decimal))
  })
}

/**
 * Localised equivalents of a footprint, in a fixed key order. `value` is rounded half-up for
 * display (2 dp below 1, 1 dp below 10, else 0 dp); `description` is a complete sentence with the
 * same number formatted by Intl for `locale` (pass a resolved locale; others resolve as
 * resolveLocale does).
 * - carbon: `car` (miles at 393 g/mile for en-GB/en-US, km at 244.2 g/km elsewhere), `phone`
 *   (charges at 12.4 g each), `tree` (days of a tree seedling's absorption: 60 kg per 3,652.5 days);
 * - nature: `parkingSpace` (12.5 m² each) and `tennisCourt` (260.7569 m² each).
 */
export function describeEquivalents(footprint: Footprint, locale: string): Equivalent[] {
  // A quote's own locale is resolved already: found as it is, without resolving it again.
  const { text, numbers, distances, plurals } = formatsOf(SUPPORTED_LOCALE_SET.has(locale) ? locale : resolveLocale(locale))
  if (footprint.kind === 'nature') {
    const [parkingSpace, tennisCourt] = ratiosOf(footprint.areaSquareMetres, [
      [ONE, PER.parkingSpace],
      [ONE, PER.tennisCourt],
    ]) as [Rounded, Rounded]
    return [
      equivalent('parkingSpace', parkingSpace, text.parkingSpace, numbers, plurals),
      equivalent('tennisCourt', tennisCourt, text.tennisCourt, numbers, plurals),
    ]
  }
  const [car, phone, tree] = ratiosOf(footprint.co2eGrams, [
    [ONE, text.distanceUnit === 'mile' ? PER.carMile : PER.carKm],
    [ONE, PER.phone],
    [PER.treeDays, PER.tree],
  ]) as [Rounded, Rounded, Rounded]
  return [
    equivalent('car', car, text.car, distances, plurals),
    equivalent('phone', phone, text.phone, numbers, plurals),
    equivalent('tree', tree, text.tree, numbers, plurals),
  ]
}
