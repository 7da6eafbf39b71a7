// Shared pieces of the Hub's pages: labelled fields whose errors come from the API's details[].path, a form that
// shows the error it got, a "shown once" box for secrets, dates in the reader's locale. Text only: nothing a user
// typed (or the API sent) is ever parsed as HTML.
import type { ComponentChildren, JSX } from 'preact'
import { useEffect, useId, useState } from 'preact/hooks'
import { ApiError, type Organisation } from './api'

export const locale = (): string => (typeof navigator === 'undefined' ? 'en-GB' : navigator.language || 'en-GB')

export function formatDate(iso: string | null | undefined): string {
  if (!iso) return '—'
  return new Intl.DateTimeFormat(locale(), { dateStyle: 'medium', timeStyle: 'short' }).format(new Date(iso))
}

/** A form's state: busy while submitting, the API's error once it answered with one. */
export function useSubmit<T>(action: () => Promise<T>, onDone?: (result: T) => void) {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<ApiError | Error | null>(null)
  const submit = async (event?: Event) => {
    event?.preventDefault()
    if (busy) return
    setBusy(true)
    setError(null)
    try {
      const result = await action()
      onDone?.(result)
    } catch (caught) {
      setError(caught instanceof Error ? caught : new Error(String(caught)))
    } finally {
      setBusy(false)
    }
  }
  const fieldError = (path: string) => (error instanceof ApiError ? error.forField(path) : undefined)
  return { busy, error, submit, fieldError, setError }
}

/** The error of a form that no field claims (or all of it, for a general failure), announced to screen readers. */
export function FormError({ error, fields = [] }: { error: ApiError | Error | null; fields?: string[] }) {
  if (!error) return null
  const claimed = error instanceof ApiError && fields.some((path) => error.forField(path) !== undefined)
  return (
    <p class="form-error" role="alert">
      {claimed ? 'Please correct the field marked below.' : error.message}
    </p>
  )
}

interface FieldProps {
  label: string
  error?: string | undefined
  hint?: string
  children: (props: { id: string; 'aria-invalid'?: 'true'; 'aria-describedby'?: string }) => JSX.Element
}

/** A visible label, the control, its hint and the API's message for it (aria-describedby ties them together). */
export function Field({ label, error, hint, children }: FieldProps) {
  const id = useId()
  const described = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ')
  return (
    <div class={`field${error ? ' field-invalid' : ''}`}>
      <label for={id}>{label}</label>
      {hint && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {children({ id, ...(error ? { 'aria-invalid': 'true' as const } : {}), ...(described ? { 'aria-describedby': described } : {}) })}
      {error && (
        <p class="field-error" id={`${id}-error`}>
          {error}
        </p>
      )}
    </div>
  )
}

/** A secret shown once (an API key, a signing secret, a set-password link): selectable, copyable, never again. */
export function ShownOnce({ label, value, onDone }: { label: string; value: string; onDone: () => void }) {
  const id = useId()
  const [copied, setCopied] = useState(false)
  return (
    <section class="shown-once" role="status" aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`}>{label}</h3>
      <p>Copy it now: it is shown once and cannot be shown again.</p>
      <label for={id} class="visually-hidden">
        {label}
      </label>
      <input id={id} class="secret" readOnly value={value} onFocus={(e) => (e.currentTarget as HTMLInputElement).select()} />
      <div class="actions">
        <button
          type="button"
          onClick={async () => {
            await navigator.clipboard?.writeText(value).catch(() => undefined)
            setCopied(true)
          }}
        >
          {copied ? 'Copied' : 'Copy'}
        </button>
        <button type="button" class="secondary" onClick={onDone}>
          Done
        </button>
      </div>
    </section>
  )
}

export function Page({ title, intro, children }: { title: string; intro?: string; children: ComponentChildren }) {
  return (
    <section class="page" aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>
        {title}
      </h1>
      {intro && <p class="intro">{intro}</p>}
      {children}
    </section>
  )
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty">{children}</p>
}

/** A page the role may not use: said plainly (the server refuses it too). */
export function NotAllowed({ role, what }: { role: string; what: string }) {
  return (
    <Page title="Not available for your role">
      <p role="alert" class="form-error">
        Your role ({role}) does not allow {what}. Ask an admin of your organisation if you need it.
      </p>
    </Page>
  )
}

/** Loads data for a page; reload() after a change. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): { data: T | undefined; error: Error | null; reload: () => void } {
  const [state, setState] = useState<{ data: T | undefined; error: Error | null; version: number }>({
    data: undefined,
    error: null,
    version: 0,
  })
  const [version, setVersion] = useState(0)
  useEffect(() => {
    let live = true
    load().then(
      (data) => live && setState({ data, error: null, version }),
      (error: Error) => live && setState((s) => ({ ...s, error, version })),
    )
    return () => {
      live = false
    }
  }, [...deps, version])
  return { data: state.data, error: state.error, reload: () => setVersion((v) => v + 1) }
}

/** The options of an organisation picker: the user's tree in order, indented by depth. */
export function OrganisationOptions({ organisations }: { organisations: Organisation[] }) {
  return (
    <>
      {organisations.map((o) => (
        <option key={o.organisationId} value={o.organisationId}>
          {`${'\u00a0\u00a0'.repeat(o.depth)}${o.tradingName}${o.status.value === 'active' ? '' : ' (deactivated)'}`}
        </option>
      ))}
    </>
  )
}
