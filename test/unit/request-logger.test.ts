// Each request's logger is made when the request first logs at an enabled level (src/logger.ts): the same lines, with
// the request's id, as the child Fastify would have made at once.
import { Writable } from 'node:stream'
import pino from 'pino'
import { describe, expect, it } from 'vitest'
import { requestLoggerFactory } from '../../src/logger.js'

function parentAt(level: string) {
  const lines: Record<string, unknown>[] = []
  const stream = new Writable({
    write(chunk, _encoding, callback) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>)
      callback()
    },
  })
  const parent = pino({ level }, stream)
  // Counts the children made of it; pino's children inherit from it, so this counts theirs too (with their `this`).
  let children = 0
  const child = parent.child
  parent.child = function (this: typeof parent, ...args: Parameters<typeof child>) {
    children++
    return child.apply(this, args)
  } as typeof parent.child
  return { parent, lines, children: () => children }
}

const flush = () => new Promise((resolve) => setImmediate(resolve))

describe('requestLoggerFactory', () => {
  it('makes no child for a request that logs nothing at an enabled level', async () => {
    const { parent, lines, children } = parentAt('warn')
    const log = requestLoggerFactory(parent, { reqId: 'r1' }, {})
    log.info({ res: 1 }, 'request completed')
    log.debug('details')
    log.trace('more')
    expect(log.level).toBe('warn')
    await flush()
    expect(children()).toBe(0)
    expect(lines).toEqual([])
  })

  it("writes an enabled line as the request's child would, once made, with its id", async () => {
    const { parent, lines, children } = parentAt('info')
    const log = requestLoggerFactory(parent, { reqId: 'r2' }, {})
    log.info({ answered: 201 }, 'request completed')
    log.error({ err: new Error('boom') }, 'unhandled error')
    log.debug('not at info')
    await flush()
    expect(children()).toBe(1)
    expect(lines.map(({ level, reqId, msg, answered }) => ({ level, reqId, msg, answered }))).toEqual([
      { level: 30, reqId: 'r2', msg: 'request completed', answered: 201 },
      { level: 50, reqId: 'r2', msg: 'unhandled error', answered: undefined },
    ])
  })

  it("follows a change of its own level, and gives children of the request's child", async () => {
    const { parent, lines } = parentAt('warn')
    const log = requestLoggerFactory(parent, { reqId: 'r3' }, {})
    log.level = 'debug'
    log.debug('now on')
    log.child({ step: 'pricing' }).debug('nested')
    await flush()
    expect(lines.map(({ reqId, step, msg }) => ({ reqId, step, msg }))).toEqual([
      { reqId: 'r3', step: undefined, msg: 'now on' },
      { reqId: 'r3', step: 'pricing', msg: 'nested' },
    ])
    expect(parent.level).toBe('warn')
  })

  it("makes the child at once for a route's own level", () => {
    const { parent, children } = parentAt('warn')
    const log = requestLoggerFactory(parent, { reqId: 'r4' }, { level: 'debug' })
    expect(children()).toBe(1)
    expect(log.level).toBe('debug')
  })
})
