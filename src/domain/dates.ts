// Calendar dates are plain "YYYY-MM-DD" strings (UTC) passed in by the caller: the domain has no clock.

const ISO_DATE = /^(\d{4})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/

/** Throws a RangeError unless `date` is a "YYYY-MM-DD" calendar date (a programming error). */
export function assertIsoDate(date: string): void {
  if (!ISO_DATE.test(date)) throw new RangeError(`expected a YYYY-MM-DD date, got ${JSON.stringify(date)}`)
}

/** The year of a "YYYY-MM-DD" date, as an integer. */
export function yearOf(date: string): number {
  assertIsoDate(date)
  return Number(date.slice(0, 4))
}
