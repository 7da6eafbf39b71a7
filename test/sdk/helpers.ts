// Shared helpers of the SDK unit tests (happy-dom): canned session bodies from a real API, a stub fetch,
// and a mounted element with its events recorded.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { vi, type Mock } from 'vitest'
import { Canopy, type CanopyOptions } from '../../sdk/src/canopy.js'
import type { CanopyElement, CanopyEventMap, CanopyEventName, ElementType } from '../../sdk/src/element.js'
import type { ElementOptions } from '../../sdk/src/options.js'

export const API = 'https://canopy.example.com'
export const SECRET = 'cs_test_AbCdEfGhIjKlMnOpQrStUvWx_secret_AbCdEfGhIjKlMnOpQrStUvWx'
export const SESSION_ID = '7a3d8f33-6e5b-48bc-96ee-7db90cdcb414'

export type FixtureName =
  'carbon-en-GB' | 'carbon-en-US' | 'carbon-de-DE' | 'nature-en-GB' | 'nature-en-US' | 'nature-de-DE' | 'checkout-kwd' | 'checkout-jpy'

/** A session read captured from the API (GET /v3/…/sessions/:id), as a fresh copy. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const fixture = (name: FixtureName): any => JSON.parse(readFileSync(join(import.meta.dirname, 'fixtures', `${name}.json`), 'utf8'))

export const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } })

export type FetchStub = Mock<(url: string, init?: RequestInit) => Promise<Response>>

/** Replaces globalThis.fetch (the SDK calls it at request time). */
export function stubFetch(respond: (url: URL, init: RequestInit | undefined) => Response | Promise<Response>): FetchStub {
  const stub: FetchStub = vi.fn(async (url: string, init?: RequestInit) => respond(new URL(url), init))
  vi.stubGlobal('fetch', stub)
  return stub
}

/** Normalises the no-break spaces Intl puts in numbers (U+00A0, U+202F) for assertions. */
export const spaces = (text: string | null | undefined) => (text ?? '').replace(/[\u00a0\u202f]/g, ' ')

/** Text of a node without its aria-hidden descendants. */
export const visibleText = (node: Node): string =>
  node instanceof Element && node.getAttribute('aria-hidden') === 'true'
    ? ''
    : node.nodeType === 3
      ? (node.textContent ?? '')
      : [...node.childNodes].map(visibleText).join('')

export type Recorded = { [K in CanopyEventName]: CanopyEventMap[K][] }

export function record(element: CanopyElement): Recorded {
  const events: Recorded = { ready: [], change: [], confirm: [], close: [], loaderror: [] }
  for (const name of Object.keys(events) as CanopyEventName[]) {
    element.on(name, (event: CanopyEventMap[typeof name]) => {
      ;(events[name] as unknown[]).push(event)
    })
  }
  return events
}

export const settled = (events: Recorded) =>
  vi.waitFor(() => {
    if (!events.ready.length && !events.loaderror.length) throw new Error('still loading')
  })

export interface Setup {
  type?: ElementType
  body?: unknown
  status?: number
  options?: ElementOptions
  canopy?: CanopyOptions
}

/** Mounts an element on a stub API answering `body` and waits until it is ready (or failed). */
export async function mountWidget(setup: Setup = {}) {
  const fetch = stubFetch(() => json(setup.body ?? fixture('carbon-en-GB'), setup.status ?? 200))
  const container = document.createElement('div')
  document.body.append(container)
  const canopy = new Canopy({ apiBase: API, ...setup.canopy })
  const element = canopy.elements({ sessionId: SESSION_ID, clientSecret: SECRET }).create(setup.type ?? 'embedded', setup.options)
  const events = record(element)
  element.mount(container)
  await settled(events)
  const host = container.querySelector('canopy-impact') as HTMLElement
  const shadow = host.shadowRoot as ShadowRoot
  const part = (name: string) => shadow.querySelector<HTMLElement>(`[part="${name}"]`)
  const parts = (name: string) => [...shadow.querySelectorAll<HTMLElement>(`[part="${name}"]`)]
  /** The contribution options as read out: their text without aria-hidden decoration (the tick). */
  const optionLabels = () => parts('option').map((button) => spaces(visibleText(button)))
  return { fetch, container, canopy, element, events, host, shadow, part, parts, optionLabels }
}
