// What decides whether a table needs ANALYZE (src/domain/table-statistics.ts): the server's autovacuum settings and
// each table's estimated rows and changes since its last ANALYZE; and the ANALYZE itself.
import { sql, type Kysely } from 'kysely'
import type { Database } from '../database.js'
import type { AnalyseSettings, TableActivity } from '../../domain/table-statistics.js'

/** The autovacuum settings and the tables (and partitions) of the current schema, with their activity. */
export async function readTableActivity(db: Kysely<Database>): Promise<{ settings: AnalyseSettings; tables: TableActivity[] }> {
  const { rows } = await sql<{
    autovacuum: boolean
    threshold: number
    scale_factor: number
    naptime_seconds: number
    tables:
      | {
          table: string
          estimatedRows: number
          changedSinceAnalyse: number
          options: string[] | null
          secondsSinceAnalyse: number | null
        }[]
      | null
  }>`
    SELECT current_setting('autovacuum')::boolean AS autovacuum,
           current_setting('autovacuum_analyze_threshold')::int AS threshold,
           current_setting('autovacuum_analyze_scale_factor')::float8 AS scale_factor,
           extract(epoch FROM current_setting('autovacuum_naptime')::interval)::float8 AS naptime_seconds,
           (SELECT json_agg(json_build_object('table', c.relname, 'estimatedRows', c.reltuples,
                                              'changedSinceAnalyse', s.n_mod_since_analyze, 'options', c.reloptions,
                                              'secondsSinceAnalyse',
                                              extract(epoch FROM now() - greatest(s.last_analyze, s.last_autoanalyze))))
            FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
            WHERE s.schemaname = current_schema() AND c.relkind = 'r') AS tables`.execute(db)
  const row = rows[0]
  if (!row) throw new Error('reading table activity returned no row')
  return {
    settings: {
      autovacuum: row.autovacuum,
      threshold: Number(row.threshold),
      scaleFactor: Number(row.scale_factor),
      naptimeSeconds: Number(row.naptime_seconds),
    },
    tables: (row.tables ?? []).map((t) => ({
      table: t.table,
      estimatedRows: Number(t.estimatedRows),
      changedSinceAnalyse: Number(t.changedSinceAnalyse),
      options: t.options,
      secondsSinceAnalyse: t.secondsSinceAnalyse === null ? null : Number(t.secondsSinceAnalyse),
    })),
  }
}

/** ANALYZE of one table of the current schema (a name the catalogue gave, quoted as an identifier). */
export async function analyseTable(db: Kysely<Database>, table: string): Promise<void> {
  await sql`ANALYZE ${sql.table(table)}`.execute(db)
}
