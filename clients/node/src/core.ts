// The request engine every resource uses: one logical call = one or more attempts (same URL, body and
// Idempotency-Key), each with its own timeout, retried by the call's policy (retry.ts) with backoff and jitter.
import { Readable } from 'node:stream'
import type { ReadableStream as NodeReadableStream } from 'node:stream/web'
import type { CanopyApiError } from './errors.js'
import { apiErrorFrom, CanopyConnectionError, CanopyError, CanopyTimeoutError } from './errors.js'
import { REQUEST_NUMBER_FIELDS } from './generated/contract.js'
import type { paths } from './generated/openapi.js'
import { serializeBody, serializeQuery } from './json.js'
import {
  backoffDelayMs,
  DEFAULT_BACKOFF,
  isRetryable,
  neverSent,
  parseRetryAfter,
  type AttemptFailure,
  type BackoffSettings,
  type RetryPolicy,
} from './retry.js'
import type { HttpMethod, PathParams, RequestBody, ResponseBody } from './types.js'
import { VERSION } from './version.js'

/** The subset of `fetch` the client uses: pass your own for tests, proxies or runtimes without a global fetch. */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>

export interface CanopyOptions {
  /** An API key: ck_live_… or ck_test_…. */
  apiKey: string
  /** Where your Canopy API is served, e.g. "https://canopy.example.com" or "http://127.0.0.1:3000". */
  baseUrl: string
  /** Retries after a retryable failure (see the README, "Retries"); 0 turns them off. Default 2. */
  maxRetries?: number
  /** Milliseconds each attempt may take until its answer has arrived (a CSV export: until it starts). Default 30000. */
  timeout?: number
  /** Backoff between retries: from initialDelayMs (500) doubling up to maxDelayMs (8000), with jitter. */
  backoff?: Partial<BackoffSettings>
  /** A Retry-After longer than this (ms) is not waited for: the error is thrown instead. Default 60000. */
  maxRetryAfterMs?: number
  /** Headers sent with every request (never Authorization or Idempotency-Key: the client sets those). */
  headers?: Record<string, string>
  fetch?: FetchLike
  /** How the client waits between retries (tests inject a clock). Must reject with `signal.reason` on abort. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>
  /** Jitter source in [0, 1) (tests fix it). Default Math.random. */
  random?: () => number
}

export interface RequestOptions {
  /** Overrides the client's timeout for this call (per attempt, ms). */
  timeout?: number
  /** Aborts the call, including a wait between retries: the promise rejects with the signal's reason. */
  signal?: AbortSignal
  /** Overrides the client's maxRetries for this call. */
  maxRetries?: number
  /** Extra headers for this call. */
  headers?: Record<string, string>
}

/** What came back with a result: `result.lastResponse` (not enumerable, so it stays out of JSON.stringify). */
export interface ResponseMeta {
  status: number
  /** The API's x-request-id. */
  requestId: string | undefined
  headers: Headers
  /** The Idempotency-Key the call carried, if any. */
  idempotencyKey: string | undefined
  /** True when the API replayed an earlier answer for this Idempotency-Key (Idempotent-Replayed: true). */
  replayed: boolean
  /** 1 + the retries it took. */
  attempts: number
}

export type WithResponse<T> = T extends object ? T & { readonly lastResponse: ResponseMeta } : T

export interface RequestEvent {
  method: string
  /** The path and query actually requested. */
  path: string
  /** 1 for the first attempt, 2 for the first retry… */
  attempt: number
  idempotencyKey: string | undefined
}

export interface ResponseEvent extends RequestEvent {
  /** Absent when no answer came (see `error`). */
  status: number | undefined
  requestId: string | undefined
  elapsedMs: number
  /** The failure of this attempt, if it failed. */
  error: CanopyError | undefined
  /** Set when the client will try again after this many milliseconds. */
  retryInMs: number | undefined
}

export interface CanopyEvents {
  request: RequestEvent
  response: ResponseEvent
}

type Listener<E extends keyof CanopyEvents> = (event: CanopyEvents[E]) => void

/** One call as a resource describes it. */
export interface CallSpec<P extends keyof paths, M extends HttpMethod> {
  /** Values for the path's {placeholders}. */
  params?: PathParams<P, M>
  query?: Record<string, unknown> | undefined
  body?: RequestBody<P, M> | undefined
  /** Default: idempotent for GET, PATCH, PUT and DELETE, unsafe for POST (retry.ts). */
  retry?: RetryPolicy
  idempotencyKey?: string
  /** The media type a streamed answer is asked for (`Accept`), when the operation answers more than one. */
  streamMediaType?: string
}

interface RawCall {
  method: Uppercase<HttpMethod>
  template: string
  params: Record<string, unknown> | undefined
  query: Record<string, unknown> | undefined
  body: unknown
  retry: RetryPolicy
  idempotencyKey: string | undefined
  accept: 'json' | 'stream'
  streamMediaType: string | undefined
}

const DEFAULTS = { maxRetries: 2, timeout: 30_000, maxRetryAfterMs: 60_000 }

const defaultSleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })

function fillPath(template: string, params: Record<string, unknown> | undefined): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params?.[name]
    if ((typeof value !== 'string' && typeof value !== 'number') || String(value) === '') {
      throw new TypeError(`${name} is required (a non-empty string) for ${template}`)
    }
    return encodeURIComponent(String(value))
  })
}

/** Marks an attempt aborted by its own timeout (as opposed to the caller's signal). */
class AttemptTimeout extends Error {}

export class CanopyCore {
  readonly #apiKey: string
  readonly #baseUrl: string
  readonly #fetch: FetchLike
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>
  readonly #random: () => number
  readonly #headers: Record<string, string>
  readonly #listeners: { [E in keyof CanopyEvents]: Set<Listener<E>> } = { request: new Set(), response: new Set() }
  readonly maxRetries: number
  readonly timeout: number
  readonly maxRetryAfterMs: number
  readonly backoff: BackoffSettings

  constructor(options: CanopyOptions) {
    if (typeof options?.apiKey !== 'string' || options.apiKey === '') throw new TypeError('apiKey is required')
    if (typeof options.baseUrl !== 'string' || !/^https?:\/\//.test(options.baseUrl)) {
      throw new TypeError('baseUrl is required: the http(s) URL of your Canopy API, e.g. "http://127.0.0.1:3000"')
    }
    const fetchImpl = options.fetch ?? (globalThis.fetch as FetchLike | undefined)
    if (!fetchImpl) throw new TypeError('no global fetch: pass options.fetch')
    this.#apiKey = options.apiKey
    this.#baseUrl = options.baseUrl.replace(/\/+$/, '')
    this.#fetch = fetchImpl
    this.#sleep = options.sleep ?? defaultSleep
    this.#random = options.random ?? Math.random
    this.#headers = options.headers ?? {}
    this.maxRetries = options.maxRetries ?? DEFAULTS.maxRetries
    this.timeout = options.timeout ?? DEFAULTS.timeout
    this.maxRetryAfterMs = options.maxRetryAfterMs ?? DEFAULTS.maxRetryAfterMs
    this.backoff = { ...DEFAULT_BACKOFF, ...options.backoff }
  }

  /** Listen to every attempt: `request` before it is sent, `response` when it ends (with or without an answer). */
  on<E extends keyof CanopyEvents>(event: E, listener: Listener<E>): this {
    this.#listeners[event].add(listener)
    return this
  }

  off<E extends keyof CanopyEvents>(event: E, listener: Listener<E>): this {
    this.#listeners[event].delete(listener)
    return this
  }

  #emit<E extends keyof CanopyEvents>(event: E, payload: CanopyEvents[E]): void {
    for (const listener of this.#listeners[event]) {
      try {
        listener(payload)
      } catch {
        // A listener's failure is its own: it never changes the call.
      }
    }
  }

  /** A typed call of one operation of the API: `core.request('get', '/quotes/{id}', { params: { id } })`. */
  request<P extends keyof paths, M extends HttpMethod>(
    method: M,
    path: P,
    spec: CallSpec<P, M> = {},
    options: RequestOptions = {},
  ): Promise<WithResponse<ResponseBody<P, M>>> {
    return this.#call(this.#raw(method, path, spec, 'json'), options) as Promise<WithResponse<ResponseBody<P, M>>>
  }

  /** The same for an operation that answers a byte stream (CSV): resolves once the answer starts, with a Node Readable. */
  async stream<P extends keyof paths, M extends HttpMethod>(
    method: M,
    path: P,
    spec: CallSpec<P, M> = {},
    options: RequestOptions = {},
  ): Promise<Readable> {
    return (await this.#call(this.#raw(method, path, spec, 'stream'), options)) as Readable
  }

  #raw<P extends keyof paths, M extends HttpMethod>(method: M, path: P, spec: CallSpec<P, M>, accept: RawCall['accept']): RawCall {
    return {
      method: method.toUpperCase() as Uppercase<HttpMethod>,
      template: path as string,
      params: spec.params as Record<string, unknown> | undefined,
      query: spec.query,
      body: spec.body,
      retry: spec.retry ?? (method === 'post' ? 'unsafe' : 'idempotent'),
      idempotencyKey: spec.idempotencyKey,
      accept,
      streamMediaType: spec.streamMediaType,
    }
  }

  async #call(call: RawCall, options: RequestOptions): Promise<unknown> {
    const path = fillPath(call.template, call.params) + serializeQuery(call.query)
    const url = this.#baseUrl + path
    const body = call.body === undefined ? undefined : serializeBody(call.body, REQUEST_NUMBER_FIELDS[`${call.method} ${call.template}`])
    const headers: Record<string, string> = {
      ...this.#headers,
      ...options.headers,
      accept: call.accept === 'json' ? 'application/json' : (call.streamMediaType ?? '*/*'),
      'user-agent': `canopy-node/${VERSION} node/${process.version}`,
      authorization: `Bearer ${this.#apiKey}`,
    }
    if (body !== undefined) headers['content-type'] = 'application/json'
    if (call.idempotencyKey !== undefined) headers['idempotency-key'] = call.idempotencyKey
    const maxRetries = options.maxRetries ?? this.maxRetries
    const timeout = options.timeout ?? this.timeout
    const signal = options.signal

    for (let attempt = 1; ; attempt++) {
      signal?.throwIfAborted()
      const event: RequestEvent = { method: call.method, path, attempt, idempotencyKey: call.idempotencyKey }
      this.#emit('request', event)
      const started = performance.now()
      let failure: AttemptFailure
      let error: CanopyError
      let status: number | undefined
      let requestId: string | undefined
      let retryAfterMs: number | undefined
      const controller = new AbortController()
      const timer = setTimeout(() => controller.abort(new AttemptTimeout()), timeout)
      try {
        const response = await this.#fetch(url, {
          method: call.method,
          headers,
          ...(body === undefined ? {} : { body }),
          signal: signal ? AbortSignal.any([signal, controller.signal]) : controller.signal,
          redirect: 'error',
        })
        status = response.status
        requestId = response.headers.get('x-request-id') ?? undefined
        if (response.ok) {
          const result = await this.#success(response, call, attempt, timer)
          this.#emit('response', {
            ...event,
            status,
            requestId,
            elapsedMs: performance.now() - started,
            error: undefined,
            retryInMs: undefined,
          })
          return result
        }
        const text = await response.text()
        let parsed: unknown
        try {
          parsed = JSON.parse(text)
        } catch {
          parsed = undefined
        }
        error = apiErrorFrom(response.status, parsed, response.headers, call.idempotencyKey)
        requestId = (error as CanopyApiError).requestId
        failure = { kind: 'response', status: response.status, code: error.code }
        retryAfterMs = parseRetryAfter(response.headers.get('retry-after'), Date.now())
      } catch (thrown) {
        if (signal?.aborted) throw signal.reason
        if (thrown instanceof CanopyError) {
          clearTimeout(timer)
          thrown.attempts = attempt
          throw thrown
        }
        const timedOut = controller.signal.aborted && controller.signal.reason instanceof AttemptTimeout
        error = timedOut
          ? new CanopyTimeoutError(timeout, call.idempotencyKey)
          : new CanopyConnectionError(`could not reach the Canopy API at ${this.#baseUrl}: ${(thrown as Error)?.message ?? thrown}`, {
              cause: thrown,
              idempotencyKey: call.idempotencyKey,
            })
        failure = { kind: 'network', sent: !neverSent(thrown) }
      } finally {
        clearTimeout(timer)
      }
      const retry =
        attempt <= maxRetries && isRetryable(call.retry, failure) && (retryAfterMs === undefined || retryAfterMs <= this.maxRetryAfterMs)
      const retryInMs = retry ? backoffDelayMs(attempt, this.backoff, this.#random(), retryAfterMs) : undefined
      this.#emit('response', { ...event, status, requestId, elapsedMs: performance.now() - started, error, retryInMs })
      if (retryInMs === undefined) {
        error.attempts = attempt
        throw error
      }
      await this.#sleep(retryInMs, signal)
    }
  }

  async #success(response: Response, call: RawCall, attempts: number, timer: ReturnType<typeof setTimeout>): Promise<unknown> {
    if (call.accept === 'stream') {
      // The attempt's timeout covers the wait for the answer to start; the stream then runs as long as it needs.
      clearTimeout(timer)
      if (!response.body) return Readable.from([])
      return Readable.fromWeb(response.body as unknown as NodeReadableStream<Uint8Array>)
    }
    const meta: ResponseMeta = {
      status: response.status,
      requestId: response.headers.get('x-request-id') ?? undefined,
      headers: response.headers,
      idempotencyKey: call.idempotencyKey,
      replayed: response.headers.get('idempotent-replayed') === 'true',
      attempts,
    }
    // A body cut short is a failed attempt like a dropped connection (text() throws, and that is retried by policy).
    const text = await response.text()
    if (response.status === 204 || text === '') return undefined
    let result: unknown
    try {
      result = JSON.parse(text)
    } catch {
      throw apiErrorFrom(response.status, undefined, response.headers, call.idempotencyKey)
    }
    if (typeof result === 'object' && result !== null) {
      Object.defineProperty(result, 'lastResponse', { value: meta, enumerable: false })
    }
    return result
  }
}
