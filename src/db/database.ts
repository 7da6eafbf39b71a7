// Kysely table types. numeric columns are strings (both pg and PGlite return numeric as text);
// money is converted to Decimal in the domain, never to a JS number.
import type { ColumnType, Generated, Insertable, Selectable } from 'kysely'

export type Numeric = ColumnType<string, string, string>
export type Timestamp = ColumnType<Date, Date | undefined, Date>

export interface AddressJson {
  line1: string
  line2?: string | null
  line3?: string | null
  city: string
  postalCode: string
  state?: string | null
  countryCode: string
}

export interface OrganisationsTable {
  id: string
  parent_id: string | null
  trading_name: string
  legal_name: string
  organisation_reference: string | null
  address: ColumnType<AddressJson, string, string>
  country_code: string
  currency_code: string
  website: string | null
  mcc: string | null
  service_fee_rate: Numeric
  tax_liability: 'platform' | 'organisation'
  status: 'active' | 'inactive'
  created_at: Timestamp
}

export interface ApiKeysTable {
  id: string
  organisation_id: string
  mode: 'live' | 'test'
  key_hash: Uint8Array
  prefix: string
  created_at: Timestamp
  revoked_at: Date | null
}

export interface Database {
  organisations: OrganisationsTable
  api_keys: ApiKeysTable
}

export type OrganisationRow = Selectable<OrganisationsTable>
export type NewOrganisationRow = Insertable<OrganisationsTable>
export type ApiKeyRow = Selectable<ApiKeysTable>
export type NewApiKeyRow = Insertable<ApiKeysTable>
export type GeneratedId = Generated<string>
