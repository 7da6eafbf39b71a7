// new Canopy({ apiBase, locale, appearance }): one Canopy deployment, one look, any number of sessions.
import { appearanceCss, type Appearance } from './appearance.js'
import { sheet } from './dom.js'
import { Elements, type ElementsOptions } from './elements.js'
import { BASE_CSS } from './styles.js'
import { SDK_VERSION } from './version.js'

export interface CanopyOptions {
  /** The Canopy deployment: "https://canopy.example.com" (https; http only for localhost). The script
   *  bundle defaults it to the origin it was loaded from. */
  apiBase?: string
  /** BCP 47 locale of the widget: en-GB, en-US and de-DE are bundled; others fall back by language, then to en-GB.
   *  Default: the session's locale. */
  locale?: string
  appearance?: Appearance
}

const LOOPBACK = /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])$/
let defaultApiBase: string | undefined

/** The script bundle sets the origin it was served from (sdk/src/script.ts). */
export function setDefaultApiBase(apiBase: string | undefined): void {
  defaultApiBase = apiBase
}

/** https://canopy.example.com/base/js/v3/canopy.js → https://canopy.example.com/base */
export function apiBaseOfScript(src: string): string | undefined {
  const match = /^(https?:\/\/[^?#]*?)\/js\/v[^/?#]+\/canopy(?:\.min)?\.js(?:[?#].*)?$/.exec(src)
  return match?.[1]
}

function normaliseApiBase(value: unknown): string {
  if (value === undefined && defaultApiBase) return defaultApiBase
  if (typeof value !== 'string' || !value) {
    throw new Error('Canopy: apiBase is required: the URL of your Canopy deployment, such as "https://canopy.example.com"')
  }
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new Error(`Canopy: apiBase ${JSON.stringify(value)} is not an absolute URL`)
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK.test(url.hostname))) {
    throw new Error(`Canopy: apiBase ${JSON.stringify(value)} must use https (http only for localhost)`)
  }
  if (url.username || url.password || url.search || url.hash) {
    throw new Error(`Canopy: apiBase ${JSON.stringify(value)} must not contain credentials, a query or a fragment`)
  }
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '')
}

function normaliseLocale(value: unknown): string | undefined {
  if (value === undefined) return undefined
  try {
    if (typeof value === 'string' && value) return Intl.getCanonicalLocales(value)[0]
  } catch {
    // reported below
  }
  throw new Error(`Canopy: locale ${JSON.stringify(value)} is not a BCP 47 language tag such as "en-GB"`)
}

let baseSheet: CSSStyleSheet | undefined

export class Canopy {
  static readonly version = SDK_VERSION
  readonly apiBase: string
  readonly locale: string | undefined
  #css: string
  #sheet: CSSStyleSheet | undefined

  /** new Canopy({ apiBase, locale, appearance }), or new Canopy(apiBase, { locale, appearance }). */
  constructor(options: CanopyOptions | string = {}, more: Omit<CanopyOptions, 'apiBase'> = {}) {
    const all: CanopyOptions = typeof options === 'string' ? { ...more, apiBase: options } : options
    if (typeof all !== 'object' || all === null) throw new Error('Canopy: options must be an object: { apiBase, locale, appearance }')
    for (const key of Object.keys(all)) {
      if (key !== 'apiBase' && key !== 'locale' && key !== 'appearance') {
        throw new Error(`Canopy: ${key} is not an option (apiBase, locale, appearance)`)
      }
    }
    this.apiBase = normaliseApiBase(all.apiBase)
    this.locale = normaliseLocale(all.locale)
    this.#css = appearanceCss(all.appearance)
  }

  /** The elements of one session. */
  elements(options: ElementsOptions): Elements {
    return new Elements({ apiBase: this.apiBase, locale: this.locale, sheets: () => this.#sheets() }, options)
  }

  #sheets(): CSSStyleSheet[] {
    baseSheet ??= sheet(BASE_CSS)
    if (this.#css) this.#sheet ??= sheet(this.#css)
    return [baseSheet, this.#sheet].filter((s): s is CSSStyleSheet => s !== undefined)
  }
}

/**
 * new Canopy(…) in a browser; null where there is no DOM (server-side rendering), so that shared code
 * can call it anywhere. Rejects with the constructor's Error for bad options.
 */
export async function loadCanopy(options?: CanopyOptions | string, more?: Omit<CanopyOptions, 'apiBase'>): Promise<Canopy | null> {
  if (typeof window === 'undefined' || typeof document === 'undefined' || typeof customElements === 'undefined') return null
  return new Canopy(options, more)
}
