// The bench's reading of `--trace-gc` lines (bench/harness/gc-trace.ts) and of the variants it compares
// (bench/harness/config.ts), which bench/process-spread.ts uses to tell a process whose old generation fills with
// short-lived objects from one whose does not.
import { describe, expect, it } from 'vitest'
import { variantParts } from '../../bench/harness/config.js'
import { lineSplitter, parseGcLine, summariseGc, type GcEvent } from '../../bench/harness/gc-trace.js'

describe('parseGcLine', () => {
  it.each([
    [
      'a scavenge, Node 20',
      '[9660:0x20023020]     8688 ms: Scavenge 59.5 (109.4) -> 50.8 (109.4) MB, 2.88 / 0.01 ms  (average mu = 0.964, current mu = 0.969) task; ',
      { atMs: 8688, kind: 'scavenge', beforeMb: 59.5, afterMb: 50.8, pauseMs: 2.88 },
    ],
    [
      'a scavenge, Node 24 (pooled)',
      '[12257:0x168e1000]       34 ms: Scavenge 5.1 (6.6) -> 4.6 (7.6) MB, pooled: 0 MB, 0.90 / 0.00 ms  (average mu = 1.000, current mu = 1.000) allocation failure; ',
      { atMs: 34, kind: 'scavenge', beforeMb: 5.1, afterMb: 4.6, pauseMs: 0.9 },
    ],
    [
      'a mark-compact with incremental steps',
      '[9660:0x20023020]     9049 ms: Mark-Compact 83.5 (109.4) -> 46.5 (107.7) MB, 4.28 / 0.02 ms  (+ 10.4 ms in 161 steps since start of marking, biggest step 0.2 ms) finalize incremental marking via task; GC in old space requested',
      { atMs: 9049, kind: 'mark-compact', beforeMb: 83.5, afterMb: 46.5, pauseMs: 4.28 },
    ],
    [
      "the memory reducer's",
      '[1:0x1]   20000 ms: Mark-Compact (reduce) 40.1 (60.0) -> 30.2 (50.0) MB, 12.50 / 0.00 ms  (average mu = 0.99) memory reducer',
      { atMs: 20000, kind: 'mark-compact', beforeMb: 40.1, afterMb: 30.2, pauseMs: 12.5 },
    ],
  ])('%s', (_label, line, event) => {
    expect(parseGcLine(line)).toEqual(event)
  })

  it.each([
    ['a log line', '{"level":40,"msg":"exchange rates in use are 301 days old"}'],
    ['an empty line', ''],
    ['a line that only mentions a scavenge', 'Scavenge 1.0 (2.0) -> 0.5 (2.0) MB'],
  ])('ignores %s', (_label, line) => {
    expect(parseGcLine(line)).toBeUndefined()
  })
})

const scavenge = (atMs: number, beforeMb: number, afterMb: number, pauseMs = 1): GcEvent => ({
  atMs,
  kind: 'scavenge',
  beforeMb,
  afterMb,
  pauseMs,
})

describe('summariseGc', () => {
  it('counts and times each kind, and averages what the heap kept from one scavenge to the next', () => {
    const summary = summariseGc([
      scavenge(0, 60, 50, 2),
      scavenge(30, 61, 52.5, 3),
      scavenge(60, 63, 54.5, 2),
      { atMs: 80, kind: 'mark-compact', beforeMb: 70, afterMb: 40, pauseMs: 5 },
      // After a mark-compact the next scavenge starts a new pair: 40 → 41 is not counted as growth.
      scavenge(100, 50, 41, 1),
      scavenge(130, 52, 42, 1),
    ])
    expect(summary).toEqual({ scavenges: 5, scavengeMs: 9, markCompacts: 1, markCompactMs: 5, oldGrowthPerScavengeMb: (2.5 + 2 + 1) / 3 })
  })

  it('is all zeros without collections', () => {
    expect(summariseGc([])).toEqual({ scavenges: 0, scavengeMs: 0, markCompacts: 0, markCompactMs: 0, oldGrowthPerScavengeMb: 0 })
  })
})

describe('lineSplitter', () => {
  it('hands on whole lines only, however the chunks are cut', () => {
    const lines: string[] = []
    const push = lineSplitter((line) => lines.push(line))
    push('[1:0x1] 5 ms: Scav')
    push('enge 1.0 (2.0) -> 0.5 (2.0) MB, 0.10 / 0.00 ms\nsecond')
    expect(lines).toEqual(['[1:0x1] 5 ms: Scavenge 1.0 (2.0) -> 0.5 (2.0) MB, 0.10 / 0.00 ms'])
    push(' line\n')
    expect(lines.at(-1)).toBe('second line')
  })
})

describe('variantParts', () => {
  it.each([
    ['', {}, []],
    ['--allocation-site-pretenuring', {}, ['--allocation-site-pretenuring']],
    ['METRICS_PORT=0', { METRICS_PORT: '0' }, []],
    [
      '  METRICS_PORT=0   --max-semi-space-size=8 TABLE_STATISTICS_WORKER=false',
      { METRICS_PORT: '0', TABLE_STATISTICS_WORKER: 'false' },
      ['--max-semi-space-size=8'],
    ],
    // A Node flag with a value is a flag, not a setting.
    ['--max-old-space-size=512', {}, ['--max-old-space-size=512']],
  ])('%j', (variant, env, nodeArgs) => {
    expect(variantParts(variant)).toEqual({ env, nodeArgs })
  })
})
