// The allocations browser: the reconciliation records of a window with their filters (consumer reference, impact
// partner, organisation), all kept in the URL so that a link (a dashboard's bar) reproduces the view; keyset pages
// forwards and back; "Download CSV" of the same filters (the API's export); and a record's detail — credits per project,
// contributions per partner, their tax, the reversal if any and the webhook deliveries of its events.
import { useState } from 'preact/hooks'
import { api, query } from '../api'
import { addDays, formatMoney, formatTonnes, localDate, parseLocalDate, type ImpactRecord, type LineAmounts } from '../figures'
import { navigate, onLink, useSearch } from '../router'
import { Empty, Field, FormError, OrganisationOptions, formatDate, Page, useLoad } from '../ui'
import type { PageProps } from './types'

interface Partner {
  id: string
  name: string
}
interface Project {
  id: string
  name: string
  location?: { countryCode: string | null }
}
interface Delivery {
  id: string
  eventType: string
  endpointUrl: string
  status: string
  attempts: number
  lastStatusCode: number | null
  lastError: string | null
  createdAt: string
}

// The column headers of this page's tables, written once: each <th scope="col"> shows one and each data cell repeats
// it in data-label, which the narrow layout (hub/src/styles.css) shows before the value, the thead being hidden.
const RECORD_COLUMN = {
  when: 'When',
  record: 'Record',
  organisation: 'Organisation',
  consumer: 'Consumer',
  total: 'Total',
  tonnes: 'Tonnes',
} as const
const LINE_COLUMN = {
  name: 'Name',
  tonnes: 'Tonnes',
  impact: 'Impact',
  impactTax: 'Impact tax',
  serviceFee: 'Service fee',
  feeTax: 'Fee tax',
  total: 'Total',
} as const
const DELIVERY_COLUMN = {
  event: 'Event',
  endpoint: 'Endpoint',
  status: 'Status',
  attempts: 'Attempts',
  lastAnswer: 'Last answer',
} as const

const PAGE_SIZE = 20
const FILTERS = ['from', 'to', 'consumerReference', 'impactPartnerId', 'organisation'] as const

function useCatalogue() {
  return useLoad(async () => {
    const [partners, projects] = await Promise.all([
      api<Partner[]>('GET', '/impact-partners?limit=100'),
      api<Project[]>('GET', '/impact-partners/projects?limit=100'),
    ])
    return { partners: new Map(partners.map((p) => [p.id, p.name])), projects: new Map(projects.map((p) => [p.id, p])) }
  }, [])
}

export function Allocations(props: PageProps) {
  const search = useSearch()
  const record = search.get('record')
  return record ? <RecordDetail {...props} id={record} /> : <RecordList {...props} search={search} />
}

function RecordList({ organisations, search }: PageProps & { search: URLSearchParams }) {
  const today = new Date()
  const from = parseLocalDate(search.get('from')) ?? addDays(new Date(today.getFullYear(), today.getMonth(), today.getDate()), -29)
  const last = parseLocalDate(search.get('to')) ?? new Date(today.getFullYear(), today.getMonth(), today.getDate())
  const filter = {
    dateTimeFrom: from.toISOString(),
    dateTimeTo: addDays(last, 1).toISOString(),
    consumerReference: search.get('consumerReference') ?? undefined,
    impactPartnerId: search.get('impactPartnerId') ?? undefined,
    fundsOrganisationId: search.get('organisation') ?? undefined,
  }
  const after = search.get('after') ?? undefined
  const before = search.get('before') ?? undefined
  const [form, setForm] = useState({
    from: localDate(from),
    to: localDate(last),
    consumerReference: filter.consumerReference ?? '',
    impactPartnerId: filter.impactPartnerId ?? '',
    organisation: filter.fundsOrganisationId ?? '',
  })
  const catalogue = useCatalogue()
  const { data, error } = useLoad(
    () =>
      api<{ hasMore: boolean; data: ImpactRecord[] }>(
        'GET',
        `/funds/allocations/impact${query({ ...filter, limit: PAGE_SIZE, startingAfter: after, endingBefore: before })}`,
      ),
    [search.toString()],
  )
  const names = new Map(organisations.map((o) => [o.organisationId, o.tradingName]))
  const go = (changes: Record<string, string | undefined>) => {
    const params = new URLSearchParams()
    for (const key of FILTERS) {
      const value = key in changes ? changes[key] : (search.get(key) ?? undefined)
      if (value) params.set(key, value)
    }
    for (const key of ['after', 'before']) if (changes[key]) params.set(key, changes[key] as string)
    navigate(`/hub/allocations?${params.toString()}`)
  }
  const hasPrevious = before ? Boolean(data?.hasMore) : Boolean(after)
  const hasNext = before ? true : Boolean(data?.hasMore)
  const csv = `/hub/api/funds/allocations/impact/export${query(filter)}`
  return (
    <Page title="Allocations" intro="Every allocation and reversal, as the reconciliation records show them, oldest first.">
      <form
        class="inline-form"
        aria-label="Filters"
        onSubmit={(e) => {
          e.preventDefault()
          go({ ...form })
        }}
      >
        <Field label="From">
          {(p) => <input {...p} type="date" value={form.from} onChange={(e) => setForm({ ...form, from: e.currentTarget.value })} />}
        </Field>
        <Field label="To">
          {(p) => <input {...p} type="date" value={form.to} onChange={(e) => setForm({ ...form, to: e.currentTarget.value })} />}
        </Field>
        <Field label="Consumer reference">
          {(p) => (
            <input {...p} value={form.consumerReference} onInput={(e) => setForm({ ...form, consumerReference: e.currentTarget.value })} />
          )}
        </Field>
        <Field label="Impact partner">
          {(p) => (
            <select {...p} value={form.impactPartnerId} onChange={(e) => setForm({ ...form, impactPartnerId: e.currentTarget.value })}>
              <option value="">All partners</option>
              {[...(catalogue.data?.partners ?? new Map<string, string>())].map(([id, name]) => (
                <option key={id} value={id}>
                  {name}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Organisation">
          {(p) => (
            <select {...p} value={form.organisation} onChange={(e) => setForm({ ...form, organisation: e.currentTarget.value })}>
              <option value="">All organisations</option>
              <OrganisationOptions organisations={organisations} />
            </select>
          )}
        </Field>
        <button type="submit">Apply filters</button>
      </form>
      <FormError error={error} />
      {data && data.data.length === 0 && <Empty>No records match.</Empty>}
      {data && data.data.length > 0 && (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">Allocation records</caption>
            <thead>
              <tr>
                <th scope="col">{RECORD_COLUMN.when}</th>
                <th scope="col">{RECORD_COLUMN.record}</th>
                <th scope="col">{RECORD_COLUMN.organisation}</th>
                <th scope="col">{RECORD_COLUMN.consumer}</th>
                <th scope="col" class="number">
                  {RECORD_COLUMN.total}
                </th>
                <th scope="col" class="number">
                  {RECORD_COLUMN.tonnes}
                </th>
              </tr>
            </thead>
            <tbody>
              {data.data.map((r) => {
                const id = r.reversalId ?? r.fundsAllocationId
                return (
                  <tr key={id}>
                    <td data-label={RECORD_COLUMN.when}>{formatDate(r.fundsDateTime)}</td>
                    <th scope="row">
                      <a href={`/hub/allocations?record=${id}`} onClick={onLink}>
                        {r.reversal ? 'Reversal' : 'Allocation'} <span class="hint">{id.slice(-8)}</span>
                      </a>
                    </th>
                    <td class="break" data-label={RECORD_COLUMN.organisation}>
                      {names.get(r.fundsOrganisationId) ?? r.fundsOrganisationId}
                    </td>
                    <td data-label={RECORD_COLUMN.consumer}>{r.consumerReference ?? '—'}</td>
                    <td class="number" data-label={RECORD_COLUMN.total}>
                      {formatMoney(r.amounts.total, r.fundsCurrencyCode)}
                    </td>
                    <td class="number" data-label={RECORD_COLUMN.tonnes}>
                      {formatTonnes(r.credits.reduce((sum, c) => sum + Math.round(c.quantityTonnes * 1e6), 0) / 1e6)}
                    </td>
                  </tr>
                )
              })}
            </tbody>
          </table>
        </div>
      )}
      <nav class="actions" aria-label="Pages of records">
        <button
          type="button"
          class="secondary"
          disabled={!hasPrevious || !data}
          onClick={() => go({ before: data?.data[0] && recordId(data.data[0]) })}
        >
          Previous page
        </button>
        <button
          type="button"
          class="secondary"
          disabled={!hasNext || !data}
          onClick={() => go({ after: data?.data.at(-1) && recordId(data.data.at(-1) as ImpactRecord) })}
        >
          Next page
        </button>
        <a class="button secondary" href={csv} download="allocations.csv">
          Download CSV
        </a>
      </nav>
    </Page>
  )
}

const recordId = (r: ImpactRecord): string => r.reversalId ?? r.fundsAllocationId

function RecordDetail({ organisations, can, id }: PageProps & { id: string }) {
  const { data, error } = useLoad(() => api<{ data: ImpactRecord[] }>('GET', `/funds/allocations/${id}/records`), [id])
  const deliveries = useLoad(
    () =>
      can('webhooks:read') ? api<{ data: Delivery[] }>('GET', `/funds/allocations/${id}/webhook-deliveries`) : Promise.resolve(undefined),
    [id],
  )
  const catalogue = useCatalogue()
  const names = new Map(organisations.map((o) => [o.organisationId, o.tradingName]))
  const [record, reversal] = data?.data ?? []
  const partnerName = (partnerId: string) => catalogue.data?.partners.get(partnerId) ?? partnerId
  return (
    <Page title={record ? `Allocation ${record.fundsAllocationId.slice(-8)}` : 'Allocation'}>
      <p>
        <a href="/hub/allocations" onClick={(e) => (history.length > 1 ? (e.preventDefault(), history.back()) : onLink(e))}>
          Back to the records
        </a>
      </p>
      <FormError error={error} />
      {record && (
        <>
          <dl class="facts">
            <dt>Allocation id</dt>
            <dd class="break">
              <code>{record.fundsAllocationId}</code>
            </dd>
            <dt>Recorded</dt>
            <dd>{formatDate(record.fundsDateTime)}</dd>
            <dt>Organisation</dt>
            <dd class="break">{names.get(record.fundsOrganisationId) ?? record.fundsOrganisationId}</dd>
            <dt>Consumer reference</dt>
            <dd class="break">{record.consumerReference ?? '—'}</dd>
            <dt>Merchant</dt>
            <dd class="break">{record.merchant.name}</dd>
            <dt>Quote</dt>
            <dd class="break">
              <code>{record.quoteId}</code>
            </dd>
            <dt>Tax liability</dt>
            <dd>{record.taxLiability}</dd>
            <dt>Total</dt>
            <dd>{formatMoney(record.amounts.total, record.fundsCurrencyCode)}</dd>
          </dl>
          <h2>Credits per project</h2>
          {record.credits.length === 0 ? (
            <Empty>No credits.</Empty>
          ) : (
            <LinesTable
              caption="Credits per project"
              currencyCode={record.fundsCurrencyCode}
              lines={record.credits.map((c) => {
                const project = catalogue.data?.projects.get(c.projectId)
                return {
                  key: c.projectId,
                  name: project
                    ? `${project.name}${project.location?.countryCode ? ` (${project.location.countryCode})` : ''}`
                    : c.projectId,
                  tonnes: c.quantityTonnes,
                  amounts: c.amounts,
                }
              })}
            />
          )}
          <h2>Contributions per partner</h2>
          {record.contributions.length === 0 ? (
            <Empty>No contributions.</Empty>
          ) : (
            <LinesTable
              caption="Contributions per partner"
              currencyCode={record.fundsCurrencyCode}
              lines={record.contributions.map((c) => ({
                key: c.impactPartnerId,
                name: partnerName(c.impactPartnerId),
                amounts: c.amounts,
              }))}
            />
          )}
          <h2>Reversal</h2>
          {reversal ? (
            <dl class="facts">
              <dt>Reversal id</dt>
              <dd class="break">
                <code>{reversal.reversalId}</code>
              </dd>
              <dt>Reversed</dt>
              <dd>{formatDate(reversal.fundsDateTime)}</dd>
              <dt>Amount reversed</dt>
              <dd>{formatMoney(reversal.amounts.total, reversal.fundsCurrencyCode)}</dd>
            </dl>
          ) : (
            <p>Not reversed.</p>
          )}
          {can('webhooks:read') && (
            <>
              <h2>Webhook deliveries</h2>
              <FormError error={deliveries.error} />
              {deliveries.data && deliveries.data.data.length === 0 && <Empty>No endpoint of yours was sent these events.</Empty>}
              {deliveries.data && deliveries.data.data.length > 0 && (
                <div class="table-wrap">
                  <table>
                    <caption class="visually-hidden">Webhook deliveries</caption>
                    <thead>
                      <tr>
                        <th scope="col">{DELIVERY_COLUMN.event}</th>
                        <th scope="col">{DELIVERY_COLUMN.endpoint}</th>
                        <th scope="col">{DELIVERY_COLUMN.status}</th>
                        <th scope="col" class="number">
                          {DELIVERY_COLUMN.attempts}
                        </th>
                        <th scope="col">{DELIVERY_COLUMN.lastAnswer}</th>
                      </tr>
                    </thead>
                    <tbody>
                      {deliveries.data.data.map((d) => (
                        <tr key={d.id}>
                          <th scope="row">{d.eventType}</th>
                          <td class="break" data-label={DELIVERY_COLUMN.endpoint}>
                            {d.endpointUrl}
                          </td>
                          <td data-label={DELIVERY_COLUMN.status}>{d.status}</td>
                          <td class="number" data-label={DELIVERY_COLUMN.attempts}>
                            {d.attempts}
                          </td>
                          <td class="break" data-label={DELIVERY_COLUMN.lastAnswer}>
                            {d.lastStatusCode ?? d.lastError ?? '—'}
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              )}
            </>
          )}
        </>
      )}
    </Page>
  )
}

function LinesTable(props: {
  caption: string
  currencyCode: string
  lines: { key: string; name: string; tonnes?: number; amounts: LineAmounts }[]
}) {
  const { caption, currencyCode, lines } = props
  const withTonnes = lines.some((l) => l.tonnes !== undefined)
  const money = (amount: number) => formatMoney(amount, currencyCode)
  const rate = (r: number) => new Intl.NumberFormat(undefined, { style: 'percent', maximumFractionDigits: 3 }).format(r)
  return (
    <div class="table-wrap">
      <table>
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">{LINE_COLUMN.name}</th>
            {withTonnes && (
              <th scope="col" class="number">
                {LINE_COLUMN.tonnes}
              </th>
            )}
            <th scope="col" class="number">
              {LINE_COLUMN.impact}
            </th>
            <th scope="col" class="number">
              {LINE_COLUMN.impactTax}
            </th>
            <th scope="col" class="number">
              {LINE_COLUMN.serviceFee}
            </th>
            <th scope="col" class="number">
              {LINE_COLUMN.feeTax}
            </th>
            <th scope="col" class="number">
              {LINE_COLUMN.total}
            </th>
          </tr>
        </thead>
        <tbody>
          {lines.map((l) => (
            <tr key={l.key}>
              <th scope="row" class="break">
                {l.name}
              </th>
              {withTonnes && (
                <td class="number" data-label={LINE_COLUMN.tonnes}>
                  {formatTonnes(l.tonnes ?? 0)}
                </td>
              )}
              <td class="number" data-label={LINE_COLUMN.impact}>
                {money(l.amounts.impact)}
              </td>
              <td class="number" data-label={LINE_COLUMN.impactTax}>
                {money(l.amounts.impactTax)} <span class="hint">({rate(l.amounts.impactTaxRate)})</span>
              </td>
              <td class="number" data-label={LINE_COLUMN.serviceFee}>
                {money(l.amounts.serviceFee)}
              </td>
              <td class="number" data-label={LINE_COLUMN.feeTax}>
                {money(l.amounts.serviceFeeTax)} <span class="hint">({rate(l.amounts.serviceFeeTaxRate)})</span>
              </td>
              <td class="number" data-label={LINE_COLUMN.total}>
                {money(l.amounts.total)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}
