// Organisations below the selected one: create a child (it inherits the parent's pricing), deactivate it (its keys
// and users stop) or reactivate it.
import { useState } from 'preact/hooks'
import { api, type Organisation } from '../api'
import { Empty, Field, FormError, Page, useSubmit } from '../ui'
import type { PageProps } from './types'

// The column headers of this page's table, written once: each <th scope="col"> shows one and each data cell repeats it
// in data-label, which the narrow layout (hub/src/styles.css) shows before the value, the thead being hidden.
const COLUMN = {
  name: 'Name',
  country: 'Country',
  currency: 'Currency',
  status: 'Status',
  actions: 'Actions',
} as const

function Row({ organisation, depth, onChanged }: { organisation: Organisation; depth: number; onChanged: () => void }) {
  const active = organisation.status.value === 'active'
  const action = useSubmit(
    () => api('POST', `/organisations/${organisation.organisationId}/${active ? 'deactivate' : 'reactivate'}`),
    onChanged,
  )
  return (
    <tr>
      <th scope="row" class="break">
        <span class={`indent indent-${Math.min(depth, 4)}`}>{organisation.tradingName}</span>
      </th>
      <td data-label={COLUMN.country}>{organisation.address.countryCode}</td>
      <td data-label={COLUMN.currency}>{organisation.currencyCode}</td>
      <td data-label={COLUMN.status}>{active ? 'Active' : 'Deactivated'}</td>
      <td class="stacked" data-label={COLUMN.actions}>
        <button
          type="button"
          class={active ? 'danger' : 'secondary'}
          onClick={() =>
            (active ? confirm(`Deactivate ${organisation.tradingName}? Its API keys and its users stop at once.`) : true) && action.submit()
          }
          disabled={action.busy}
        >
          {active ? 'Deactivate' : 'Reactivate'} {organisation.tradingName}
        </button>
        <FormError error={action.error} />
      </td>
    </tr>
  )
}

export function Organisations({ organisation, organisations, reloadOrganisations }: PageProps) {
  const below = (() => {
    const ids = new Set([organisation.organisationId])
    return organisations.filter((o) => {
      if (o.parentOrganisationId && ids.has(o.parentOrganisationId)) {
        ids.add(o.organisationId)
        return true
      }
      return false
    })
  })()
  const [form, setForm] = useState({
    tradingName: '',
    legalName: '',
    line1: '',
    city: '',
    postalCode: '',
    countryCode: organisation.address.countryCode,
    currencyCode: organisation.currencyCode,
  })
  const set = (name: keyof typeof form) => (e: Event) => setForm({ ...form, [name]: (e.currentTarget as HTMLInputElement).value })
  const create = useSubmit(
    () =>
      api('POST', '/organisations', {
        parentOrganisationId: organisation.organisationId,
        tradingName: form.tradingName,
        legalName: form.legalName || form.tradingName,
        address: { line1: form.line1, city: form.city, postalCode: form.postalCode, countryCode: form.countryCode.toUpperCase() },
        currencyCode: form.currencyCode.toUpperCase(),
      }),
    () => {
      setForm({ ...form, tradingName: '', legalName: '', line1: '', city: '', postalCode: '' })
      reloadOrganisations()
    },
  )
  const fields = ['/tradingName', '/legalName', '/address', '/currencyCode']
  return (
    <Page
      title="Organisations"
      intro={`Organisations below ${organisation.tradingName}. A child inherits its parent's service fee, tax liability, allowed origins and IP allowlist.`}
    >
      {below.length === 0 ? (
        <Empty>No organisation below this one yet.</Empty>
      ) : (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">Organisations below {organisation.tradingName}</caption>
            <thead>
              <tr>
                <th scope="col">{COLUMN.name}</th>
                <th scope="col">{COLUMN.country}</th>
                <th scope="col">{COLUMN.currency}</th>
                <th scope="col">{COLUMN.status}</th>
                <th scope="col">{COLUMN.actions}</th>
              </tr>
            </thead>
            <tbody>
              {below.map((o) => (
                <Row key={o.organisationId} organisation={o} depth={o.depth - organisation.depth - 1} onChanged={reloadOrganisations} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      <form class="card" onSubmit={create.submit} noValidate>
        <h2>Add a child organisation</h2>
        <FormError error={create.error} fields={fields} />
        <div class="grid">
          <Field label="Trading name" error={create.fieldError('/tradingName')}>
            {(props) => <input {...props} value={form.tradingName} onInput={set('tradingName')} required />}
          </Field>
          <Field label="Legal name" hint="Default: the trading name." error={create.fieldError('/legalName')}>
            {(props) => <input {...props} value={form.legalName} onInput={set('legalName')} />}
          </Field>
          <Field label="Address" error={create.fieldError('/address/line1')}>
            {(props) => <input {...props} autoComplete="address-line1" value={form.line1} onInput={set('line1')} required />}
          </Field>
          <Field label="City" error={create.fieldError('/address/city')}>
            {(props) => <input {...props} autoComplete="address-level2" value={form.city} onInput={set('city')} required />}
          </Field>
          <Field label="Postal code" error={create.fieldError('/address/postalCode')}>
            {(props) => <input {...props} autoComplete="postal-code" value={form.postalCode} onInput={set('postalCode')} required />}
          </Field>
          <Field label="Country (ISO alpha-3)" error={create.fieldError('/address/countryCode')}>
            {(props) => <input {...props} value={form.countryCode} maxLength={3} onInput={set('countryCode')} required />}
          </Field>
          <Field label="Currency (ISO 4217)" error={create.fieldError('/currencyCode')}>
            {(props) => <input {...props} value={form.currencyCode} maxLength={3} onInput={set('currencyCode')} required />}
          </Field>
        </div>
        <div class="actions">
          <button type="submit" disabled={create.busy}>
            Add organisation
          </button>
        </div>
      </form>
    </Page>
  )
}
