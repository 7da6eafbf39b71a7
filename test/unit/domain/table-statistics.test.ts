import { describe, expect, it } from 'vitest'
import { autovacuumLooksAfter, tablesToAnalyse, type AnalyseSettings, type TableActivity } from '../../../src/domain/table-statistics.js'

// Postgres's defaults: 50 rows plus 10% of the estimated rows, a visit a minute.
const OFF: AnalyseSettings = { autovacuum: false, threshold: 50, scaleFactor: 0.1, naptimeSeconds: 60 }
const ON: AnalyseSettings = { ...OFF, autovacuum: true }

const table = (
  name: string,
  estimatedRows: number,
  changed: number,
  options: string[] | null = null,
  secondsSinceAnalyse: number | null = null,
): TableActivity => ({
  table: name,
  estimatedRows,
  changedSinceAnalyse: changed,
  options,
  secondsSinceAnalyse,
})

describe('whether autovacuum looks after a table', () => {
  it.each([
    [ON, null, true],
    [ON, ['fillfactor=90'], true],
    [ON, ['autovacuum_enabled=true'], true],
    [ON, ['autovacuum_enabled=on'], true],
    [ON, ['autovacuum_enabled=1'], true],
    [ON, ['autovacuum_enabled=false'], false],
    [ON, ['fillfactor=90', 'autovacuum_enabled=off'], false],
    [ON, ['autovacuum_enabled=OFF'], false],
    [ON, ['autovacuum_enabled=fal'], false],
    [ON, ['autovacuum_enabled=no'], false],
    [ON, ['autovacuum_enabled=0'], false],
    [OFF, null, false],
    [OFF, ['autovacuum_enabled=true'], false],
  ])('autovacuum %o, options %o: %s', (settings, options, expected) => {
    expect(autovacuumLooksAfter(options, settings)).toBe(expected)
  })
})

describe('the tables due an ANALYZE', () => {
  it.each<[string, TableActivity, AnalyseSettings, boolean]>([
    ['analysed empty, 50 rows since: not yet', table('t', 0, 50), OFF, false],
    ['analysed empty, 51 rows since', table('t', 0, 51), OFF, true],
    ['never analysed (-1 counts as empty)', table('t', -1, 51), OFF, true],
    ['never analysed, 10 rows since', table('t', -1, 10), OFF, false],
    ['10,000 rows estimated, 1,050 changed: at the threshold, not over it', table('t', 10_000, 1_050), OFF, false],
    ['10,000 rows estimated, 1,051 changed', table('t', 10_000, 1_051), OFF, true],
    ['due, but autovacuum looks after it', table('t', 0, 5_000), ON, false],
    ['due, autovacuum on but off for this table', table('t', 0, 5_000, ['autovacuum_enabled=false']), ON, true],
    ['a server threshold of 0 and scale 0: any change', table('t', 1_000_000, 1), { ...OFF, threshold: 0, scaleFactor: 0 }, true],
    // Within a naptime of its last ANALYZE, only a table that has about doubled since.
    ['over the rule, analysed 30 s ago, grown 10%: waits for the naptime', table('t', 10_000, 1_051, null, 30), OFF, false],
    ['over the rule, analysed 60 s ago', table('t', 10_000, 1_051, null, 60), OFF, true],
    ['over the rule, analysed 5 s ago, doubled', table('t', 100, 101, null, 5), OFF, true],
    ['analysed empty 1 s ago, 51 rows since', table('t', 0, 51, null, 1), OFF, true],
    ['analysed 5 s ago, grown by 20%: waits', table('t', 1_000, 200, null, 5), OFF, false],
    ['a naptime of 1 s, analysed 2 s ago', table('t', 1_000, 200, null, 2), { ...OFF, naptimeSeconds: 1 }, true],
  ])('%s', (_name, activity, settings, due) => {
    expect(tablesToAnalyse([activity], settings)).toEqual(due ? ['t'] : [])
  })

  it('names the due tables in order, and only those', () => {
    const tables = [table('quotes_p2026_12', 0, 10), table('quotes_p2026_11', 0, 400), table('allocations_p2026_11', 100, 61)]
    expect(tablesToAnalyse(tables, OFF)).toEqual(['allocations_p2026_11', 'quotes_p2026_11'])
  })
})
