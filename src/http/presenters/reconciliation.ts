// Impact record → wire (docs/reconciliation.md). Amounts are exact decimal strings at the currency's precision until
// here, and JSON numbers on the wire, like every money field of the API: a string of at most 15 significant digits
// converts to the nearest double and prints back as the same decimal, so nothing is rounded on the way. The wire form
// is built in one place, impactRecordData, which lives with the webhook events because an event stores it when the
// allocation is written: a read and an event's data are the same bytes.
import type { ImpactRecord } from '../../domain/impact-record.js'
import { impactRecordData } from '../../services/webhooks/events.js'
import type { ImpactRecordResponse } from '../schemas/reconciliation.js'

export const presentImpactRecord = (record: ImpactRecord): ImpactRecordResponse => impactRecordData(record) as ImpactRecordResponse
