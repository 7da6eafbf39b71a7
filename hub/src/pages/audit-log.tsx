// The audit log of the selected organisation: who changed what, from where, newest first, filtered by type and by
// actor, in keyset pages.
import { useState } from 'preact/hooks'
import { api, query, type AuditEvent } from '../api'
import { Empty, Field, FormError, formatDate, Page, useLoad } from '../ui'
import type { PageProps } from './types'

const TYPES = [
  'api_key.created',
  'api_key.rotated',
  'api_key.revoked',
  'webhook_endpoint.created',
  'webhook_endpoint.updated',
  'webhook_endpoint.secret_rotated',
  'organisation.created',
  'organisation.updated',
  'organisation.deactivated',
  'organisation.reactivated',
  'user.invited',
  'user.role_changed',
  'user.removed',
  'user.signed_in',
  'user.sign_in_failed',
  'user.second_factor_enabled',
]

// The column headers of this page's table, written once: each <th scope="col"> shows one and each data cell repeats it
// in data-label, which the narrow layout (hub/src/styles.css) shows before the value, the thead being hidden.
const COLUMN = {
  when: 'When',
  what: 'What',
  who: 'Who',
  from: 'From',
  changes: 'Changes',
} as const

export function AuditLog({ organisation }: PageProps) {
  const [type, setType] = useState('')
  const [actorId, setActorId] = useState('')
  const [cursors, setCursors] = useState<string[]>([])
  const after = cursors.at(-1)
  const { data, error } = useLoad(
    () =>
      api<{ hasMore: boolean; data: AuditEvent[] }>(
        'GET',
        `/audit-events${query({ organisationId: organisation.organisationId, type, actorId, limit: 20, startingAfter: after })}`,
      ),
    [organisation.organisationId, type, actorId, after],
  )
  const actors = new Map((data?.data ?? []).filter((e) => e.actor.id).map((e) => [e.actor.id as string, e.actor.label]))
  return (
    <Page
      title="Audit log"
      intro={`Changes to ${organisation.tradingName}'s keys, webhooks, settings, organisations and users, and sign-ins. Nothing here can be changed or deleted.`}
    >
      <form class="inline-form" onSubmit={(e) => e.preventDefault()}>
        <Field label="Type">
          {(props) => (
            <select
              {...props}
              value={type}
              onChange={(e) => {
                setType(e.currentTarget.value)
                setCursors([])
              }}
            >
              <option value="">All types</option>
              {TYPES.map((t) => (
                <option key={t} value={t}>
                  {t}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Actor">
          {(props) => (
            <select
              {...props}
              value={actorId}
              onChange={(e) => {
                setActorId(e.currentTarget.value)
                setCursors([])
              }}
            >
              <option value="">Everyone</option>
              {[...actors].map(([id, label]) => (
                <option key={id} value={id}>
                  {label}
                </option>
              ))}
            </select>
          )}
        </Field>
      </form>
      <FormError error={error} />
      {data && data.data.length === 0 && <Empty>No events match.</Empty>}
      {data && data.data.length > 0 && (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">Audit events</caption>
            <thead>
              <tr>
                <th scope="col">{COLUMN.when}</th>
                <th scope="col">{COLUMN.what}</th>
                <th scope="col">{COLUMN.who}</th>
                <th scope="col">{COLUMN.from}</th>
                <th scope="col">{COLUMN.changes}</th>
              </tr>
            </thead>
            <tbody>
              {data.data.map((event) => (
                <tr key={event.id}>
                  <td data-label={COLUMN.when}>{formatDate(event.createdAt)}</td>
                  <th scope="row">{event.type}</th>
                  <td class="break" data-label={COLUMN.who}>
                    {event.actor.label} <span class="hint">({event.actor.type})</span>
                  </td>
                  <td data-label={COLUMN.from}>{event.ip ?? '—'}</td>
                  <td class="break stacked" data-label={COLUMN.changes}>
                    <code class="changes">{JSON.stringify(event.changes)}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <nav class="actions" aria-label="Pages of the audit log">
        <button type="button" class="secondary" disabled={cursors.length === 0} onClick={() => setCursors(cursors.slice(0, -1))}>
          Newer events
        </button>
        <button
          type="button"
          class="secondary"
          disabled={!data?.hasMore}
          onClick={() => data && setCursors([...cursors, data.data.at(-1)?.id ?? ''])}
        >
          Older events
        </button>
      </nav>
    </Page>
  )
}
