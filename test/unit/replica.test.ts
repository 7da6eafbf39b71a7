// When a read replica is used: its lag judged from what it says about itself, and the router's moves in and out of
// use (the probe is given; the real one, on a real standby, is exercised by test/integration/read-replica.test.ts).
import type { PostgresPool } from 'kysely'
import { describe, expect, it } from 'vitest'
import type { ReplicaProbe } from '../../src/db/repositories/replication.js'
import { judgeReplica, ReadRouter, type ReplicaChange, type ReplicaHealth } from '../../src/db/replica.js'

const MAX = 5000
const standby = (overrides: Partial<ReplicaProbe>): ReplicaProbe => ({
  inRecovery: true,
  receiving: true,
  unreplayedBytes: 0,
  replayAgeMs: 10,
  ...overrides,
})

describe('judgeReplica', () => {
  const cases: [string, ReplicaProbe, number | null, ReplicaHealth][] = [
    ['promoted, or a primary', standby({ inRecovery: false }), null, { usable: false, reason: 'not-standby', lagMs: null }],
    ['cut off from its primary', standby({ receiving: false }), null, { usable: false, reason: 'not-receiving', lagMs: null }],
    [
      'idle primary: nothing to replay, last commit an hour ago',
      standby({ unreplayedBytes: 0, replayAgeMs: 3_600_000 }),
      null,
      { usable: true, lagMs: 0 },
    ],
    ['replaying, last commit 200 ms ago', standby({ unreplayedBytes: 4096, replayAgeMs: 200 }), null, { usable: true, lagMs: 200 }],
    [
      'first write after a quiet hour, caught up at the check 300 ms ago',
      standby({ unreplayedBytes: 512, replayAgeMs: 3_600_000 }),
      300,
      { usable: true, lagMs: 300 },
    ],
    [
      'replay paused for 6 s under writes',
      standby({ unreplayedBytes: 90_000, replayAgeMs: 6000 }),
      6100,
      { usable: false, reason: 'lagging', lagMs: 6000 },
    ],
    [
      'behind, never seen caught up, last commit 10 min ago',
      standby({ unreplayedBytes: 512, replayAgeMs: 600_000 }),
      null,
      { usable: false, reason: 'lagging', lagMs: 600_000 },
    ],
    [
      'WAL waiting, nothing replayed since start',
      standby({ unreplayedBytes: 512, replayAgeMs: null }),
      null,
      { usable: false, reason: 'lagging', lagMs: null },
    ],
    ['a replica clock ahead of the primary', standby({ unreplayedBytes: 512, replayAgeMs: -40 }), null, { usable: true, lagMs: 0 }],
    ['exactly at the bound', standby({ unreplayedBytes: 512, replayAgeMs: MAX }), null, { usable: true, lagMs: MAX }],
  ]
  it.each(cases)('%s', (_name, probe, sinceCaughtUp, expected) => {
    expect(judgeReplica(probe, MAX, sinceCaughtUp)).toEqual(expected)
  })
})

describe('ReadRouter', () => {
  const unused: PostgresPool = {
    connect: () => Promise.reject(new Error('no statement is routed in these tests')),
    end: async () => {},
  }
  function router(probes: (ReplicaProbe | Error)[]) {
    const changes: ReplicaChange[] = []
    const readRouter = new ReadRouter({
      primary: unused,
      replica: unused,
      probe: async () => {
        const next = probes.shift()
        if (next === undefined) throw new Error('no probe left')
        if (next instanceof Error) throw next
        return next
      },
      maxLagMs: MAX,
      checkIntervalMs: 60_000,
    })
    readRouter.onChange((change) => changes.push(change))
    return { readRouter, changes }
  }
  const behind = (replayAgeMs: number) => standby({ unreplayedBytes: 1024, replayAgeMs })

  it('starts on the primary, uses the replica once a check passes, and reports each change once', async () => {
    const { readRouter, changes } = router([standby({}), standby({}), standby({})])
    expect(readRouter.status().state).toBe('unknown')
    await readRouter.check()
    await readRouter.check()
    await readRouter.check()
    expect(readRouter.status()).toEqual({ state: 'in-use', reason: null, lagMs: 0 })
    expect(changes.map((c) => [c.previous, c.state])).toEqual([['unknown', 'in-use']])
  })

  it('skips a lagging replica and takes it back only within half the bound (no flapping at the bound)', async () => {
    // Never seen caught up, so only the replay timestamp bounds the lag.
    const { readRouter, changes } = router([behind(100), behind(6000), behind(4000), behind(2600), behind(2400)])
    await readRouter.check()
    expect((await readRouter.check()).state).toBe('skipped')
    expect(await readRouter.check()).toEqual({ state: 'skipped', reason: 'lagging', lagMs: 4000 })
    expect((await readRouter.check()).state).toBe('skipped')
    expect(await readRouter.check()).toEqual({ state: 'in-use', reason: null, lagMs: 2400 })
    expect(changes.map((c) => `${c.state}:${c.reason}`)).toEqual(['in-use:null', 'skipped:lagging', 'in-use:null'])
  })

  it('skips a replica whose check fails, keeping the error for the log line, and a failed statement at once', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' })
    const { readRouter, changes } = router([refused, standby({})])
    await readRouter.check()
    expect(readRouter.status()).toMatchObject({ state: 'skipped', reason: 'unavailable', error: refused })
    await readRouter.check()
    expect(readRouter.status().state).toBe('in-use')
    readRouter.failed(refused)
    expect(readRouter.status()).toMatchObject({ state: 'skipped', reason: 'unavailable' })
    expect(changes.map((c) => `${c.previous}→${c.state}`)).toEqual(['unknown→skipped', 'skipped→in-use', 'in-use→skipped'])
  })

  it('runs one check at a time', async () => {
    let calls = 0
    const readRouter = new ReadRouter({
      primary: unused,
      replica: unused,
      probe: async () => {
        calls++
        await new Promise((resolve) => setTimeout(resolve, 20))
        return standby({})
      },
      maxLagMs: MAX,
      checkIntervalMs: 60_000,
    })
    await Promise.all([readRouter.check(), readRouter.check(), readRouter.check()])
    expect(calls).toBe(1)
  })
})
