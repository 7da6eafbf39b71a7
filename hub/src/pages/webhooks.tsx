// Webhook endpoints of the selected organisation: create (the signing secret is shown once), enable or disable,
// send a test event, rotate the secret, and the deliveries with each attempt, which can be retried.
import { useState } from 'preact/hooks'
import { api, query, type WebhookDelivery, type WebhookEndpoint } from '../api'
import { Empty, Field, FormError, formatDate, Page, ShownOnce, useLoad, useSubmit } from '../ui'
import type { PageProps } from './types'

// The column headers of the deliveries table, written once: each <th scope="col"> shows one and each data cell repeats it
// in data-label, which the narrow layout (hub/src/styles.css) shows before the value, the thead being hidden.
const COLUMN = {
  event: 'Event',
  status: 'Status',
  attempts: 'Attempts',
  created: 'Created',
  actions: 'Actions',
} as const

function RetryButton({ delivery, endpoint, onDone }: { delivery: WebhookDelivery; endpoint: WebhookEndpoint; onDone: () => void }) {
  const retry = useSubmit(() => api('POST', `/webhook-endpoints/deliveries/${delivery.id}/retry`), onDone)
  return (
    <>
      <button type="button" class="secondary" disabled={endpoint.status !== 'enabled' || retry.busy} onClick={() => retry.submit()}>
        Retry {delivery.eventType}
      </button>
      <FormError error={retry.error} />
    </>
  )
}

function Deliveries({ endpoint, canWrite }: { endpoint: WebhookEndpoint; canWrite: boolean }) {
  const { data, error, reload } = useLoad(
    () => api<{ data: WebhookDelivery[] }>('GET', `/webhook-endpoints/${endpoint.id}/deliveries`),
    [endpoint.id],
  )
  return (
    <div class="deliveries">
      <div class="actions">
        <h4>Deliveries</h4>
        <button type="button" class="secondary" onClick={reload}>
          Refresh deliveries
        </button>
      </div>
      <FormError error={error} />
      {data && data.data.length === 0 && <Empty>No deliveries yet.</Empty>}
      {data && data.data.length > 0 && (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">Deliveries to {endpoint.url}</caption>
            <thead>
              <tr>
                <th scope="col">{COLUMN.event}</th>
                <th scope="col">{COLUMN.status}</th>
                <th scope="col">{COLUMN.attempts}</th>
                <th scope="col">{COLUMN.created}</th>
                {canWrite && <th scope="col">{COLUMN.actions}</th>}
              </tr>
            </thead>
            <tbody>
              {data.data.map((delivery) => (
                <tr key={delivery.id}>
                  <th scope="row">{delivery.eventType}</th>
                  <td data-label={COLUMN.status}>{delivery.status}</td>
                  <td class="stacked" data-label={COLUMN.attempts}>
                    {delivery.attempts.length === 0 ? (
                      'None yet'
                    ) : (
                      <ul class="attempts">
                        {delivery.attempts.map((attempt) => (
                          <li key={attempt.id}>
                            {formatDate(attempt.attemptedAt)}: {attempt.statusCode ?? attempt.error ?? 'no answer'} ({attempt.durationMs}{' '}
                            ms)
                          </li>
                        ))}
                      </ul>
                    )}
                  </td>
                  <td data-label={COLUMN.created}>{formatDate(delivery.createdAt)}</td>
                  {canWrite && (
                    <td class="stacked" data-label={COLUMN.actions}>
                      <RetryButton delivery={delivery} endpoint={endpoint} onDone={reload} />
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  )
}

function Endpoint({
  endpoint,
  canWrite,
  onChanged,
  onSecret,
}: {
  endpoint: WebhookEndpoint
  canWrite: boolean
  onChanged: () => void
  onSecret: (secret: string) => void
}) {
  const [open, setOpen] = useState(false)
  const [version, setVersion] = useState(0)
  const toggle = useSubmit(
    () => api('PATCH', `/webhook-endpoints/${endpoint.id}`, { status: endpoint.status === 'enabled' ? 'disabled' : 'enabled' }),
    onChanged,
  )
  const test = useSubmit(
    () => api('POST', `/webhook-endpoints/${endpoint.id}/test`),
    () => {
      setOpen(true)
      setVersion((v) => v + 1)
    },
  )
  const rotate = useSubmit(
    () => api<{ secret: string }>('POST', `/webhook-endpoints/${endpoint.id}/rotate-secret`, {}),
    (r) => onSecret(r.secret),
  )
  return (
    <li class="card">
      <h3 class="break">{endpoint.url}</h3>
      <p>
        <span class={`badge badge-${endpoint.status}`}>{endpoint.status === 'enabled' ? 'Enabled' : 'Disabled'}</span>{' '}
        {endpoint.description && <span class="break">{endpoint.description}</span>}
      </p>
      {endpoint.disabledReason && <p class="hint">{endpoint.disabledReason}</p>}
      <p class="hint">Events: {endpoint.enabledEvents.join(', ')}</p>
      <div class="actions">
        {canWrite && (
          <>
            <button type="button" class="secondary" onClick={() => toggle.submit()} disabled={toggle.busy}>
              {endpoint.status === 'enabled' ? 'Disable' : 'Enable'} endpoint
            </button>
            <button type="button" class="secondary" onClick={() => test.submit()} disabled={test.busy || endpoint.status !== 'enabled'}>
              Send test event
            </button>
            <button type="button" class="secondary" onClick={() => rotate.submit()} disabled={rotate.busy}>
              Rotate signing secret
            </button>
          </>
        )}
        <button type="button" class="secondary" aria-expanded={open} onClick={() => setOpen(!open)}>
          {open ? 'Hide deliveries' : 'Show deliveries'}
        </button>
      </div>
      <FormError error={toggle.error ?? test.error ?? rotate.error} />
      {open && <Deliveries key={version} endpoint={endpoint} canWrite={canWrite} />}
    </li>
  )
}

export function Webhooks({ organisation, can }: PageProps) {
  const { data, error, reload } = useLoad(
    () => api<{ data: WebhookEndpoint[] }>('GET', `/webhook-endpoints${query({ organisationId: organisation.organisationId })}`),
    [organisation.organisationId],
  )
  const [url, setUrl] = useState('')
  const [description, setDescription] = useState('')
  const [secret, setSecret] = useState<{ label: string; value: string } | null>(null)
  const canWrite = can('webhooks:write')
  const create = useSubmit(
    () =>
      api<{ secret: string }>('POST', '/webhook-endpoints', {
        organisationId: organisation.organisationId,
        url,
        ...(description ? { description } : {}),
      }),
    (result) => {
      setSecret({ label: 'Signing secret of the new endpoint', value: result.secret })
      setUrl('')
      setDescription('')
      reload()
    },
  )
  return (
    <Page
      title="Webhooks"
      intro={`Endpoints that receive ${organisation.tradingName}'s events (and its descendants'), signed with their secret.`}
    >
      {secret && <ShownOnce label={secret.label} value={secret.value} onDone={() => setSecret(null)} />}
      {canWrite && (
        <form class="card" onSubmit={create.submit} noValidate>
          <h2>Add an endpoint</h2>
          <FormError error={create.error} fields={['/url', '/description']} />
          <Field label="Endpoint URL" hint="https://…, reachable from the internet." error={create.fieldError('/url')}>
            {(props) => <input {...props} type="url" value={url} onInput={(e) => setUrl(e.currentTarget.value)} required />}
          </Field>
          <Field label="Description" error={create.fieldError('/description')}>
            {(props) => <input {...props} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />}
          </Field>
          <div class="actions">
            <button type="submit" disabled={create.busy}>
              Add endpoint
            </button>
          </div>
        </form>
      )}
      <FormError error={error} />
      {data && data.data.length === 0 && <Empty>No webhook endpoints yet.</Empty>}
      {data && data.data.length > 0 && (
        <ul class="cards">
          {data.data.map((endpoint) => (
            <Endpoint
              key={endpoint.id}
              endpoint={endpoint}
              canWrite={canWrite}
              onChanged={reload}
              onSecret={(value) => setSecret({ label: `New signing secret of ${endpoint.url}`, value })}
            />
          ))}
        </ul>
      )}
    </Page>
  )
}
