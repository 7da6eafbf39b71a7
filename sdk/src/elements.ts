// canopy.elements({ sessionId, clientSecret }): the elements of one session.
import { CanopyElement, type ElementContext, type ElementType } from './element.js'
import { LoadFailure } from './errors.js'
import type { ElementOptions } from './options.js'

export interface ElementsOptions {
  /** The sessionId your backend received from POST /v3/post-purchase/sessions or /v3/checkout/sessions. */
  sessionId: string
  /** The session's client secret, or a promise of it (fetched from your backend). Never an API key. */
  clientSecret: string | Promise<string>
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const CLIENT_SECRET = /^cs_(?:live|test)_[0-9A-Za-z]+_secret_[0-9A-Za-z]+$/
const TYPES: readonly string[] = ['embedded', 'takeover', 'checkout'] satisfies ElementType[]

/** Why a string is not a client secret, or undefined when it is one. */
function secretProblem(value: unknown): string | undefined {
  if (typeof value !== 'string' || value === '') return "clientSecret is required: the session's client secret from your backend"
  if (/^ck_(?:live|test)_/.test(value)) {
    return "clientSecret looks like an API key (ck_…). Never send an API key to a browser: revoke it, and pass the session's client secret (cs_…)"
  }
  if (!CLIENT_SECRET.test(value)) return 'clientSecret is not a client secret (cs_live_…_secret_… or cs_test_…_secret_…)'
  return undefined
}

export interface ElementsContext {
  apiBase: string
  locale: string | undefined
  sheets(): CSSStyleSheet[]
}

export class Elements {
  readonly sessionId: string
  #canopy: ElementsContext
  #secret: () => Promise<string>

  /** Use canopy.elements(). */
  constructor(canopy: ElementsContext, options: ElementsOptions) {
    if (typeof options !== 'object' || options === null) throw new Error('Canopy: elements() needs { sessionId, clientSecret }')
    for (const key of Object.keys(options)) {
      if (key !== 'sessionId' && key !== 'clientSecret')
        throw new Error(`Canopy: elements(): ${key} is not an option (sessionId, clientSecret)`)
    }
    const { sessionId, clientSecret } = options
    if (typeof sessionId !== 'string' || !sessionId)
      throw new Error('Canopy: elements() needs a sessionId: the session id from your backend')
    if (!UUID.test(sessionId)) throw new Error(`Canopy: elements(): sessionId ${JSON.stringify(sessionId)} is not a session id (a UUID)`)
    this.sessionId = sessionId
    this.#canopy = canopy
    if (typeof (clientSecret as Promise<string> | undefined)?.then === 'function') {
      let pending: Promise<string> | undefined
      // Resolved once, when the first element loads; a bad value becomes that element's loaderror.
      this.#secret = () =>
        (pending ??= Promise.resolve(clientSecret).then(
          (value) => {
            const problem = secretProblem(value)
            if (problem) throw new LoadFailure('invalid_request_error', 'invalid_client_secret', `Canopy: ${problem}`, null)
            return value
          },
          (error: unknown) => {
            throw new LoadFailure(
              'invalid_request_error',
              'client_secret_unavailable',
              `Canopy: the clientSecret promise was rejected: ${error instanceof Error ? error.message : String(error)}`,
              null,
            )
          },
        ))
    } else {
      const problem = secretProblem(clientSecret)
      if (problem) throw new Error(`Canopy: elements(): ${problem}`)
      this.#secret = () => Promise.resolve(clientSecret as string)
    }
  }

  /** embedded (a section of the confirmation page), takeover (a modal dialog) or checkout (choices in the checkout). */
  create(type: ElementType, options?: ElementOptions): CanopyElement {
    if (!TYPES.includes(type)) throw new Error(`Canopy: create(): unknown element type ${JSON.stringify(type)} (${TYPES.join(', ')})`)
    const context: ElementContext = {
      apiBase: this.#canopy.apiBase,
      locale: this.#canopy.locale,
      sessionId: this.sessionId,
      clientSecret: this.#secret,
      sheets: () => this.#canopy.sheets(),
    }
    return new CanopyElement(type, context, options)
  }

  /** ekko's name for create('embedded'); `{ container }` mounts at once. */
  createImpactPayEmbedded(options?: ElementOptions): CanopyElement {
    return this.create('embedded', options)
  }

  /** ekko's name for create('takeover'); `{ container }` mounts (and opens) at once. */
  createImpactPayPageTakeover(options?: ElementOptions): CanopyElement {
    return this.create('takeover', options)
  }

  /** ekko's name for create('checkout'); `{ container }` mounts at once. */
  initCheckout(options?: ElementOptions): CanopyElement {
    return this.create('checkout', options)
  }
}
