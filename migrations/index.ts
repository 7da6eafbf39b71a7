// The ordered list of migrations, imported statically so the same list runs from source (tsx, vitest)
// and from the compiled build without scanning the file system. Add new files at the end.
import type { Migration } from 'kysely'
import * as m000100 from './2026_11_21_000100_organisations_and_api_keys.js'
import * as m000200 from './2026_11_21_000200_catalogue_and_quotes.js'
import * as m000300 from './2026_11_21_000300_sessions.js'
import * as m000400 from './2026_11_21_000400_funds_allocations.js'
import * as m000500 from './2026_11_21_000500_quote_snapshots.js'
import * as m000600 from './2026_11_23_000600_drop_stored_responses.js'
import * as m000800 from './2026_11_23_000800_organisation_allowed_origins.js'
import * as m000900 from './2026_11_23_000900_key_expiry_and_fx_rates.js'
import * as m001100 from './2026_11_23_001100_lean_quotes_and_sessions.js'
import * as m001200 from './2026_11_23_001200_reconciliation.js'
import * as m001300 from './2026_11_23_001300_webhooks.js'
import * as m001400 from './2026_11_23_001400_impact_partner_records.js'
import * as m001500 from './2026_11_24_001500_audit_events.js'
import * as m001510 from './2026_11_24_001510_organisation_access_settings.js'
import * as m001520 from './2026_11_24_001520_hub_users_and_sessions.js'
import * as m001600 from './2026_11_24_001600_profit_share.js'
import * as m001700 from './2026_11_24_001700_allocation_rollups.js'
import * as m001900 from './2026_11_25_001900_partition_history.js'
import * as m002100 from './2026_11_25_002100_small_webhook_events.js'
import * as m002200 from './2026_11_25_002200_weekly_rollups.js'
import * as m002300 from './2026_11_25_002300_partition_ledger.js'
import * as m002310 from './2026_11_27_002310_analyze_partitioned_tables.js'
import * as m002400 from './2026_11_27_002400_compact_entries.js'
import * as m002500 from './2026_11_27_002500_plpgsql_write_functions.js'
import * as m002600 from './2026_11_28_002600_lean_partner_rows_and_consumer_index.js'
import * as m002700 from './2026_11_28_002700_merchant_snapshots.js'
import * as m002800 from './2026_11_28_002800_partner_rows_organisation_once.js'
import * as m002900 from './2026_11_28_002900_drop_allocations_quote_index.js'
import * as m003000 from './2026_11_28_003000_organisation_index_for_children.js'
import * as m003100 from './2026_11_28_003100_entries_as_strings.js'
import * as m003200 from './2026_11_28_003200_partner_key_without_nulls.js'
import * as m003300 from './2026_11_28_003300_organisation_root_by_steps.js'

export const migrations: Record<string, Migration> = {
  '2026_11_21_000100_organisations_and_api_keys': m000100,
  '2026_11_21_000200_catalogue_and_quotes': m000200,
  '2026_11_21_000300_sessions': m000300,
  '2026_11_21_000400_funds_allocations': m000400,
  '2026_11_21_000500_quote_snapshots': m000500,
  '2026_11_23_000600_drop_stored_responses': m000600,
  '2026_11_23_000800_organisation_allowed_origins': m000800,
  '2026_11_23_000900_key_expiry_and_fx_rates': m000900,
  '2026_11_23_001100_lean_quotes_and_sessions': m001100,
  '2026_11_23_001200_reconciliation': m001200,
  '2026_11_23_001300_webhooks': m001300,
  '2026_11_23_001400_impact_partner_records': m001400,
  '2026_11_24_001500_audit_events': m001500,
  '2026_11_24_001510_organisation_access_settings': m001510,
  '2026_11_24_001520_hub_users_and_sessions': m001520,
  '2026_11_24_001600_profit_share': m001600,
  '2026_11_24_001700_allocation_rollups': m001700,
  '2026_11_25_001900_partition_history': m001900,
  '2026_11_25_002100_small_webhook_events': m002100,
  '2026_11_25_002200_weekly_rollups': m002200,
  '2026_11_25_002300_partition_ledger': m002300,
  '2026_11_27_002310_analyze_partitioned_tables': m002310,
  '2026_11_27_002400_compact_entries': m002400,
  '2026_11_27_002500_plpgsql_write_functions': m002500,
  '2026_11_28_002600_lean_partner_rows_and_consumer_index': m002600,
  '2026_11_28_002700_merchant_snapshots': m002700,
  '2026_11_28_002800_partner_rows_organisation_once': m002800,
  '2026_11_28_002900_drop_allocations_quote_index': m002900,
  '2026_11_28_003000_organisation_index_for_children': m003000,
  '2026_11_28_003100_entries_as_strings': m003100,
  '2026_11_28_003200_partner_key_without_nulls': m003200,
  '2026_11_28_003300_organisation_root_by_steps': m003300,
}
