// A TCP proxy in front of the API that loses an answer: once armed, the next request matching a pattern reaches the
// API, and when the API's answer starts coming back the client's connection is cut instead (the API did the work;
// the client never hears of it). Everything else is forwarded as is.
import { connect, createServer, type Socket } from 'node:net'

export interface DroppingProxy {
  readonly port: number
  /** Cut the answer to the next request whose bytes match `pattern`; resolves once it has been cut. */
  dropNextAnswer(pattern: RegExp): Promise<void>
  close(): Promise<void>
}

export async function startDroppingProxy(target: { host: string; port: number }): Promise<DroppingProxy> {
  let armed: { pattern: RegExp; dropped: () => void } | undefined
  const sockets = new Set<Socket>()
  const server = createServer((client) => {
    const upstream = connect(target.port, target.host)
    sockets.add(client).add(upstream)
    let dropAnswer: (() => void) | undefined
    client.on('data', (chunk: Buffer) => {
      if (armed && armed.pattern.test(chunk.toString('latin1'))) {
        dropAnswer = armed.dropped
        armed = undefined
      }
      upstream.write(chunk)
    })
    upstream.on('data', (chunk: Buffer) => {
      if (dropAnswer) {
        client.destroy()
        upstream.destroy()
        dropAnswer()
        return
      }
      client.write(chunk)
    })
    const end = () => {
      client.destroy()
      upstream.destroy()
      sockets.delete(client)
      sockets.delete(upstream)
    }
    client.on('close', end).on('error', end)
    upstream.on('close', end).on('error', end)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as { port: number }).port,
    dropNextAnswer: (pattern) => new Promise((dropped) => (armed = { pattern, dropped })),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
}
