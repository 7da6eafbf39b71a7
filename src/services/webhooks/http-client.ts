// The webhook HTTP client: undici with a connector that dials only vetted addresses (the address is checked
// again on the connected socket), 5 s to connect, 15 s in all, at most 4 KiB of the answer read, no redirects.
import type { Agent, buildConnector, request as undiciRequest } from 'undici'
import { isIP } from 'node:net'
import type { AddressPolicy, Lookup } from './address-policy.js'
import { BlockedAddressError, systemLookup } from './address-policy.js'

export const CONNECT_TIMEOUT_MS = 5_000
export const TOTAL_TIMEOUT_MS = 15_000
export const RESPONSE_READ_LIMIT = 4096

export interface WebhookResponse {
  statusCode: number
  /** At most RESPONSE_READ_LIMIT bytes of the body, as text. */
  body: string
  retryAfter: string | undefined
}

export type PostWebhook = (url: string, headers: Record<string, string>, body: string) => Promise<WebhookResponse>

export interface WebhookClientOptions {
  policy: AddressPolicy
  lookup?: Lookup
  connectTimeoutMs?: number
  totalTimeoutMs?: number
}

/** A checked client and its close(). */
export function webhookClient(options: WebhookClientOptions): { post: PostWebhook; close: () => Promise<void> } {
  const { policy } = options
  const resolveName = options.lookup ?? systemLookup
  const totalTimeoutMs = options.totalTimeoutMs ?? TOTAL_TIMEOUT_MS
  // undici is loaded with the first delivery, not at start: a process whose merchants have no endpoint never needs it.
  let client: Promise<{ agent: Agent; request: typeof undiciRequest }> | undefined
  const open = () =>
    (client ??= import('undici').then(({ Agent: UndiciAgent, buildConnector: connector, request }) => {
      const base = connector({ timeout: options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS })
      return { agent: new UndiciAgent({ connect: vetted(base), connections: 8, pipelining: 1, keepAliveTimeout: 4_000 }), request }
    }))
  const vetted =
    (base: buildConnector.connector): buildConnector.connector =>
    (connectOptions, callback) => {
      policy
        .resolve(connectOptions.hostname, resolveName)
        .then((addresses) => {
          const [address] = addresses as [string]
          // Dial the vetted address; `host` (untouched) still gives TLS its server name.
          base({ ...connectOptions, hostname: address }, (error, socket) => {
            if (error || !socket) return callback(error ?? new Error('no socket'), null)
            const dialled = socket.remoteAddress
            const why = dialled && isIP(dialled) ? policy.refusal(dialled) : undefined
            if (why) {
              socket.destroy()
              return callback(new BlockedAddressError(connectOptions.hostname, dialled ?? '', why), null)
            }
            callback(null, socket)
          })
        })
        .catch((error: Error) => callback(error, null))
    }

  const post: PostWebhook = async (url, headers, body) => {
    const signal = AbortSignal.timeout(totalTimeoutMs)
    const { agent, request } = await open()
    const response = await request(url, {
      method: 'POST',
      headers,
      body,
      dispatcher: agent,
      signal,
      headersTimeout: totalTimeoutMs,
      bodyTimeout: totalTimeoutMs,
    })
    const chunks: Buffer[] = []
    let read = 0
    try {
      for await (const chunk of response.body as AsyncIterable<Buffer>) {
        chunks.push(chunk)
        read += chunk.length
        if (read >= RESPONSE_READ_LIMIT) break
      }
    } finally {
      // Leaving the loop early destroys the stream (and the connection): the rest is never read.
      response.body.destroy()
    }
    const retryAfter = response.headers['retry-after']
    return {
      statusCode: response.statusCode,
      body: Buffer.concat(chunks).subarray(0, RESPONSE_READ_LIMIT).toString('utf8'),
      retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
    }
  }
  // A client that never opened (no delivery yet, or its loading failed) has nothing to close.
  return {
    post,
    close: async () =>
      client?.then(
        ({ agent }) => agent.close(),
        () => {},
      ),
  }
}
