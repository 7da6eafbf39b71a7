// What a read replica says about itself: is it a standby, is it receiving from its primary, and how far behind is it.
import { sql, type Kysely } from 'kysely'
import type { Database } from '../database.js'

export interface ReplicaProbe {
  /** pg_is_in_recovery(): a standby. False once promoted (or when the URL names a primary). */
  inRecovery: boolean
  /** A WAL receiver is running, i.e. the standby is connected to (or connecting to) its primary. */
  receiving: boolean
  /** WAL received but not yet replayed, in bytes; null before anything was received. */
  unreplayedBytes: number | null
  /** Since the commit of the last transaction replayed (pg_last_xact_replay_timestamp), in ms; null before any. */
  replayAgeMs: number | null
}

/**
 * One statement on the replica. Raw SQL: these are server functions and a system view, nothing the builder models.
 * pg_stat_wal_receiver shows a role without pg_read_all_stats only the pid, which is all this asks of it.
 */
export async function probeReplica(db: Kysely<Database>): Promise<ReplicaProbe> {
  const { rows } = await sql<{
    in_recovery: boolean
    receiving: boolean
    unreplayed_bytes: number | null
    replay_age_ms: number | null
  }>`
    SELECT pg_is_in_recovery() AS in_recovery,
           EXISTS (SELECT 1 FROM pg_stat_wal_receiver) AS receiving,
           pg_wal_lsn_diff(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn())::float8 AS unreplayed_bytes,
           (extract(epoch FROM clock_timestamp() - pg_last_xact_replay_timestamp()) * 1000)::float8 AS replay_age_ms`.execute(db)
  const row = rows[0]!
  return {
    inRecovery: row.in_recovery,
    receiving: row.receiving,
    unreplayedBytes: row.unreplayed_bytes,
    replayAgeMs: row.replay_age_ms,
  }
}
