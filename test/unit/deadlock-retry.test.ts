// A single-statement write that Postgres made a deadlock's victim runs again (src/db/failures.ts, runAgainOnDeadlock).
import { describe, expect, it } from 'vitest'
import { DEADLOCK_RUNS_MAX, runAgainOnDeadlock } from '../../src/db/failures.js'

const failing = (codes: string[]) => {
  let runs = 0
  const run = async (): Promise<string> => {
    const code = codes[runs++]
    if (code !== undefined) throw Object.assign(new Error(`failed with ${code}`), { code })
    return `written on run ${runs}`
  }
  return { run, runs: () => runs }
}

describe('runAgainOnDeadlock', () => {
  it('runs a deadlock victim again, up to DEADLOCK_RUNS_MAX runs in all', async () => {
    const twice = failing(['40P01', '40P01'])
    expect(await runAgainOnDeadlock(false, twice.run)).toBe('written on run 3')
    const always = failing(Array.from({ length: DEADLOCK_RUNS_MAX }, () => '40P01'))
    await expect(runAgainOnDeadlock(false, always.run)).rejects.toMatchObject({ code: '40P01' })
    expect(always.runs()).toBe(DEADLOCK_RUNS_MAX)
  })

  it('throws any other failure at once, and runs once within a transaction (which the deadlock aborted whole)', async () => {
    const unique = failing(['23505'])
    await expect(runAgainOnDeadlock(false, unique.run)).rejects.toMatchObject({ code: '23505' })
    expect(unique.runs()).toBe(1)
    const inTransaction = failing(['40P01'])
    await expect(runAgainOnDeadlock(true, inTransaction.run)).rejects.toMatchObject({ code: '40P01' })
    expect(inTransaction.runs()).toBe(1)
  })
})
