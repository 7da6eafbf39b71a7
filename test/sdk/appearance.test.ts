// appearance.variables: good values become --canopy-* custom properties; anything that could break out of CSS is refused.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { appearanceCss, contrastRatio } from '../../sdk/src/appearance.js'

afterEach(() => vi.restoreAllMocks())

describe('accepted values', () => {
  it.each([
    ['colorPrimary', '#0b6e4f', '--canopy-color-primary:#0b6e4f'],
    ['colorPrimary', '#0B6', '--canopy-color-primary:#0B6'],
    ['colorPrimary', '#0b6e4fcc', '--canopy-color-primary:#0b6e4fcc'],
    ['colorPrimary', 'rgb(11 110 79)', '--canopy-color-primary:rgb(11 110 79)'],
    ['colorPrimary', 'rgba(11, 110, 79, 0.9)', '--canopy-color-primary:rgba(11, 110, 79, 0.9)'],
    ['colorBackground', 'hsl(150deg 80% 24% / 50%)', '--canopy-color-background:hsl(150deg 80% 24% / 50%)'],
    ['colorBackground', 'oklch(0.5 0.1 150)', '--canopy-color-background:oklch(0.5 0.1 150)'],
    ['colorText', 'rebeccapurple', '--canopy-color-text:rebeccapurple'],
    ['fontFamily', '"Inter", system-ui, sans-serif', '--canopy-font-family:"Inter", system-ui, sans-serif'],
    ['fontFamily', "'Open Sans',Arial", "--canopy-font-family:'Open Sans',Arial"],
    ['fontFamily', 'Helvetica Neue', '--canopy-font-family:Helvetica Neue'],
    ['borderRadius', '0', '--canopy-border-radius:0'],
    ['borderRadius', '8px', '--canopy-border-radius:8px'],
    ['borderRadius', '0.5rem', '--canopy-border-radius:0.5rem'],
    ['borderRadius', '50%', '--canopy-border-radius:50%'],
  ])('%s: %s', (name, value, declaration) => {
    expect(appearanceCss({ variables: { [name]: value } })).toContain(declaration)
  })

  it('writes one :host rule, with a readable on-primary colour for the primary colour', () => {
    expect(appearanceCss({ variables: { colorPrimary: '#ffeb3b', borderRadius: '4px' } })).toBe(
      ':host{--canopy-color-primary:#ffeb3b;--canopy-color-on-primary:#000;--canopy-border-radius:4px}',
    )
    expect(appearanceCss({ variables: { colorPrimary: '#0b6e4f' } })).toContain('--canopy-color-on-primary:#fff')
    expect(appearanceCss(undefined)).toBe('')
    expect(appearanceCss({})).toBe('')
  })

  it('the dark theme sets dark defaults that variables override', () => {
    const css = appearanceCss({ theme: 'dark', variables: { colorText: '#ffffff' } })
    expect(css).toMatch(/^:host\{--canopy-color-primary:#7fd4a8;.*--canopy-color-background:#1c1c1c;.*;--canopy-color-text:#ffffff\}$/)
  })
})

describe('refused values (break-out attempts and malformed values throw)', () => {
  it.each([
    ['colorPrimary', 'red;}body{background:red', 'contains ";", which could break out of CSS'],
    ['colorPrimary', 'red}', 'contains "}"'],
    ['colorPrimary', '{', 'contains "{"'],
    ['colorBackground', 'url(https://evil.example/x.png)', 'contains "url("'],
    ['colorBackground', 'URL(x)', 'contains "url("'],
    ['colorText', '</style><script>alert(1)</script>', 'contains "<"'],
    ['colorText', '\\3b', 'contains "\\"'],
    ['fontFamily', '@import "x"', 'contains "@"'],
    ['fontFamily', 'x;@import url(y)', 'contains ";"'],
    ['colorText', 'expression(alert(1))', 'contains "expression("'],
    ['colorText', 'red !important', 'contains "!"'],
    ['colorText', 'var(--x)', 'contains "var("'],
    ['colorText', 'red/**/', 'contains "/*"'],
    ['borderRadius', 'calc(1px)', 'must be a length such as 8px or 0.5rem'],
    ['borderRadius', '8', 'must be a length'],
    ['borderRadius', '-8px', 'must be a length'],
    ['colorPrimary', 'rgb(1 2 3) red', 'must be a CSS colour'],
    ['colorPrimary', '#12345', 'must be a CSS colour'],
    ['colorPrimary', 'red\nblue', 'must be a CSS colour'],
    ['colorPrimary', 'rôt', 'must be a CSS colour'],
    ['fontFamily', '"Inter', 'must be a font-family list'],
    ['fontFamily', 'Inter,', 'must be a font-family list'],
    ['colorPrimary', 42, 'must be a string'],
  ])('%s: %j', (name, value, message) => {
    expect(() => appearanceCss({ variables: { [name]: value } })).toThrow(`Canopy: appearance.variables.${name}`)
    expect(() => appearanceCss({ variables: { [name]: value } })).toThrow(message)
  })

  it.each([
    ['not an object', 'dark', 'Canopy: appearance must be an object'],
    ['an unknown key', { rules: {} }, 'Canopy: appearance.rules is not an appearance option (theme, variables)'],
    ['an unknown theme', { theme: 'night' }, 'Canopy: appearance.theme must be "light" or "dark"'],
    ['variables not an object', { variables: ['x'] }, 'Canopy: appearance.variables must be an object'],
    ['an unknown variable', { variables: { colorBorder: '#000' } }, 'appearance.variables.colorBorder is not a theming variable'],
  ])('throws for %s', (_label, appearance, message) => {
    expect(() => appearanceCss(appearance)).toThrow(message)
  })

  it('has no catastrophic backtracking on long hostile input', () => {
    const started = performance.now()
    expect(() => appearanceCss({ variables: { colorPrimary: `rgb(${'1'.repeat(150)}x` } })).toThrow()
    expect(() => appearanceCss({ variables: { fontFamily: `${'a '.repeat(99)}!` } })).toThrow()
    // Backtracking on these would take seconds to forever; a loaded CI machine may pause for a GC or two.
    expect(performance.now() - started).toBeLessThan(2_000)
  })
})

describe('contrast', () => {
  it('computes WCAG ratios for hex and rgb colours', () => {
    expect(contrastRatio('#000', '#fff')).toBeCloseTo(21, 5)
    expect(contrastRatio('rgb(255 255 255)', '#ffffff')).toBeCloseTo(1, 5)
    expect(contrastRatio('#767676', '#fff')).toBeCloseTo(4.54, 2)
    expect(contrastRatio('rebeccapurple', '#fff')).toBeUndefined()
  })

  it('warns when text on background is below 4.5:1', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined)
    appearanceCss({ variables: { colorText: '#999999' } })
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('below the 4.5:1 WCAG AA minimum'))
    warn.mockClear()
    appearanceCss({ variables: { colorText: '#222222', colorBackground: '#ffffff' } })
    expect(warn).not.toHaveBeenCalled()
  })
})
