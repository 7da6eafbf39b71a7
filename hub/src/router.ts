// Paths under /hub, moved between with the History API (the server answers every /hub path with the same page). A
// page's state that a link should reproduce (a dashboard's window, a list's filters) lives in the query string.
import { useEffect, useState } from 'preact/hooks'

const listeners = new Set<() => void>()

/** Moves to a path under /hub, with its query string if it has one. */
export function navigate(target: string, options: { replace?: boolean } = {}): void {
  if (target === location.pathname + location.search) return
  if (options.replace) history.replaceState(null, '', target)
  else history.pushState(null, '', target)
  for (const listener of listeners) listener()
}

function useLocation<T>(read: () => T): T {
  const [value, setValue] = useState(read)
  useEffect(() => {
    const update = () => setValue(read)
    listeners.add(update)
    addEventListener('popstate', update)
    return () => {
      listeners.delete(update)
      removeEventListener('popstate', update)
    }
  }, [])
  return value
}

export const usePath = (): string => useLocation(() => location.pathname)

/** The query string's parameters, read again whenever the Hub moves. */
export const useSearch = (): URLSearchParams => new URLSearchParams(useLocation(() => location.search))

/** A link that moves within the Hub without reloading (a plain link for a new tab or a modified click). */
export function onLink(event: MouseEvent): void {
  const anchor = event.currentTarget as HTMLAnchorElement
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
  event.preventDefault()
  navigate(anchor.pathname + anchor.search)
}
