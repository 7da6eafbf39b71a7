// A real HTTP receiver on loopback for webhook tests: records every request (raw body, headers) and every
// connection, and answers as the test says.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface ReceivedWebhook {
  /** The request's path, e.g. /hooks/a. */
  path: string
  headers: IncomingHttpHeaders
  body: string
  receivedAt: number
}

export interface Answer {
  status: number
  headers?: Record<string, string>
  body?: string
}

export interface WebhookReceiver {
  url: string
  received: ReceivedWebhook[]
  connections: number
  answer: (request: ReceivedWebhook, index: number) => Answer
  /** Resolves when `count` requests have arrived (or rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<void>
  close(): Promise<void>
}

export async function startReceiver(
  answer: WebhookReceiver['answer'] = () => ({ status: 200 }),
  path = '/hooks',
): Promise<WebhookReceiver> {
  const receiver: WebhookReceiver = {
    url: '',
    received: [],
    connections: 0,
    answer,
    async waitFor(count, timeoutMs = 10_000) {
      const until = Date.now() + timeoutMs
      while (receiver.received.length < count) {
        if (Date.now() > until) throw new Error(`received ${receiver.received.length} of ${count} webhooks`)
        await new Promise((r) => setTimeout(r, 20))
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const request = { path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), receivedAt: Date.now() }
      const index = receiver.received.push(request) - 1
      const { status, headers = {}, body = '' } = receiver.answer(request, index)
      res.writeHead(status, headers).end(body)
    })
  })
  server.on('connection', () => receiver.connections++)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`
  return receiver
}
