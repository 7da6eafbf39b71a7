// Batcher: items submitted in one event-loop turn go to the database in one call; when that call fails, each
// item is retried on its own so a bad item cannot fail its neighbours, and every caller gets its own outcome.
import { describe, expect, it } from 'vitest'
import { Batcher } from '../../src/services/batcher.js'

describe('Batcher', () => {
  it('writes the items of one turn in one call and answers each with its own result', async () => {
    const calls: number[][] = []
    const batcher = new Batcher<number, number>(async (rows) => {
      calls.push([...rows])
      return rows.map((n) => n * 10)
    })
    const results = await Promise.all([1, 2, 3].map((n) => batcher.submit(n)))
    expect(results).toEqual([10, 20, 30])
    expect(calls).toEqual([[1, 2, 3]])
  })

  it('splits at maxBatch', async () => {
    const calls: number[][] = []
    const batcher = new Batcher<number, void>(
      async (rows) => {
        calls.push([...rows])
        return rows.map(() => undefined)
      },
      { maxBatch: 2 },
    )
    await Promise.all([1, 2, 3, 4, 5].map((n) => batcher.submit(n)))
    expect(calls.map((c) => c.length)).toEqual([2, 2, 1])
  })

  it('retries a failed batch one item at a time: good items succeed, the bad one fails alone', async () => {
    const calls: number[][] = []
    const batcher = new Batcher<number, string>(async (rows) => {
      calls.push([...rows])
      if (rows.includes(13)) throw new Error(`row 13 is refused`)
      return rows.map((n) => `ok ${n}`)
    })
    const outcomes = await Promise.allSettled([12, 13, 14].map((n) => batcher.submit(n)))
    expect(outcomes).toEqual([
      { status: 'fulfilled', value: 'ok 12' },
      { status: 'rejected', reason: new Error('row 13 is refused') },
      { status: 'fulfilled', value: 'ok 14' },
    ])
    expect(calls).toEqual([[12, 13, 14], [12], [13], [14]])
  })

  it('rejects a lone item with its own error, without a retry', async () => {
    let calls = 0
    const batcher = new Batcher<number, void>(async () => {
      calls++
      throw new Error('database is down')
    })
    await expect(batcher.submit(1)).rejects.toThrow('database is down')
    expect(calls).toBe(1)
  })

  it('drain waits for every write in flight', async () => {
    let release: () => void = () => {}
    const gate = new Promise<void>((resolve) => (release = resolve))
    let written = 0
    const batcher = new Batcher<number, void>(async (rows) => {
      await gate
      written += rows.length
      return rows.map(() => undefined)
    })
    const pending = Promise.all([batcher.submit(1), batcher.submit(2)])
    const drained = batcher.drain().then(() => written)
    release()
    expect(await drained).toBe(2)
    await pending
  })

  it('with maxInFlight, items arriving while the statements run wait and share the next one', async () => {
    const calls: number[][] = []
    const gates: (() => void)[] = []
    const batcher = new Batcher<number, number>(
      async (rows) => {
        calls.push([...rows])
        await new Promise<void>((resolve) => gates.push(resolve))
        return rows.map((n) => -n)
      },
      { maxInFlight: 1 },
    )
    const first = batcher.submit(1)
    await new Promise((resolve) => setImmediate(resolve))
    expect(calls).toEqual([[1]])
    const waiting = [2, 3, 4].map((n) => batcher.submit(n))
    await new Promise((resolve) => setImmediate(resolve))
    // One statement is running: the three wait.
    expect(calls).toEqual([[1]])
    gates.shift()?.()
    expect(await first).toBe(-1)
    await new Promise((resolve) => setImmediate(resolve))
    expect(calls).toEqual([[1], [2, 3, 4]])
    gates.shift()?.()
    expect(await Promise.all(waiting)).toEqual([-2, -3, -4])
  })

  it('drain writes what waits for a free statement too', async () => {
    let written = 0
    const batcher = new Batcher<number, void>(
      async (rows) => {
        await new Promise((resolve) => setTimeout(resolve, 5))
        written += rows.length
        return rows.map(() => undefined)
      },
      { maxBatch: 2, maxInFlight: 1 },
    )
    const pending = Promise.all([1, 2, 3, 4, 5].map((n) => batcher.submit(n)))
    await batcher.drain()
    expect(written).toBe(5)
    await pending
  })

  it('does not try each item again when the link to the database failed: every item gets that failure', async () => {
    const calls: number[][] = []
    const lost = Object.assign(new Error('the database did not answer within 1000 ms'), { code: 'ETIMEDOUT' })
    const batcher = new Batcher<number, void>(async (rows) => {
      calls.push([...rows])
      throw lost
    })
    const outcomes = await Promise.allSettled([1, 2, 3].map((n) => batcher.submit(n)))
    expect(outcomes).toEqual([1, 2, 3].map(() => ({ status: 'rejected', reason: lost })))
    expect(calls).toEqual([[1, 2, 3]])
  })
})
