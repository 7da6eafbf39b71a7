// @vitest-environment happy-dom
// The takeover: a modal <dialog> that takes focus, keeps it, closes on Escape and gives focus back.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { fixture, mountWidget } from './helpers.js'

afterEach(() => {
  document.body.replaceChildren()
  vi.unstubAllGlobals()
})

const OPTIONS = { contributionAmounts: ['1.00', '2.00'] }
const TAKEOVER_BODY = () => ({ ...fixture('carbon-en-GB'), sdkVariant: 'takeover' })

/** A button on the page that had focus before the takeover opened (the opener). */
function opener(): HTMLButtonElement {
  const button = document.createElement('button')
  button.textContent = 'Place order'
  document.body.append(button)
  button.focus()
  return button
}

const press = (target: Element | null, key: string, shiftKey = false) =>
  target?.dispatchEvent(new KeyboardEvent('keydown', { key, shiftKey, bubbles: true, composed: true, cancelable: true }))

describe('takeover', () => {
  it('opens a labelled modal dialog once loaded and moves focus to its title', async () => {
    const button = opener()
    const w = await mountWidget({ type: 'takeover', body: TAKEOVER_BODY(), options: OPTIONS })
    const dialog = w.shadow.querySelector('dialog')
    expect(dialog?.open).toBe(true)
    expect(dialog?.getAttribute('part')).toBe('dialog')
    expect(dialog?.getAttribute('aria-labelledby')).toBe('canopy-title')
    expect(w.shadow.getElementById('canopy-title')?.textContent).toBe("Your order's carbon footprint")
    expect(w.shadow.activeElement).toBe(w.part('title'))
    expect(document.activeElement).not.toBe(button)
    expect(w.part('close')?.getAttribute('aria-label')).toBe('Close')
  })

  it('traps Tab and Shift+Tab inside the dialog', async () => {
    opener()
    const w = await mountWidget({ type: 'takeover', body: TAKEOVER_BODY(), options: OPTIONS })
    const buttons = [...(w.shadow.querySelector('dialog')?.querySelectorAll('button') ?? [])]
    const first = buttons[0]
    const last = buttons[buttons.length - 1]
    expect(first).toBe(w.part('close'))
    expect(last).toBe(w.part('dismiss'))
    // From the title, Shift+Tab wraps to the last control.
    press(w.part('title'), 'Tab', true)
    expect(w.shadow.activeElement).toBe(last)
    press(last ?? null, 'Tab')
    expect(w.shadow.activeElement).toBe(first)
    press(first ?? null, 'Tab', true)
    expect(w.shadow.activeElement).toBe(last)
  })

  it('closes on Escape: a close event (reason escape) and focus back on the opener', async () => {
    const button = opener()
    const w = await mountWidget({ type: 'takeover', body: TAKEOVER_BODY(), options: OPTIONS })
    press(w.part('title'), 'Escape')
    expect(w.shadow.querySelector('dialog')?.open).toBe(false)
    expect(w.events.close).toEqual([{ elementType: 'takeover', reason: 'escape' }])
    expect(document.activeElement).toBe(button)
    // The dialog's own cancel event (Escape in a browser) does not close twice.
    w.shadow.querySelector('dialog')?.dispatchEvent(new Event('cancel', { cancelable: true }))
    expect(w.events.close).toHaveLength(1)
  })

  it('closes with the close button and with "No thanks" (reason dismiss)', async () => {
    opener()
    const w = await mountWidget({ type: 'takeover', body: TAKEOVER_BODY(), options: OPTIONS })
    w.part('close')?.click()
    expect(w.events.close).toEqual([{ elementType: 'takeover', reason: 'dismiss' }])
    // mount() again reopens it.
    w.element.unmount()
    w.element.mount(w.container)
    expect(w.shadow.querySelector('dialog')?.open).toBe(true)
    w.part('dismiss')?.click()
    expect(w.events.close).toHaveLength(2)
    expect(w.events.change).toEqual([])
  })

  it('confirm emits the choice, then closes (reason confirm) and restores focus', async () => {
    const button = opener()
    const w = await mountWidget({ type: 'takeover', body: TAKEOVER_BODY(), options: OPTIONS })
    w.parts('option')[1]?.click()
    w.part('confirm')?.click()
    expect(w.events.confirm).toEqual([expect.objectContaining({ elementType: 'takeover', amount: '2.00', amountMinor: 200 })])
    expect(w.events.close).toEqual([{ elementType: 'takeover', reason: 'confirm' }])
    expect(document.activeElement).toBe(button)
  })

  it('destroy() while open closes it and restores focus, without a close event', async () => {
    const button = opener()
    const w = await mountWidget({ type: 'takeover', body: TAKEOVER_BODY(), options: OPTIONS })
    w.element.destroy()
    expect(document.activeElement).toBe(button)
    expect(w.events.close).toEqual([])
    expect(document.querySelector('canopy-impact')).toBeNull()
  })

  it('does not open when the session fails to load', async () => {
    const w = await mountWidget({ type: 'takeover', status: 410, body: { error: 'expired', code: 'SESSION_EXPIRED', requestId: 'r' } })
    expect(w.shadow.querySelector('dialog')).toBeNull()
    expect(w.events.loaderror[0]?.error.code).toBe('session_expired')
  })

  it('keeps the dialog open and focus in place across update()', async () => {
    opener()
    const w = await mountWidget({ type: 'takeover', body: TAKEOVER_BODY(), options: OPTIONS })
    w.parts('option')[0]?.focus()
    w.element.update({ contributionAmounts: ['1.00', '3.00'] })
    expect(w.shadow.querySelector('dialog')?.open).toBe(true)
    expect(w.shadow.activeElement).toBe(w.parts('option')[0])
  })
})
