// The dashboard: what the tree (or one organisation of it) allocated in a window — headline figures per currency with
// everyday equivalents of the tonnes, bars per day or week (credits and contributions stacked; a table as their text
// alternative), and breakdowns by impact partner, project and organisation. Every figure is the summary API's, the
// same numbers as the reconciliation records; each bar and row links to the records behind it.
import { Fragment } from 'preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import { api, query } from '../api'
import {
  allocated,
  daysIn,
  formatCount,
  formatMoney,
  formatTonnes,
  recordsLink,
  timeZone,
  windowOf,
  WINDOWS,
  type CurrencyTotals,
  type DayWindow,
  type Summary,
  type SummaryGroup,
  type WindowChoice,
} from '../figures'
import { navigate, onLink, useSearch } from '../router'
import { Empty, Field, FormError, OrganisationOptions, locale, Page, useLoad } from '../ui'
import type { PageProps } from './types'

interface DashboardData {
  series: Summary
  partners: Summary
  projects: Summary
  organisations: Summary
}

// The column headers of the dashboard's tables, written once: each <th scope="col"> shows one and each data cell
// repeats it in data-label, which the narrow layout (hub/src/styles.css) shows before the value, the thead being hidden.
const COLUMN = {
  name: 'Name',
  country: 'Country',
  credits: 'Credits',
  tonnes: 'Tonnes',
  contributions: 'Contributions',
  allocations: 'Allocations',
  reversals: 'Reversals',
} as const

const isWindowChoice = (value: string | null): value is WindowChoice => WINDOWS.some((w) => w.value === value)

export function Dashboard({ organisations }: PageProps) {
  const search = useSearch()
  const choice: WindowChoice = isWindowChoice(search.get('window')) ? (search.get('window') as WindowChoice) : '30d'
  const organisationId = organisations.some((o) => o.organisationId === search.get('organisation'))
    ? (search.get('organisation') ?? '')
    : ''
  const [custom, setCustom] = useState({ from: search.get('from') ?? '', to: search.get('to') ?? '' })
  const window = windowOf(choice, new Date(), { from: search.get('from'), to: search.get('to') })
  const update = (changes: Record<string, string | undefined>) => {
    const params = new URLSearchParams(location.search)
    for (const [key, value] of Object.entries(changes)) {
      if (value) params.set(key, value)
      else params.delete(key)
    }
    navigate(`/hub/dashboard?${params.toString()}`, { replace: true })
  }
  const groupBy = window && daysIn(window) > 31 ? 'week' : 'day'
  const zone = timeZone()
  const key = window ? `${window.from.getTime()} ${window.to.getTime()} ${organisationId}` : ''
  const { data, error } = useLoad<DashboardData | undefined>(async () => {
    if (!window) return undefined
    const summary = (by: string, zoned = false) =>
      api<Summary>(
        'GET',
        `/funds/allocations/summary${query({
          dateTimeFrom: window.from.toISOString(),
          dateTimeTo: window.to.toISOString(),
          groupBy: by,
          fundsOrganisationId: organisationId,
          timeZone: zoned ? zone : undefined,
        })}`,
      )
    const [series, partners, projects, byOrganisation] = await Promise.all([
      summary(groupBy, true),
      summary('impactPartner'),
      summary('project'),
      summary('organisation'),
    ])
    return { series, partners, projects, organisations: byOrganisation }
  }, [key])
  const names = new Map(organisations.map((o) => [o.organisationId, o.tradingName]))
  const filters = { organisation: organisationId || undefined }

  return (
    <Page title="Dashboard" intro="What was allocated to climate projects and impact partners: the same figures as the allocation records.">
      <form class="inline-form" onSubmit={(e) => e.preventDefault()} aria-label="Dashboard filters">
        <Field label="Window">
          {(props) => (
            <select {...props} value={choice} onChange={(e) => update({ window: e.currentTarget.value })}>
              {WINDOWS.map((w) => (
                <option key={w.value} value={w.value}>
                  {w.label}
                </option>
              ))}
            </select>
          )}
        </Field>
        {choice === 'custom' && (
          <>
            <Field label="First day">
              {(props) => (
                <input {...props} type="date" value={custom.from} onChange={(e) => setCustom({ ...custom, from: e.currentTarget.value })} />
              )}
            </Field>
            <Field label="Last day">
              {(props) => (
                <input {...props} type="date" value={custom.to} onChange={(e) => setCustom({ ...custom, to: e.currentTarget.value })} />
              )}
            </Field>
            <button type="button" onClick={() => update({ from: custom.from, to: custom.to })}>
              Show
            </button>
          </>
        )}
        <Field label="Organisation">
          {(props) => (
            <select {...props} value={organisationId} onChange={(e) => update({ organisation: e.currentTarget.value })}>
              <option value="">All organisations</option>
              <OrganisationOptions organisations={organisations} />
            </select>
          )}
        </Field>
      </form>
      {!window && <p class="form-error">Choose a first and a last day, the first on or before the last.</p>}
      {window && (
        <p class="hint" id="window-said">
          {windowText(window)} ({zone}), by {groupBy}
        </p>
      )}
      <FormError error={error} />
      {window && !data && !error && <p class="loading">Loading figures…</p>}
      {window && data && data.series.totals.length === 0 && <Empty>No allocations or reversals in this window.</Empty>}
      {window && data && data.series.totals.length > 0 && (
        <>
          <Headline totals={data.series.totals} />
          <h2>Over time</h2>
          {data.series.totals.map((t) => (
            <TimeSeries key={t.currencyCode} summary={data.series} currencyCode={t.currencyCode} filters={filters} />
          ))}
          <Breakdown
            title="By impact partner"
            summary={data.partners}
            window={window}
            linkOf={(g) => ({ ...filters, impactPartnerId: g.key })}
          />
          <Breakdown title="By project" summary={data.projects} window={window} withCountry />
          <Breakdown
            title="By organisation"
            summary={data.organisations}
            window={window}
            nameOf={(g) => g.name ?? names.get(g.key) ?? g.key}
            linkOf={(g) => ({ organisation: g.key })}
          />
        </>
      )}
    </Page>
  )
}

function windowText(w: DayWindow): string {
  const format = new Intl.DateTimeFormat(locale(), { dateStyle: 'medium' })
  return `${format.format(w.from)} to ${format.format(new Date(w.to.getTime() - 1))}`
}

function Headline({ totals }: { totals: CurrencyTotals[] }) {
  const tonnes = totals.reduce((sum, t) => sum + Math.round(t.credits.quantityTonnes * 1_000_000), 0) / 1_000_000
  const { data: equivalents } = useLoad(
    () =>
      tonnes > 0
        ? api<{ equivalents: { key: string; description: string }[] }>(
            'GET',
            `/equivalents${query({ tonnes: tonnes.toFixed(6), locale: locale() })}`,
          )
        : Promise.resolve(undefined),
    [tonnes],
  )
  return (
    <section aria-labelledby="headline-title">
      <h2 id="headline-title">In this window</h2>
      {totals.map((t) => (
        <Fragment key={t.currencyCode}>
          {totals.length > 1 && <h3>{`In ${currencyName(t.currencyCode)}`}</h3>}
          <dl class="figures" aria-label={`Figures in ${t.currencyCode}`}>
            <div>
              <dt>Allocated</dt>
              <dd data-figure="allocated">{formatMoney(allocated(t), t.currencyCode)}</dd>
            </div>
            <div>
              <dt>Tonnes funded</dt>
              <dd data-figure="tonnes">{formatTonnes(t.credits.quantityTonnes)}</dd>
            </div>
            <div>
              <dt>Credits</dt>
              <dd data-figure="credits">{formatMoney(t.credits.total, t.currencyCode)}</dd>
            </div>
            <div>
              <dt>Contributions</dt>
              <dd data-figure="contributions">{formatMoney(t.contributions.total, t.currencyCode)}</dd>
            </div>
            <div>
              <dt>Allocations</dt>
              <dd data-figure="allocations">{formatCount(t.allocations)}</dd>
            </div>
            <div>
              <dt>Reversals</dt>
              <dd data-figure="reversals">{formatCount(t.reversals)}</dd>
            </div>
          </dl>
        </Fragment>
      ))}
      {equivalents && equivalents.equivalents.length > 0 && (
        <>
          <p class="hint">{`${formatTonnes(tonnes)} in all currencies, roughly:`}</p>
          <ul class="equivalents">
            {equivalents.equivalents.map((e) => (
              <li key={e.key}>{e.description}</li>
            ))}
          </ul>
        </>
      )}
    </section>
  )
}

const currencyName = (code: string): string => new Intl.DisplayNames([locale()], { type: 'currency' }).of(code) ?? code

function totalsIn(group: SummaryGroup, currencyCode: string): CurrencyTotals | undefined {
  return group.totals.find((t) => t.currencyCode === currencyCode)
}

function TimeSeries({
  summary,
  currencyCode,
  filters,
}: {
  summary: Summary
  currencyCode: string
  filters: Record<string, string | undefined>
}) {
  const [asTable, setAsTable] = useState(false)
  const target = useRef<HTMLDivElement>(null)
  const groups = summary.groups.filter((g) => g.dateTimeFrom && g.dateTimeTo)
  const linkOf = (g: SummaryGroup) => recordsLink(new Date(g.dateTimeFrom as string), new Date(g.dateTimeTo as string), filters)
  const periodOf = (g: SummaryGroup) =>
    summary.groupBy === 'week'
      ? `Week of ${new Intl.DateTimeFormat(locale(), { dateStyle: 'medium' }).format(new Date(g.dateTimeFrom as string))}`
      : new Intl.DateTimeFormat(locale(), { weekday: 'short', day: 'numeric', month: 'short' }).format(new Date(g.dateTimeFrom as string))
  useEffect(() => {
    if (asTable || !target.current) return
    let destroy: (() => void) | undefined
    let live = true
    void import('../chart').then(({ drawBars }) => {
      if (!live || !target.current) return
      destroy = drawBars(target.current, {
        label: currencyCode,
        starts: groups.map((g) => new Date(g.dateTimeFrom as string).getTime() / 1000),
        credits: groups.map((g) => totalsIn(g, currencyCode)?.credits.total ?? 0),
        contributions: groups.map((g) => totalsIn(g, currencyCode)?.contributions.total ?? 0),
        format: (value) => formatMoney(value, currencyCode),
        onPick: (index) => {
          const group = groups[index]
          if (group) navigate(linkOf(group))
        },
      })
      target.current.dataset.drawn = 'true'
    })
    return () => {
      live = false
      destroy?.()
    }
  }, [asTable, summary, currencyCode])
  const title = `Allocated per ${summary.groupBy} in ${currencyCode}`
  return (
    <section class="series" aria-label={title}>
      <div class="series-head">
        <h3>{title}</h3>
        <button type="button" class="secondary" aria-pressed={asTable} onClick={() => setAsTable(!asTable)}>
          {asTable ? 'Show as chart' : 'Show as table'}
        </button>
      </div>
      {asTable ? (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">{title}</caption>
            <thead>
              <tr>
                <th scope="col">{summary.groupBy === 'week' ? 'Week' : 'Day'}</th>
                <th scope="col" class="number">
                  {COLUMN.credits}
                </th>
                <th scope="col" class="number">
                  {COLUMN.contributions}
                </th>
                <th scope="col" class="number">
                  {COLUMN.allocations}
                </th>
                <th scope="col" class="number">
                  {COLUMN.reversals}
                </th>
              </tr>
            </thead>
            <tbody>
              {groups.map((g) => {
                const t = totalsIn(g, currencyCode)
                return (
                  <tr key={g.key}>
                    <th scope="row">
                      <a href={linkOf(g)} onClick={onLink}>
                        {periodOf(g)}
                      </a>
                    </th>
                    <td class="number" data-label={COLUMN.credits}>
                      {formatMoney(t?.credits.total ?? 0, currencyCode)}
                    </td>
                    <td class="number" data-label={COLUMN.contributions}>
                      {formatMoney(t?.contributions.total ?? 0, currencyCode)}
                    </td>
                    <td class="number" data-label={COLUMN.allocations}>
                      {formatCount(t?.allocations ?? 0)}
                    </td>
                    <td class="number" data-label={COLUMN.reversals}>
                      {formatCount(t?.reversals ?? 0)}
                    </td>
                  </tr>
                )
              })}
            </tbody>
          </table>
        </div>
      ) : (
        <>
          <div class="chart" ref={target} />
          <p class="hint">Credits (dark) and contributions (light) per {summary.groupBy}. Select a bar to see its records.</p>
        </>
      )}
    </section>
  )
}

function Breakdown(props: {
  title: string
  summary: Summary
  window: DayWindow
  withCountry?: boolean
  nameOf?: (g: SummaryGroup) => string
  linkOf?: (g: SummaryGroup) => Record<string, string | undefined>
}) {
  const { title, summary, window, withCountry, nameOf = (g) => g.name ?? g.key, linkOf } = props
  const rows = summary.groups.flatMap((g) => g.totals.map((t) => ({ group: g, t })))
  const slug = title.toLowerCase().replace(/[^a-z]+/g, '-')
  return (
    <section aria-labelledby={slug}>
      <h2 id={slug}>{title}</h2>
      {rows.length === 0 ? (
        <Empty>Nothing in this window.</Empty>
      ) : (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">{title}</caption>
            <thead>
              <tr>
                <th scope="col">{COLUMN.name}</th>
                {withCountry && <th scope="col">{COLUMN.country}</th>}
                <th scope="col" class="number">
                  {COLUMN.credits}
                </th>
                <th scope="col" class="number">
                  {COLUMN.tonnes}
                </th>
                <th scope="col" class="number">
                  {COLUMN.contributions}
                </th>
                <th scope="col" class="number">
                  {COLUMN.allocations}
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map(({ group, t }) => (
                <tr key={`${group.key} ${t.currencyCode}`}>
                  <th scope="row" class="break">
                    {linkOf ? (
                      <a href={recordsLink(window.from, window.to, linkOf(group))} onClick={onLink}>
                        {nameOf(group)}
                      </a>
                    ) : (
                      nameOf(group)
                    )}
                  </th>
                  {withCountry && <td data-label={COLUMN.country}>{group.countryCode ?? '—'}</td>}
                  <td class="number" data-label={COLUMN.credits}>
                    {formatMoney(t.credits.total, t.currencyCode)}
                  </td>
                  <td class="number" data-label={COLUMN.tonnes}>
                    {formatTonnes(t.credits.quantityTonnes)}
                  </td>
                  <td class="number" data-label={COLUMN.contributions}>
                    {formatMoney(t.contributions.total, t.currencyCode)}
                  </td>
                  <td class="number" data-label={COLUMN.allocations}>
                    {formatCount(t.allocations)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  )
}
