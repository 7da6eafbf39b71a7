// Which tables need fresh planner statistics, by autovacuum's own analyse rule (docs/table-statistics.md). Postgres
// keeps a plan made while a table looked empty — a foreign key's check, a prepared statement's generic plan — until
// that table's statistics change; autovacuum changes them as rows arrive, but only where it runs.

/** A table as the catalogue and the cumulative statistics describe it. */
export interface TableActivity {
  table: string
  /** pg_class.reltuples: -1 before the first ANALYZE. */
  estimatedRows: number
  /** Rows inserted, updated or deleted since the last ANALYZE (pg_stat_user_tables.n_mod_since_analyze). */
  changedSinceAnalyse: number
  /** pg_class.reloptions, e.g. "autovacuum_enabled=false"; null when none are set. */
  options: readonly string[] | null
  /** Seconds since its last ANALYZE (by hand or by autovacuum); null if it has none on record. */
  secondsSinceAnalyse: number | null
}

/** The server's autovacuum settings that decide when a table is analysed. */
export interface AnalyseSettings {
  autovacuum: boolean
  /** autovacuum_analyze_threshold */
  threshold: number
  /** autovacuum_analyze_scale_factor */
  scaleFactor: number
  /** autovacuum_naptime, in seconds: autovacuum visits a database at most this often. */
  naptimeSeconds: number
}

// Postgres's spellings of a boolean option's false (it stores the word as written, lower-cased): any prefix of
// "false", "no", "off" down to "of", and "0".
const FALSE_WORDS = new Set(['f', 'fa', 'fal', 'fals', 'false', 'n', 'no', 'of', 'off', '0'])

/** Whether autovacuum looks after the table: on in the server and not turned off by the table's own options. */
export function autovacuumLooksAfter(options: readonly string[] | null, settings: AnalyseSettings): boolean {
  if (!settings.autovacuum) return false
  const option = options?.find((o) => o.toLowerCase().startsWith('autovacuum_enabled='))
  return option === undefined || !FALSE_WORDS.has(option.slice('autovacuum_enabled='.length).toLowerCase().trim())
}

/**
 * The tables autovacuum would analyse and will not, because it does not look after them: changed by more rows than
 * the threshold plus the scale factor times the estimated rows (a table never analysed counts as empty) — and, as
 * autovacuum visits a database once a naptime, not analysed within the last naptime, unless the changes outnumber the
 * rows estimated at the last ANALYZE (the table has about doubled: a plan made on it may be wrong by as much, so it is
 * analysed at once; a table filling from empty is analysed at 50, 100, 200, … rows, not at every 10%). By name.
 */
export function tablesToAnalyse(tables: readonly TableActivity[], settings: AnalyseSettings): string[] {
  return tables
    .filter((t) => !autovacuumLooksAfter(t.options, settings))
    .filter((t) => {
      const estimated = Math.max(0, t.estimatedRows)
      if (t.changedSinceAnalyse <= settings.threshold + settings.scaleFactor * estimated) return false
      const rested = t.secondsSinceAnalyse === null || t.secondsSinceAnalyse >= settings.naptimeSeconds
      return rested || t.changedSinceAnalyse > estimated
    })
    .map((t) => t.table)
    .sort()
}
