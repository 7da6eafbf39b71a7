// One widget: mount / update / unmount / destroy, its events, the session load and the takeover dialog.
import { fetchSession } from './api.js'
import { defineCanopyElement, deepActiveElement, resolveContainer, TAG } from './dom.js'
import { LoadFailure, type LoadErrorDetail } from './errors.js'
import { formatMoney } from './format.js'
import { format, resolveLocale, stringsFor } from './i18n.js'
import { fromMinor, minorUnitsOf, wireToMinor } from './money.js'
import { contributionChoices, validateOptions, type ElementOptions } from './options.js'
import type { SdkSession } from './session.js'
import { buildSkeleton, buildView, type ElementType, type Selection, type View, type ViewModel } from './view.js'

export type { ElementType }

/** What a selection adds up to: a decimal string and the same amount in integer minor units. */
export interface ChosenAmount {
  selected: boolean
  /** "0.28" — the currency's own number of decimals. */
  amount: string
  /** 28 — integer minor units (pence, cents, yen, fils). */
  amountMinor: number
}

/** `change` and `confirm`: what the consumer has chosen, for the page to add to its total. */
export interface ChangeEvent extends ChosenAmount {
  elementType: ElementType
  currencyCode: string
  quoteId: string
  sessionId: string
  /** The offset (credits.amounts.total when selected); null when not offered (nature session, or credits: false). */
  credits: ChosenAmount | null
  /** The contribution; null when no contribution choice is offered. */
  contribution: (ChosenAmount & { option: 'fixed' | 'roundUp' | null }) | null
}

export interface ReadyEvent {
  elementType: ElementType
  sessionId: string
  quoteId: string
  impactType: 'carbon' | 'nature'
  currencyCode: string
  /** The locale the API wrote the session in (after its fallback). */
  locale: string
  expiresAt: string
}

export interface CloseEvent {
  elementType: ElementType
  /** escape: the Escape key; dismiss: the close or "No thanks" button; confirm: closed after `confirm`. */
  reason: 'escape' | 'dismiss' | 'confirm'
}

export interface LoadErrorEvent {
  elementType: ElementType
  error: LoadErrorDetail
}

export interface CanopyEventMap {
  ready: ReadyEvent
  change: ChangeEvent
  confirm: ChangeEvent
  close: CloseEvent
  loaderror: LoadErrorEvent
}

export type CanopyEventName = keyof CanopyEventMap
export type CanopyEventHandler<K extends CanopyEventName> = (event: CanopyEventMap[K]) => void

const EVENTS: readonly string[] = ['ready', 'change', 'confirm', 'close', 'loaderror'] satisfies CanopyEventName[]

/** What an element needs from its Canopy instance and elements group. */
export interface ElementContext {
  apiBase: string
  locale: string | undefined
  sessionId: string
  clientSecret(): Promise<string>
  sheets(): CSSStyleSheet[]
}

type State = 'idle' | 'loading' | 'ready' | 'failed' | 'destroyed'

export class CanopyElement {
  readonly elementType: ElementType
  #ctx: ElementContext
  #options: ElementOptions
  #handlers = new Map<string, Set<(event: never) => void>>()
  #state: State = 'idle'
  #host: HTMLElement | null = null
  #shadow: ShadowRoot | null = null
  #abort: AbortController | null = null
  #session: SdkSession | null = null
  #creditsMinor: number | null = null
  #model: ViewModel | null = null
  #view: View | null = null
  #selection: Selection = { credits: false, choice: -1 }
  #opener: Element | null = null

  /** Use elements.create(). */
  constructor(type: ElementType, ctx: ElementContext, options?: ElementOptions) {
    this.elementType = type
    this.#ctx = ctx
    const { container, ...rest } = validateOptions(options, 'create')
    this.#options = rest
    if (container !== undefined) this.mount(container)
  }

  on<K extends CanopyEventName>(event: K, handler: CanopyEventHandler<K>): this {
    this.#alive('on')
    if (!EVENTS.includes(event)) throw new Error(`Canopy: unknown event ${JSON.stringify(event)} (${EVENTS.join(', ')})`)
    if (typeof handler !== 'function') throw new Error(`Canopy: on(${JSON.stringify(event)}) needs a handler function`)
    const set = this.#handlers.get(event) ?? new Set()
    set.add(handler as (event: never) => void)
    this.#handlers.set(event, set)
    return this
  }

  /** Removes one handler, or every handler of the event when none is given. */
  off<K extends CanopyEventName>(event: K, handler?: CanopyEventHandler<K>): this {
    if (handler) this.#handlers.get(event)?.delete(handler as (event: never) => void)
    else this.#handlers.delete(event)
    return this
  }

  /** Mounts into a container (a CSS selector or an element). Loads the session on the first mount. */
  mount(target: string | Element): this {
    this.#alive('mount')
    const container = resolveContainer(target, 'mount()')
    if (this.#host?.isConnected) throw new Error('Canopy: this element is already mounted; unmount() it first')
    defineCanopyElement()
    if (!this.#host) {
      const host = document.createElement(TAG)
      host.setAttribute('variant', this.elementType)
      this.#shadow = host.attachShadow({ mode: 'open' })
      const sheets = this.#ctx.sheets()
      if (sheets.length && 'adoptedStyleSheets' in this.#shadow) this.#shadow.adoptedStyleSheets = sheets
      this.#host = host
    }
    container.append(this.#host)
    if (this.#state === 'idle') void this.#load()
    else if (this.#state === 'ready') this.#open()
    return this
  }

  /** Changes the contribution choices (for example a new order total); see docs/sdk.md. */
  update(options: Omit<ElementOptions, 'container'>): this {
    this.#alive('update')
    const next: ElementOptions = { ...this.#options, ...validateOptions(options, 'update') }
    if (next.roundUp === null) delete next.roundUp
    if (this.#state !== 'ready') {
      this.#options = next
      return this
    }
    const before = this.#payload()
    const model = this.#modelFor(next)
    const chosen = this.#model?.choices[this.#selection.choice]
    this.#options = next
    this.#selection = {
      credits: this.#selection.credits && model.credits !== null,
      // The consumer agreed to one amount: keep the choice only while that very amount is offered.
      choice: chosen ? model.choices.findIndex((c) => c.kind === chosen.kind && c.minor === chosen.minor) : -1,
    }
    this.#render(model)
    const after = this.#payload()
    const key = (p: ChangeEvent) => `${p.credits?.amountMinor ?? 0}/${p.contribution?.amountMinor ?? 0}/${p.contribution?.option}`
    if (key(before) !== key(after)) this.#emit('change', after)
    return this
  }

  /** Takes the element out of the page; mount() puts it back with its state. */
  unmount(): this {
    if (this.#state === 'destroyed') return this
    if (this.#view?.dialog?.open) {
      this.#view.dialog.close()
      this.#restoreFocus()
    }
    this.#host?.remove()
    return this
  }

  /** Aborts the request in flight, removes the element and every handler, restores focus. Final. */
  destroy(): void {
    if (this.#state === 'destroyed') return
    this.#state = 'destroyed'
    this.#abort?.abort()
    if (this.#view?.dialog?.open) this.#view.dialog.close()
    this.#restoreFocus()
    this.#host?.remove()
    this.#handlers.clear()
    this.#abort = this.#host = this.#shadow = this.#view = this.#model = this.#session = null
  }

  #alive(method: string): void {
    if (this.#state === 'destroyed') throw new Error(`Canopy: ${method}() on an element that was destroyed`)
  }

  async #load(): Promise<void> {
    this.#state = 'loading'
    if (this.elementType !== 'takeover') this.#shadow?.replaceChildren(buildSkeleton(this.elementType, stringsFor(this.#ctx.locale)))
    const abort = (this.#abort = new AbortController())
    try {
      const clientSecret = await this.#ctx.clientSecret()
      if (abort.signal.aborted) return
      const session = await fetchSession({
        apiBase: this.#ctx.apiBase,
        kind: this.elementType === 'checkout' ? 'checkout' : 'post-purchase',
        sessionId: this.#ctx.sessionId,
        clientSecret,
        locale: this.#ctx.locale === undefined ? undefined : resolveLocale(this.#ctx.locale),
        signal: abort.signal,
      })
      if (abort.signal.aborted) return
      try {
        this.#creditsMinor =
          session.impactType === 'carbon' ? wireToMinor(session.credits.amounts.total, minorUnitsOf(session.currencyCode)) : null
      } catch (error) {
        throw new LoadFailure(
          'api_error',
          'invalid_response',
          `The session's credits total does not fit its currency: ${(error as Error).message}`,
          200,
        )
      }
      this.#session = session
      let model: ViewModel
      try {
        model = this.#modelFor(this.#options)
      } catch (error) {
        throw new LoadFailure('invalid_request_error', 'invalid_options', (error as Error).message, null)
      }
      this.#state = 'ready'
      this.#render(model)
      this.#open()
      this.#emit('ready', {
        elementType: this.elementType,
        sessionId: session.sessionId,
        quoteId: session.quoteId,
        impactType: session.impactType,
        currencyCode: session.currencyCode,
        locale: session.locale,
        expiresAt: session.expiresAt,
      })
    } catch (error) {
      if (abort.signal.aborted) return
      this.#state = 'failed'
      // Collapse: nothing left on the page but an empty, hidden element.
      this.#shadow?.replaceChildren()
      if (this.#host) this.#host.hidden = true
      const detail: LoadErrorDetail =
        error instanceof LoadFailure
          ? error.detail
          : { type: 'api_error', code: 'internal_error', message: `Canopy failed to render the session: ${String(error)}`, status: null }
      this.#emit('loaderror', { elementType: this.elementType, error: detail })
    } finally {
      if (this.#abort === abort) this.#abort = null
    }
  }

  #modelFor(options: ElementOptions): ViewModel {
    const session = this.#session as SdkSession
    const stringsLocale = resolveLocale(this.#ctx.locale ?? session.locale)
    return {
      type: this.elementType,
      session,
      strings: stringsFor(stringsLocale),
      stringsLocale,
      locale: session.locale,
      apiBase: this.#ctx.apiBase,
      credits: options.credits === false ? null : this.#creditsMinor,
      choices: contributionChoices(options, session.currencyCode),
    }
  }

  #render(model: ViewModel): void {
    const shadow = this.#shadow
    if (!shadow) return
    const wasOpen = Boolean(this.#view?.dialog?.open)
    const focused = focusKey(shadow)
    this.#model = model
    const view = buildView(model, {
      toggleCredits: () => this.#choose({ ...this.#selection, credits: !this.#selection.credits }),
      pick: (i) => this.#choose({ ...this.#selection, choice: this.#selection.choice === i ? -1 : i }),
      confirm: () => this.#confirm(),
      dismiss: () => this.#close('dismiss'),
    })
    if (view.dialog) trapFocus(view.dialog, shadow, view.title, () => this.#close('escape'))
    this.#view = view
    shadow.replaceChildren(view.node)
    if (this.#host) this.#host.hidden = false
    view.sync(this.#selection, this.#message())
    if (wasOpen && view.dialog) showModal(view.dialog)
    if (focused) refocus(shadow, focused)
  }

  #choose(selection: Selection): void {
    if (this.#state !== 'ready') return
    this.#selection = selection
    this.#view?.sync(selection, this.#message())
    this.#emit('change', this.#payload())
  }

  #confirm(): void {
    if (this.#state !== 'ready') return
    const payload = this.#payload()
    if (!payload.selected) {
      this.#view?.sync(this.#selection, this.#model?.strings.chooseFirst ?? '')
      return
    }
    this.#emit('confirm', payload)
    this.#close('confirm')
  }

  #message(): string {
    const model = this.#model
    if (!model) return ''
    const payload = this.#payload()
    if (!payload.selected) return model.strings.none
    const amount = formatMoney(payload.amountMinor, model.session.currencyCode, model.locale)
    return format(this.elementType === 'checkout' ? model.strings.addedCheckout : model.strings.added, { amount })
  }

  #payload(): ChangeEvent {
    const model = this.#model as ViewModel
    const { session } = model
    const digits = minorUnitsOf(session.currencyCode)
    const amount = (selected: boolean, minor: number): ChosenAmount => ({ selected, amount: fromMinor(minor, digits), amountMinor: minor })
    const credits = model.credits === null ? null : amount(this.#selection.credits, this.#selection.credits ? model.credits : 0)
    const choice = model.choices[this.#selection.choice]
    const contribution = model.choices.length ? { ...amount(Boolean(choice), choice?.minor ?? 0), option: choice?.kind ?? null } : null
    const total = (credits?.amountMinor ?? 0) + (contribution?.amountMinor ?? 0)
    return {
      elementType: this.elementType,
      ...amount(Boolean(credits?.selected || contribution?.selected), total),
      currencyCode: session.currencyCode,
      quoteId: session.quoteId,
      sessionId: session.sessionId,
      credits,
      contribution,
    }
  }

  /** Takeover: opens the modal dialog once mounted and loaded; focus moves to its title. */
  #open(): void {
    const dialog = this.#view?.dialog
    if (!dialog || dialog.open || !this.#host?.isConnected) return
    this.#opener = deepActiveElement()
    showModal(dialog)
    this.#view?.title.focus()
  }

  #close(reason: CloseEvent['reason']): void {
    const dialog = this.#view?.dialog
    if (!dialog?.open) return
    dialog.close()
    this.#restoreFocus()
    this.#emit('close', { elementType: this.elementType, reason })
  }

  #restoreFocus(): void {
    const opener = this.#opener
    this.#opener = null
    if (opener?.isConnected && typeof (opener as HTMLElement).focus === 'function') (opener as HTMLElement).focus()
  }

  #emit<K extends CanopyEventName>(event: K, payload: CanopyEventMap[K]): void {
    if (this.#state === 'destroyed') return
    for (const handler of [...(this.#handlers.get(event) ?? [])]) {
      try {
        ;(handler as CanopyEventHandler<K>)(payload)
      } catch (error) {
        console.error(`Canopy: a ${event} handler threw`, error)
      }
    }
    this.#host?.dispatchEvent(new CustomEvent(`canopy-${event}`, { detail: payload, bubbles: true, composed: true }))
  }
}

function showModal(dialog: HTMLDialogElement): void {
  try {
    dialog.showModal()
  } catch {
    dialog.setAttribute('open', '')
  }
}

/** Escape closes; Tab and Shift+Tab cycle inside the dialog (showModal makes the page inert, this keeps focus in). */
function trapFocus(dialog: HTMLDialogElement, shadow: ShadowRoot, title: HTMLElement, close: () => void): void {
  dialog.addEventListener('cancel', (event) => {
    event.preventDefault()
    close()
  })
  dialog.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') {
      event.preventDefault()
      close()
      return
    }
    if (event.key !== 'Tab') return
    const focusable = [...dialog.querySelectorAll<HTMLElement>('button:not([disabled]),[href],input,select,textarea')]
    const first = focusable[0]
    const last = focusable[focusable.length - 1]
    const active = shadow.activeElement
    if (!first || !last) return
    if (event.shiftKey && (active === first || active === title || !dialog.contains(active))) {
      event.preventDefault()
      last.focus()
    } else if (!event.shiftKey && (active === last || !dialog.contains(active))) {
      event.preventDefault()
      first.focus()
    }
  })
}

/** Which control had focus before a re-render (its part and position), to give it back afterwards. */
function focusKey(shadow: ShadowRoot): [string, number] | undefined {
  const active = shadow.activeElement
  const part = active?.getAttribute('part')
  if (!active || !part) return undefined
  return [part, [...shadow.querySelectorAll(`[part="${part}"]`)].indexOf(active)]
}

function refocus(shadow: ShadowRoot, [part, index]: [string, number]): void {
  const target = shadow.querySelectorAll<HTMLElement>(`[part="${part}"]`)[index]
  target?.focus()
}
