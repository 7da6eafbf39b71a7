// DOM helpers. Nothing here runs at import time: the custom element class is created inside
// defineCanopyElement(), so that importing the SDK where there is no DOM (server-side rendering) works.

/** The custom element that hosts a widget's shadow root. */
export const TAG = 'canopy-impact'

export type Child = Node | string | null | undefined | false

/**
 * An element with attributes and children. Children are nodes or text (inserted as Text nodes, never
 * parsed as HTML). `style` and `on*` attributes are refused: styles come from constructed stylesheets
 * and listeners from addEventListener, which keeps the widget within a strict CSP.
 */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes?: Readonly<Record<string, string | undefined>> | null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag)
  for (const [name, value] of Object.entries(attributes ?? {})) {
    if (name === 'style' || name.startsWith('on')) throw new Error(`Canopy: refusing attribute ${name}`)
    if (value !== undefined) element.setAttribute(name, value)
  }
  for (const child of children) if (child) element.append(child)
  return element
}

/** Defines <canopy-impact> once. Throws where there is no DOM. */
export function defineCanopyElement(): void {
  if (typeof customElements === 'undefined' || typeof HTMLElement === 'undefined') {
    throw new Error('Canopy: elements can only be mounted in a browser (no DOM here)')
  }
  // The class only marks the element; the SDK attaches and renders its shadow root. Another copy of
  // the SDK may have defined it first, which is fine.
  if (!customElements.get(TAG)) customElements.define(TAG, class CanopyImpactElement extends HTMLElement {})
}

/** A constructed stylesheet, or undefined where constructable stylesheets are not supported (then unstyled). */
export function sheet(css: string): CSSStyleSheet | undefined {
  try {
    const result = new CSSStyleSheet()
    result.replaceSync(css)
    return result
  } catch {
    return undefined
  }
}

/** The element that has focus, looking inside open shadow roots. */
export function deepActiveElement(): Element | null {
  let active = document.activeElement
  while (active?.shadowRoot?.activeElement) active = active.shadowRoot.activeElement
  return active
}

/** Resolves mount()'s argument; throws a clear Error for a missing or unknown container. */
export function resolveContainer(target: unknown, method: string): Element {
  if (typeof document === 'undefined') throw new Error(`Canopy: ${method} needs a browser DOM`)
  if (typeof target === 'string') {
    let found: Element | null
    try {
      found = target.trim() ? document.querySelector(target) : null
    } catch {
      throw new Error(`Canopy: ${method}: ${JSON.stringify(target)} is not a valid CSS selector`)
    }
    if (!found) throw new Error(`Canopy: ${method}: no element matches ${JSON.stringify(target)}`)
    return found
  }
  if (typeof target === 'object' && target !== null && (target as Node).nodeType === 1) return target as Element
  throw new Error(`Canopy: ${method} needs a container: a CSS selector or a DOM element`)
}
