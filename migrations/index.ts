// The ordered list of migrations, imported statically so the same list runs from source (tsx, vitest)
// and from the compiled build without scanning the file system. Add new files at the end.
import type { Migration } from 'kysely'
import * as m000100 from './2026_11_21_000100_organisations_and_api_keys.js'

export const migrations: Record<string, Migration> = {
  '2026_11_21_000100_organisations_and_api_keys': m000100,
}
