// Paths under /hub, moved between with the History API (the server answers every /hub path with the same page).
import { useEffect, useState } from 'preact/hooks'

const listeners = new Set<() => void>()

export function navigate(path: string): void {
  if (path === location.pathname) return
  history.pushState(null, '', path)
  for (const listener of listeners) listener()
}

export function usePath(): string {
  const [path, setPath] = useState(location.pathname)
  useEffect(() => {
    const update = () => setPath(location.pathname)
    listeners.add(update)
    addEventListener('popstate', update)
    return () => {
      listeners.delete(update)
      removeEventListener('popstate', update)
    }
  }, [])
  return path
}

/** A link that moves within the Hub without reloading (a plain link for a new tab or a modified click). */
export function onLink(event: MouseEvent): void {
  const anchor = event.currentTarget as HTMLAnchorElement
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
  event.preventDefault()
  navigate(anchor.pathname)
}
