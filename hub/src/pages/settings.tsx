// The selected organisation's settings that developers own: allowed origins (the pages that may show its sessions
// with the browser SDK) and the IP allowlist of its API keys (addresses, ranges or CIDR blocks, with a switch).
import { useState } from 'preact/hooks'
import { api, type Organisation } from '../api'
import { Field, FormError, Page, useSubmit } from '../ui'
import type { PageProps } from './types'

const lines = (text: string): string[] =>
  text
    .split(/[\n,]/)
    .map((line) => line.trim())
    .filter(Boolean)

/** The entries' errors, by line: the API names /…/entries/3 or /allowedOrigins/3. */
function entryErrors(error: Error | null, prefix: string, entries: string[]): string[] {
  const details = (error as { body?: { details?: { path: string; message: string }[] } } | null)?.body?.details ?? []
  return details
    .filter((d) => d.path.startsWith(`${prefix}/`))
    .map((d) => {
      const index = Number(d.path.slice(prefix.length + 1))
      return `Line ${index + 1} (${entries[index] ?? ''}): ${d.message}`
    })
}

export function AllowedOrigins({ organisation, reloadOrganisations }: PageProps) {
  const [inherit, setInherit] = useState(organisation.allowedOrigins === null)
  const [text, setText] = useState((organisation.allowedOrigins ?? []).join('\n'))
  const [saved, setSaved] = useState(false)
  const form = useSubmit(
    () => api<Organisation>('PATCH', `/organisations/${organisation.organisationId}`, { allowedOrigins: inherit ? null : lines(text) }),
    () => {
      setSaved(true)
      reloadOrganisations()
    },
  )
  const errors = entryErrors(form.error, '/allowedOrigins', lines(text))
  return (
    <Page
      title="Allowed origins"
      intro={`Web pages on these origins may show ${organisation.tradingName}'s sessions with the browser SDK.`}
    >
      <form
        class="card"
        onSubmit={(e) => {
          setSaved(false)
          void form.submit(e)
        }}
        noValidate
      >
        <FormError error={form.error} fields={['/allowedOrigins']} />
        <div class="field checkbox">
          <input id="origins-inherit" type="checkbox" checked={inherit} onChange={(e) => setInherit(e.currentTarget.checked)} />
          <label for="origins-inherit">Use the list of the organisation above</label>
        </div>
        <Field
          label="Origins, one per line"
          hint="scheme://host[:port], e.g. https://shop.example — at most 20."
          error={errors.join(' ') || form.fieldError('/allowedOrigins')}
        >
          {(props) => <textarea {...props} rows={6} value={text} disabled={inherit} onInput={(e) => setText(e.currentTarget.value)} />}
        </Field>
        <div class="actions">
          <button type="submit" disabled={form.busy}>
            Save allowed origins
          </button>
          {saved && <span role="status">Saved.</span>}
        </div>
      </form>
    </Page>
  )
}

export function IpAllowlist({ organisation, reloadOrganisations }: PageProps) {
  const own = organisation.ipAllowlist
  const [inherit, setInherit] = useState(own === null)
  const [enabled, setEnabled] = useState(own?.enabled ?? false)
  const [text, setText] = useState((own?.entries ?? []).join('\n'))
  const [saved, setSaved] = useState(false)
  const form = useSubmit(
    () =>
      api<Organisation>('PATCH', `/organisations/${organisation.organisationId}`, {
        ipAllowlist: inherit ? null : { enabled, entries: lines(text) },
      }),
    (result) => {
      setSaved(true)
      setText((result.ipAllowlist?.entries ?? []).join('\n'))
      reloadOrganisations()
    },
  )
  const errors = entryErrors(form.error, '/ipAllowlist/entries', lines(text))
  return (
    <Page
      title="IP allowlist"
      intro={`When it is on, ${organisation.tradingName}'s API keys (and those of organisations below it without a list of their own) are refused from any other address. The Hub itself is not affected.`}
    >
      <form
        class="card"
        onSubmit={(e) => {
          setSaved(false)
          void form.submit(e)
        }}
        noValidate
      >
        <FormError error={form.error} fields={['/ipAllowlist']} />
        <div class="field checkbox">
          <input id="ip-inherit" type="checkbox" checked={inherit} onChange={(e) => setInherit(e.currentTarget.checked)} />
          <label for="ip-inherit">Use the list of the organisation above</label>
        </div>
        <div class="field checkbox">
          <input
            id="ip-enabled"
            type="checkbox"
            role="switch"
            checked={enabled}
            disabled={inherit}
            onChange={(e) => setEnabled(e.currentTarget.checked)}
          />
          <label for="ip-enabled">Allowlist on</label>
        </div>
        <Field
          label="Allowed addresses, one per line"
          hint="An address (203.0.113.7), a CIDR block (10.0.0.0/8) or a range (192.0.2.10-192.0.2.50); IPv4 or IPv6, at most 100."
          error={errors.join(' ') || form.fieldError('/ipAllowlist')}
        >
          {(props) => <textarea {...props} rows={6} value={text} disabled={inherit} onInput={(e) => setText(e.currentTarget.value)} />}
        </Field>
        {!inherit && enabled && lines(text).length === 0 && (
          <p class="notice" role="status">
            With the list on and no entry, every API key of this organisation is refused.
          </p>
        )}
        <div class="actions">
          <button type="submit" disabled={form.busy}>
            Save IP allowlist
          </button>
          {saved && <span role="status">Saved.</span>}
        </div>
      </form>
    </Page>
  )
}
