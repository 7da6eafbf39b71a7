// The widget's own strings. The API supplies the footprint equivalents already localised; everything
// else on screen comes from here. en-GB, en-US and de-DE are bundled; any other locale falls back by
// language, then to en-GB (the API's rule, src/domain/equivalents.ts).

export interface Strings {
  titleCarbon: string
  titleNature: string
  footprintCarbon: string
  footprintNature: string
  offset: string
  offsetHint: string
  projects: string
  partners: string
  contribution: string
  contributionHint: string
  roundUp: string
  addedCheckout: string
  added: string
  none: string
  confirm: string
  noThanks: string
  chooseFirst: string
  close: string
  loading: string
  logoAlt: string
  /** US charitable-fundraising disclosure (en-US only): who collects, partners, payout time, tax-deductibility, fee. */
  disclosure?: {
    text: string
    /** Put before `text` when the API names who collects the contributions. */
    collector: string
    /** The payout time: a range, or one figure. */
    days: string
    daysExact: string
  }
  /** Pounds and square feet rather than kilograms and square metres. */
  imperial?: boolean
}

const enGB: Strings = {
  titleCarbon: "Your order's carbon footprint",
  titleNature: "Your order's nature footprint",
  footprintCarbon: "This order's estimated footprint is {amount}.",
  footprintNature: "This order's estimated footprint is {area} of intact nature.",
  offset: 'Offset it for {price}',
  offsetHint: 'Funds carbon projects with {partners}.',
  projects: 'Projects',
  partners: 'Partners',
  contribution: 'Add a contribution',
  contributionHint: 'Goes to {partners}.',
  roundUp: 'Round up to {total} (+{amount})',
  addedCheckout: '{amount} added to your order.',
  added: 'Selected: {amount}.',
  none: 'Nothing selected.',
  confirm: 'Confirm',
  noThanks: 'No thanks',
  chooseFirst: 'Choose an option first.',
  close: 'Close',
  loading: 'Loading…',
  logoAlt: '{name} logo',
}

const enUS: Strings = {
  ...enGB,
  imperial: true,
  disclosure: {
    text:
      'Contributions are granted to {partners}, who receive the funds within {days}. ' +
      'Contributions may be tax-deductible. A service fee of {fee} of each contribution (including tax) is deducted before the grant.',
    collector: '{collector} collects contributions for the partners named here. ',
    days: '{min} to {max} days',
    daysExact: '{max} days',
  },
}

const deDE: Strings = {
  titleCarbon: 'Der CO₂-Fußabdruck Ihrer Bestellung',
  titleNature: 'Der Natur-Fußabdruck Ihrer Bestellung',
  footprintCarbon: 'Geschätzter Fußabdruck dieser Bestellung: {amount}.',
  footprintNature: 'Geschätzter Fußabdruck dieser Bestellung: {area} intakter Natur.',
  offset: 'Für {price} ausgleichen',
  offsetHint: 'Finanziert Klimaschutzprojekte mit {partners}.',
  projects: 'Projekte',
  partners: 'Partner',
  contribution: 'Einen Beitrag hinzufügen',
  contributionHint: 'Geht an {partners}.',
  roundUp: 'Auf {total} aufrunden (+{amount})',
  addedCheckout: '{amount} werden Ihrer Bestellung hinzugefügt.',
  added: 'Ausgewählt: {amount}.',
  none: 'Nichts ausgewählt.',
  confirm: 'Bestätigen',
  noThanks: 'Nein, danke',
  chooseFirst: 'Bitte wählen Sie zuerst eine Option.',
  close: 'Schließen',
  loading: 'Wird geladen …',
  logoAlt: 'Logo von {name}',
}

const BUNDLES: Readonly<Record<string, Strings>> = { 'en-GB': enGB, 'en-US': enUS, 'de-DE': deDE }
export const BUNDLED_LOCALES = Object.keys(BUNDLES)
export const DEFAULT_LOCALE = 'en-GB'

const language = (tag: string) => tag.split('-')[0]?.toLowerCase()

/** The bundled locale for a BCP 47 tag: exact (case-insensitive) → first of the same language → en-GB. */
export function resolveLocale(tag: string | undefined): string {
  if (!tag) return DEFAULT_LOCALE
  const lower = tag.toLowerCase()
  return (
    BUNDLED_LOCALES.find((l) => l.toLowerCase() === lower) ?? BUNDLED_LOCALES.find((l) => language(l) === language(tag)) ?? DEFAULT_LOCALE
  )
}

export const stringsFor = (tag: string | undefined): Strings => BUNDLES[resolveLocale(tag)] ?? enGB

/** "Offset it for {price}" + {price: node} → ["Offset it for ", node]: text and nodes, never markup. */
export function fill<T>(template: string, values: Readonly<Record<string, string | T>>): (string | T)[] {
  return template
    .split(/\{(\w+)\}/)
    .map((part, i) => (i % 2 ? (values[part] ?? `{${part}}`) : part))
    .filter((part) => part !== '')
}

/** fill() to one string. */
export const format = (template: string, values: Readonly<Record<string, string>>): string => fill(template, values).join('')
