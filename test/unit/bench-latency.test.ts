// The bench's p99 at a fixed rate (bench/harness/load.ts, correctedP99): corrected for coordinated omission with each
// connection's own interval between requests.
import { describe, expect, it } from 'vitest'
import { correctedP99 } from '../../bench/harness/load.js'

const fast = (n: number, ms = 5) => Array.from({ length: n }, () => ms)

describe('correctedP99', () => {
  it.each([
    ['no responses', [], 20, 0],
    ['all under the interval: the plain p99', [...fast(99), 9], 20, 5],
    ['one in a hundred slow: under the p99', [...fast(99), 19], 20, 5],
    ['two in a hundred slow, nothing omitted at this interval', [...fast(98), 19, 19], 20, 19],
  ])('%s', (_label, values, interval, p99) => {
    expect(correctedP99(values, interval)).toBe(p99)
  })

  it('counts a slow response once more per interval it held its connection up', () => {
    // 990 responses of 5 ms and 10 of 100 ms: at a 20 ms interval each 100 ms one stands for 80, 60, 40 and 20 ms too,
    // 50 of 1,040 values; the p99 is the 11th slowest, one of the ten 80 ms.
    const values = [...fast(990), ...Array.from({ length: 10 }, () => 100)]
    expect(correctedP99(values, 20)).toBe(80)
    // With 1,990 fast ones, of 2,040 values the p99 is the 21st slowest: one of the ten 60 ms.
    expect(correctedP99([...fast(1_990), ...Array.from({ length: 10 }, () => 100)], 20)).toBe(60)
    expect(correctedP99([...fast(9_990), ...Array.from({ length: 10 }, () => 100)], 20)).toBe(5)
  })

  it("differs from autocannon's 1 ms interval, which counts a 100 ms response a hundred times", () => {
    const values = [...fast(9_990), ...Array.from({ length: 10 }, () => 100)]
    expect(correctedP99(values, 1)).toBeGreaterThanOrEqual(50)
    expect(correctedP99(values, 1_000 / 57)).toBe(5)
  })
})
