// A TCP proxy between the API's pool and Postgres that can refuse connections, and freeze: stop
// forwarding in both directions while every socket stays open (a link that stops answering), then
// resume. Data that arrives while frozen is held; resuming delivers it, like a link that comes back.
import { createServer, connect, type Server, type Socket } from 'node:net'

interface Link {
  client: Socket
  upstream: Socket
  /** client → Postgres, held while frozen. */
  up: Buffer[]
  /** Postgres → client, held while frozen. */
  down: Buffer[]
  clientGone: boolean
  upstreamGone: boolean
}

export interface TcpProxy {
  readonly port: number
  /** postgres://… URL of `databaseUrl` with its host and port replaced by the proxy's. */
  url(databaseUrl: string): string
  /** Stop forwarding in both directions; sockets stay open, new connections are accepted and held. */
  freeze(): void
  /**
   * Freeze as soon as client → Postgres data matches `pattern` (e.g. /insert into "?allocations"?/i):
   * `'after'` forwards that chunk first (Postgres executes it, its answer is held), `'before'` holds
   * it (Postgres never sees it).
   */
  freezeOn(pattern: RegExp, when: 'before' | 'after'): Promise<void>
  /**
   * Forward again. Data held for a connection whose client has since gone away is delivered too
   * (`deliverOrphans`, the default: a link that comes back delivers what was in flight), or dropped
   * with the connection (what was in flight never arrived).
   */
  resume(options?: { deliverOrphans?: boolean }): void
  /** Stop accepting connections (ECONNREFUSED) and cut every open one. */
  refuse(): Promise<void>
  /** Accept connections again, on the same port. */
  accept(): Promise<void>
  /**
   * Send new connections to another server (a virtual IP moved by a failover tool) and cut the open ones: a moved
   * address does not carry TCP connections with it.
   */
  retarget(target: { host: string; port: number }): void
  /** Open client connections. */
  connections(): number
  /** Connections whose client went away while data for Postgres was held. */
  orphans(): number
  close(): Promise<void>
}

export async function startTcpProxy(
  initialTarget: { host: string; port: number },
  options: { accepting?: boolean } = {},
): Promise<TcpProxy> {
  let target = initialTarget
  const links = new Set<Link>()
  let frozen = false
  let trigger: { pattern: RegExp; when: 'before' | 'after'; fired: () => void } | undefined
  let server: Server = createServer()

  const sendUp = (link: Link, chunk: Buffer) => {
    if (frozen) link.up.push(chunk)
    else if (!link.upstreamGone) link.upstream.write(chunk)
  }
  const sendDown = (link: Link, chunk: Buffer) => {
    if (frozen) link.down.push(chunk)
    else if (!link.clientGone) link.client.write(chunk)
  }
  const drop = (link: Link) => {
    link.client.destroy()
    link.upstream.destroy()
    links.delete(link)
  }
  // A side that closes is passed on to the other side only while the link forwards.
  const settle = (link: Link) => {
    if (frozen) return
    if (link.clientGone || link.upstreamGone) drop(link)
  }

  const onConnection = (client: Socket) => {
    const upstream = connect(target.port, target.host)
    const link: Link = { client, upstream, up: [], down: [], clientGone: false, upstreamGone: false }
    links.add(link)
    client.on('data', (chunk: Buffer) => {
      const pattern = trigger?.pattern
      if (!frozen && pattern !== undefined && pattern.test(chunk.toString('latin1'))) {
        const { when, fired } = trigger!
        trigger = undefined
        if (when === 'after') sendUp(link, chunk)
        frozen = true
        if (when === 'before') sendUp(link, chunk)
        fired()
        return
      }
      sendUp(link, chunk)
    })
    upstream.on('data', (chunk: Buffer) => sendDown(link, chunk))
    client.on('error', () => {})
    upstream.on('error', () => {})
    client.on('close', () => {
      link.clientGone = true
      settle(link)
    })
    upstream.on('close', () => {
      link.upstreamGone = true
      settle(link)
    })
  }

  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server = createServer(onConnection)
      server.once('error', reject)
      server.listen(port, '127.0.0.1', () => resolve((server.address() as { port: number }).port))
    })
  const stopListening = () => new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()))

  const port = await listen(0)
  if (options.accepting === false) await stopListening()

  return {
    port,
    url(databaseUrl) {
      const url = new URL(databaseUrl)
      url.hostname = '127.0.0.1'
      url.port = String(port)
      return url.toString()
    },
    freeze() {
      frozen = true
    },
    freezeOn(pattern, when) {
      return new Promise((fired) => {
        trigger = { pattern, when, fired }
      })
    },
    resume({ deliverOrphans = true } = {}) {
      frozen = false
      trigger = undefined
      for (const link of [...links]) {
        if (link.clientGone && !deliverOrphans) {
          drop(link)
          continue
        }
        for (const chunk of link.up.splice(0)) if (!link.upstreamGone) link.upstream.write(chunk)
        for (const chunk of link.down.splice(0)) if (!link.clientGone) link.client.write(chunk)
        if (link.clientGone) link.upstream.end()
        else if (link.upstreamGone) link.client.end()
      }
    },
    async refuse() {
      await stopListening()
      for (const link of [...links]) drop(link)
    },
    async accept() {
      if (!server.listening) await listen(port)
    },
    retarget(next) {
      target = next
      for (const link of [...links]) drop(link)
    },
    connections: () => [...links].filter((link) => !link.clientGone).length,
    orphans: () => [...links].filter((link) => link.clientGone && link.up.length > 0).length,
    async close() {
      await stopListening()
      for (const link of [...links]) drop(link)
    },
  }
}
