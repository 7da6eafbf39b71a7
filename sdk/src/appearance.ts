// appearance: { theme, variables } → one `:host { --canopy-*: … }` rule for a constructed stylesheet.
// Every value is checked against a narrow grammar first, so that nothing a page passes can end the
// declaration, open a rule, load a resource or reach another selector.

export interface AppearanceVariables {
  /** Buttons, switches and selected options. Any CSS colour: #0b6e4f, rgb(11 110 79), hsl(…), a name. */
  colorPrimary?: string
  colorBackground?: string
  colorText?: string
  /** A font-family list of names: "Inter", system-ui, sans-serif. */
  fontFamily?: string
  /** A length: 0, 8px, 0.5rem, 1em or a percentage. */
  borderRadius?: string
}

export interface Appearance {
  theme?: 'light' | 'dark'
  variables?: AppearanceVariables
}

const NUMBER = String.raw`[+-]?(?:\d+\.?\d*|\.\d+)`
const COLOUR_ARG = `${NUMBER}(?:%|deg|grad|rad|turn)?`
const COLOUR = new RegExp(
  String.raw`^(?:#(?:[\da-f]{3,4}|[\da-f]{6}|[\da-f]{8})|[a-z]{3,24}|(?:rgba?|hsla?|hwb|lab|lch|oklab|oklch)\(\s*${COLOUR_ARG}(?:(?:\s*[,/]\s*|\s+)${COLOUR_ARG}){0,3}\s*\))$`,
  'i',
)
const FAMILY = String.raw`(?:"[\w -]+"|'[\w -]+'|[\w-]+(?: [\w-]+)*)`
const FONT_FAMILY = new RegExp(String.raw`^${FAMILY}(?:\s*,\s*${FAMILY})*$`)
const LENGTH = new RegExp(String.raw`^(?:0|(?:\d+\.?\d*|\.\d+)(?:px|r?em|%))$`)

// Checked before the grammar, for a message that names the first offending token (longest first on a tie).
const BREAK_OUT = ['url(', 'expression(', 'image-set(', 'var(', 'attr(', 'env(', '/*', '*/', ';', '{', '}', '<', '>', '\\', '@', '!', ':']

const VARIABLES: Readonly<Record<keyof AppearanceVariables, readonly [string, RegExp, string]>> = {
  colorPrimary: ['--canopy-color-primary', COLOUR, 'a CSS colour such as #0b6e4f or rgb(11 110 79)'],
  colorBackground: ['--canopy-color-background', COLOUR, 'a CSS colour such as #ffffff'],
  colorText: ['--canopy-color-text', COLOUR, 'a CSS colour such as #1a1a1a'],
  fontFamily: ['--canopy-font-family', FONT_FAMILY, 'a font-family list such as "Inter", system-ui, sans-serif'],
  borderRadius: ['--canopy-border-radius', LENGTH, 'a length such as 8px or 0.5rem'],
}

const DARK = '--canopy-color-primary:#7fd4a8;--canopy-color-on-primary:#000;--canopy-color-background:#1c1c1c;--canopy-color-text:#f2f2f2'

function fail(message: string): never {
  throw new Error(`Canopy: appearance${message}`)
}

/** Validates `appearance` (throws a clear Error) and returns the CSS text of its `:host` rule ('' when none). */
export function appearanceCss(appearance: unknown): string {
  if (appearance === undefined) return ''
  if (!isPlainObject(appearance)) return fail(' must be an object: { theme?, variables? }')
  for (const key of Object.keys(appearance)) {
    if (key !== 'theme' && key !== 'variables') fail(`.${key} is not an appearance option (theme, variables)`)
  }
  const { theme, variables = {} } = appearance as Appearance
  if (theme !== undefined && theme !== 'light' && theme !== 'dark') fail('.theme must be "light" or "dark"')
  if (!isPlainObject(variables)) fail('.variables must be an object')
  const declarations: string[] = theme === 'dark' ? [DARK] : []
  for (const [name, value] of Object.entries(variables)) {
    const spec = VARIABLES[name as keyof AppearanceVariables]
    if (!spec) fail(`.variables.${name} is not a theming variable (${Object.keys(VARIABLES).join(', ')})`)
    const [property, grammar, expected] = spec
    const where = `.variables.${name}`
    if (typeof value !== 'string') fail(`${where} must be a string: ${expected}`)
    const text = value.trim()
    const lower = text.toLowerCase()
    const at = (t: string) => lower.indexOf(t)
    const token = BREAK_OUT.filter((t) => at(t) >= 0).sort((a, b) => at(a) - at(b))[0]
    if (token) fail(`${where} contains "${token}", which could break out of CSS: refused`)
    if (/[^\x20-\x7e]/.test(text) || text.length > 200 || !grammar.test(text)) fail(`${where} must be ${expected}`)
    declarations.push(`${property}:${text}`)
    if (name === 'colorPrimary') {
      const onPrimary = readableOn(text)
      if (onPrimary) declarations.push(`--canopy-color-on-primary:${onPrimary}`)
    }
  }
  warnLowContrast(variables as AppearanceVariables, theme)
  return declarations.length ? `:host{${declarations.join(';')}}` : ''
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** sRGB channels (0–255) of #rgb, #rrggbb or rgb(r g b) / rgb(r, g, b); undefined for anything else. */
function channels(colour: string): number[] | undefined {
  const hex = /^#([\da-f]{3}|[\da-f]{6})$/i.exec(colour)?.[1]
  if (hex) {
    const full = hex.length === 3 ? [...hex].map((c) => c + c).join('') : hex
    return [0, 2, 4].map((i) => parseInt(full.slice(i, i + 2), 16))
  }
  const rgb = /^rgba?\(\s*(\d+)[\s,]+(\d+)[\s,]+(\d+)\s*(?:[,/][\s\d.%]*)?\)$/i.exec(colour)
  return rgb ? rgb.slice(1, 4).map(Number) : undefined
}

const luminance = (rgb: number[]) => {
  const [r = 0, g = 0, b = 0] = rgb.map((c) => {
    const s = c / 255
    return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4
  })
  return 0.2126 * r + 0.7152 * g + 0.0722 * b
}

/** WCAG contrast ratio of two colours, or undefined when either is not a plain hex or rgb() colour. */
export function contrastRatio(a: string, b: string): number | undefined {
  const ca = channels(a)
  const cb = channels(b)
  if (!ca || !cb) return undefined
  const [hi, lo] = [luminance(ca), luminance(cb)].sort((x, y) => y - x) as [number, number]
  return (hi + 0.05) / (lo + 0.05)
}

/** Black or white, whichever reads better on `colour` (undefined when the colour is not parsed). */
function readableOn(colour: string): string | undefined {
  const white = contrastRatio(colour, '#fff')
  const black = contrastRatio(colour, '#000')
  return white === undefined || black === undefined ? undefined : white >= black ? '#fff' : '#000'
}

function warnLowContrast(variables: AppearanceVariables, theme: Appearance['theme']): void {
  if (!variables.colorText && !variables.colorBackground) return
  const text = variables.colorText ?? (theme === 'dark' ? '#f2f2f2' : '#1a1a1a')
  const background = variables.colorBackground ?? (theme === 'dark' ? '#1c1c1c' : '#ffffff')
  const ratio = contrastRatio(text.trim(), background.trim())
  if (ratio !== undefined && ratio < 4.5) {
    console.warn(`Canopy: appearance colorText on colorBackground has a contrast of ${ratio.toFixed(2)}:1, below the 4.5:1 WCAG AA minimum`)
  }
}
