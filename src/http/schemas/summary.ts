// Wire schemas of the allocation summary (docs/summary.md).
import { Type, type Static } from '@sinclair/typebox'
import { isTimeZone, SUMMARY_GROUP_BYS } from '../../domain/summary.js'
import { AppError } from '../../errors.js'
import type { SummaryQuery } from '../../services/summary.js'
import type { HttpErrorCode } from '../errors.js'
import { stringEnum, UuidSchema } from './common.js'
import { DateTimeSchema } from './reconciliation.js'

export const SummaryQuerySchema = Type.Object(
  {
    dateTimeFrom: DateTimeSchema('Start of the window, inclusive'),
    dateTimeTo: DateTimeSchema('End of the window, exclusive; at most 366 days after dateTimeFrom'),
    fundsOrganisationId: Type.Optional({
      ...UuidSchema,
      description: "One organisation of the key's tree (default: the key's organisation and all its descendants)",
    }),
    groupBy: stringEnum(
      SUMMARY_GROUP_BYS,
      'day, week (ISO, from Monday) or month buckets in timeZone; or impactPartner, project, organisation, currency',
    ),
    timeZone: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone of the day, week and month buckets (default UTC)' }),
    ),
  },
  { additionalProperties: false },
)

export type SummaryQueryParams = Static<typeof SummaryQuerySchema>

/** The query as the service takes it; an unknown time zone is refused here, naming the parameter. */
export function toSummaryQuery(params: SummaryQueryParams): SummaryQuery {
  const timeZone = params.timeZone ?? 'UTC'
  if (!isTimeZone(timeZone)) {
    throw new AppError<HttpErrorCode>('BAD_REQUEST', 'querystring.timeZone must be an IANA time zone, e.g. Europe/London', [
      { path: '/querystring/timeZone', message: 'must be an IANA time zone, e.g. Europe/London' },
    ])
  }
  return {
    dateTimeFrom: params.dateTimeFrom,
    dateTimeTo: params.dateTimeTo,
    fundsOrganisationId: params.fundsOrganisationId,
    groupBy: params.groupBy,
    timeZone,
  }
}

const money = (description?: string) => Type.Number(description ? { description } : {})

const sectionFields = {
  total: money('impact + impactTax + serviceFee + serviceFeeTax'),
  impact: money(),
  impactTax: money(),
  serviceFee: money(),
  serviceFeeTax: money(),
}

const CurrencyTotalsSchema = Type.Object(
  {
    currencyCode: Type.String(),
    allocations: Type.Integer({ description: 'Allocations recorded in the window (in a group: those with a line in it)' }),
    reversals: Type.Integer({ description: 'Reversals recorded in the window (at their own time)' }),
    credits: Type.Object({
      ...sectionFields,
      quantityTonnes: Type.Number({ description: 'Tonnes CO2e of credits as recorded on the lines (they follow the amount paid)' }),
    }),
    contributions: Type.Object(sectionFields),
  },
  { title: 'SummaryCurrencyTotals', description: 'One currency (never summed across currencies); amounts net of reversals' },
)

const SummaryGroupSchema = Type.Object(
  {
    key: Type.String({
      description:
        'A local date (day; a week by its Monday), a month (YYYY-MM), an impact partner, project or organisation id, or a currency',
    }),
    name: Type.Optional(Type.String({ description: "The partner's, project's or organisation's name" })),
    countryCode: Type.Optional(Type.Unsafe<string | null>({ type: ['string', 'null'], description: "A project's country" })),
    dateTimeFrom: Type.Optional(Type.String({ format: 'date-time', description: "A time bucket's start, clipped to the window" })),
    dateTimeTo: Type.Optional(Type.String({ format: 'date-time', description: "A time bucket's end (exclusive), clipped to the window" })),
    totals: Type.Array(CurrencyTotalsSchema),
  },
  { title: 'SummaryGroup' },
)

export const AllocationSummarySchema = Type.Object(
  {
    dateTimeFrom: Type.String({ format: 'date-time' }),
    dateTimeTo: Type.String({ format: 'date-time' }),
    timeZone: Type.String(),
    groupBy: stringEnum(SUMMARY_GROUP_BYS, 'The grouping of groups'),
    totals: Type.Array(CurrencyTotalsSchema, { description: "The window's totals, one per currency, in currency order" }),
    groups: Type.Array(SummaryGroupSchema, { description: 'In key order; time groupings list every bucket of the window' }),
  },
  { title: 'AllocationSummary' },
)

export type AllocationSummaryResponse = Static<typeof AllocationSummarySchema>
