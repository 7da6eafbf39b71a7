// API keys of the selected organisation: create (the key is shown once), rotate with a grace period of 12, 24, 36 or
// 72 hours (or none), revoke, and when each was last used. Developers see the list; admins change it.
import { useState } from 'preact/hooks'
import { api, query, type ApiKey } from '../api'
import { Empty, Field, FormError, formatDate, Page, ShownOnce, useLoad, useSubmit } from '../ui'
import type { PageProps } from './types'

const GRACE_HOURS = [0, 12, 24, 36, 72]

// The column headers of this page's table, written once: each <th scope="col"> shows one and each data cell repeats it
// in data-label, which the narrow layout (hub/src/styles.css) shows before the value, the thead being hidden.
const COLUMN = {
  key: 'Key',
  mode: 'Mode',
  state: 'State',
  created: 'Created',
  lastUsed: 'Last used',
  actions: 'Actions',
} as const

const stateOf = (key: ApiKey): string => {
  if (key.revokedAt) return 'Revoked'
  if (key.expiresAt && new Date(key.expiresAt) <= new Date()) return 'Expired'
  if (key.expiresAt) return `Rotated: works until ${formatDate(key.expiresAt)}`
  return 'Active'
}

function KeyRow({
  apiKey,
  canWrite,
  onChanged,
  onIssued,
}: {
  apiKey: ApiKey
  canWrite: boolean
  onChanged: () => void
  onIssued: (key: string) => void
}) {
  const [grace, setGrace] = useState('24')
  const active = !apiKey.revokedAt && !(apiKey.expiresAt && new Date(apiKey.expiresAt) <= new Date())
  const rotate = useSubmit(
    () => api<{ apiKey: string }>('POST', `/api-keys/${apiKey.id}/rotate`, { expireOldInSeconds: Number(grace) * 3600 }),
    (result) => {
      onIssued(result.apiKey)
      onChanged()
    },
  )
  const revoke = useSubmit(() => api('POST', `/api-keys/${apiKey.id}/revoke`), onChanged)
  return (
    <tr>
      <th scope="row">
        <code>{apiKey.prefix}…</code>
      </th>
      <td data-label={COLUMN.mode}>{apiKey.mode}</td>
      <td data-label={COLUMN.state}>{stateOf(apiKey)}</td>
      <td data-label={COLUMN.created}>{formatDate(apiKey.createdAt)}</td>
      <td data-label={COLUMN.lastUsed}>{apiKey.lastUsedAt ? formatDate(apiKey.lastUsedAt) : 'Never'}</td>
      {canWrite && (
        <td class="stacked" data-label={COLUMN.actions}>
          {active && !apiKey.replacedByKeyId && (
            <div class="row-actions">
              <Field label={`Grace period for ${apiKey.prefix}`}>
                {(props) => (
                  <select {...props} value={grace} onChange={(e) => setGrace(e.currentTarget.value)}>
                    {GRACE_HOURS.map((hours) => (
                      <option key={hours} value={String(hours)}>
                        {hours === 0 ? 'Stop the old key now' : `Old key works ${hours} h more`}
                      </option>
                    ))}
                  </select>
                )}
              </Field>
              <button type="button" onClick={() => rotate.submit()} disabled={rotate.busy}>
                Rotate {apiKey.prefix}
              </button>
              <button
                type="button"
                class="danger"
                onClick={() => confirm(`Revoke ${apiKey.prefix} now? Requests with it fail at once.`) && revoke.submit()}
                disabled={revoke.busy}
              >
                Revoke {apiKey.prefix}
              </button>
            </div>
          )}
          <FormError error={rotate.error ?? revoke.error} />
        </td>
      )}
    </tr>
  )
}

export function ApiKeys({ organisation, can }: PageProps) {
  const { data, error, reload } = useLoad(
    () => api<{ keys: ApiKey[] }>('GET', `/api-keys${query({ organisationId: organisation.organisationId })}`),
    [organisation.organisationId],
  )
  const [mode, setMode] = useState<'live' | 'test'>('live')
  const [issued, setIssued] = useState<string | null>(null)
  const canWrite = can('apiKeys:write')
  const create = useSubmit(
    () => api<{ apiKey: string }>('POST', '/api-keys', { organisationId: organisation.organisationId, mode }),
    (result) => {
      setIssued(result.apiKey)
      reload()
    },
  )
  return (
    <Page
      title="API keys"
      intro={`Keys of ${organisation.tradingName}. A key acts on its organisation and everything below it; it is shown once, when it is created or rotated.`}
    >
      {issued && <ShownOnce label="Your new API key" value={issued} onDone={() => setIssued(null)} />}
      {canWrite && (
        <form class="inline-form" onSubmit={create.submit} noValidate>
          <Field label="Mode" error={create.fieldError('/mode')}>
            {(props) => (
              <select {...props} value={mode} onChange={(e) => setMode(e.currentTarget.value as 'live' | 'test')}>
                <option value="live">live</option>
                <option value="test">test</option>
              </select>
            )}
          </Field>
          <button type="submit" disabled={create.busy}>
            Create API key
          </button>
          <FormError error={create.error} fields={['/mode']} />
        </form>
      )}
      <FormError error={error} />
      {data && data.keys.length === 0 && <Empty>This organisation has no API keys yet.</Empty>}
      {data && data.keys.length > 0 && (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">API keys</caption>
            <thead>
              <tr>
                <th scope="col">{COLUMN.key}</th>
                <th scope="col">{COLUMN.mode}</th>
                <th scope="col">{COLUMN.state}</th>
                <th scope="col">{COLUMN.created}</th>
                <th scope="col">{COLUMN.lastUsed}</th>
                {canWrite && <th scope="col">{COLUMN.actions}</th>}
              </tr>
            </thead>
            <tbody>
              {[...data.keys].reverse().map((key) => (
                <KeyRow key={key.id} apiKey={key} canWrite={canWrite} onChanged={reload} onIssued={setIssued} />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Page>
  )
}
