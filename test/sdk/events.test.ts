// @vitest-environment happy-dom
// change / confirm payloads, once per toggle; update(); off(); the composed DOM events.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { fixture, mountWidget } from './helpers.js'

afterEach(() => {
  document.body.replaceChildren()
  vi.unstubAllGlobals()
  vi.restoreAllMocks()
})

const OPTIONS = { contributionAmounts: ['1.00', '2.00'], roundUp: { orderTotal: '47.97' } }
const QUOTE_ID = '3c86ff2f-30ce-42ea-963f-8a8afb8490db'
const SESSION_ID = '7a3d8f33-6e5b-48bc-96ee-7db90cdcb414'

const click = (element: HTMLElement | null | undefined) => element?.click()

describe('change', () => {
  it('fires once per toggle of the offset, with amounts as decimal strings and minor units', async () => {
    const w = await mountWidget({ options: OPTIONS })
    click(w.part('switch'))
    expect(w.events.change).toHaveLength(1)
    expect(w.events.change[0]).toEqual({
      elementType: 'embedded',
      selected: true,
      amount: '0.28',
      amountMinor: 28,
      currencyCode: 'GBP',
      quoteId: QUOTE_ID,
      sessionId: SESSION_ID,
      credits: { selected: true, amount: '0.28', amountMinor: 28 },
      contribution: { selected: false, amount: '0.00', amountMinor: 0, option: null },
    })
    expect(w.part('switch')?.getAttribute('aria-checked')).toBe('true')
    expect(w.part('summary')?.textContent).toBe('Selected: £0.28.')
    expect(w.part('confirm')?.getAttribute('aria-disabled')).toBe('false')

    click(w.part('switch'))
    expect(w.events.change).toHaveLength(2)
    expect(w.events.change[1]).toMatchObject({
      selected: false,
      amount: '0.00',
      amountMinor: 0,
      credits: { selected: false, amountMinor: 0 },
    })
    expect(w.part('switch')?.getAttribute('aria-checked')).toBe('false')
    expect(w.part('summary')?.textContent).toBe('Nothing selected.')
  })

  it('amountMinor of the offset equals credits.amounts.total in minor units', async () => {
    const body = fixture('carbon-en-GB')
    body.credits.amounts.total = 1234.57
    const w = await mountWidget({ body })
    click(w.part('switch'))
    expect(w.events.change[0]).toMatchObject({ amount: '1234.57', amountMinor: 123457, credits: { amountMinor: 123457 } })
  })

  it('keeps at most one contribution option pressed, and adds it to the offset', async () => {
    const w = await mountWidget({ options: OPTIONS })
    const [one, two, roundUp] = w.parts('option')
    click(one)
    click(two)
    expect(w.parts('option').map((b) => b.getAttribute('aria-pressed'))).toEqual(['false', 'true', 'false'])
    click(w.part('switch'))
    click(roundUp)
    expect(w.events.change.map((e) => [e.amount, e.contribution?.amount, e.contribution?.option])).toEqual([
      ['1.00', '1.00', 'fixed'],
      ['2.00', '2.00', 'fixed'],
      ['2.28', '2.00', 'fixed'],
      ['0.31', '0.03', 'roundUp'],
    ])
    expect(w.events.change[3]).toMatchObject({
      amountMinor: 31,
      credits: { amountMinor: 28 },
      contribution: { amountMinor: 3, selected: true },
    })
    // Pressing the pressed option again turns it off.
    click(roundUp)
    expect(w.events.change[4]).toMatchObject({ amount: '0.28', contribution: { selected: false, amountMinor: 0, option: null } })
    expect(w.events.change).toHaveLength(5)
  })

  it('reports 3-decimal and 0-decimal currencies exactly', async () => {
    const kwd = await mountWidget({ type: 'checkout', body: fixture('checkout-kwd'), options: { contributionAmounts: ['0.250'] } })
    click(kwd.part('switch'))
    click(kwd.parts('option')[0])
    expect(kwd.events.change[1]).toMatchObject({ currencyCode: 'KWD', amount: '0.323', amountMinor: 323, elementType: 'checkout' })
    expect(kwd.part('summary')?.textContent?.replace(/\s/g, ' ')).toBe('KWD 0.323 added to your order.')
    document.body.replaceChildren()
    const jpy = await mountWidget({ type: 'checkout', body: fixture('checkout-jpy'), options: { contributionAmounts: ['100'] } })
    click(jpy.parts('option')[0])
    click(jpy.part('switch'))
    expect(jpy.events.change[1]).toMatchObject({ currencyCode: 'JPY', amount: '101', amountMinor: 101 })
  })

  it('is also dispatched as a composed canopy-change DOM event from the element', async () => {
    const w = await mountWidget({ options: OPTIONS })
    const seen: unknown[] = []
    document.body.addEventListener('canopy-change', (event) => seen.push((event as CustomEvent).detail))
    click(w.part('switch'))
    expect(seen).toEqual([w.events.change[0]])
  })

  it('stops reaching a handler after off(), and a throwing handler does not stop the others', async () => {
    const w = await mountWidget({ options: OPTIONS })
    const error = vi.spyOn(console, 'error').mockImplementation(() => undefined)
    const removed = vi.fn()
    w.element.on('change', () => {
      throw new Error('page bug')
    })
    w.element.on('change', removed)
    click(w.part('switch'))
    expect(removed).toHaveBeenCalledTimes(1)
    expect(w.events.change).toHaveLength(1)
    expect(error).toHaveBeenCalledWith('Canopy: a change handler threw', expect.any(Error))
    w.element.off('change', removed)
    click(w.part('switch'))
    expect(removed).toHaveBeenCalledTimes(1)
    expect(w.events.change).toHaveLength(2)
    w.element.off('change')
    click(w.part('switch'))
    expect(w.events.change).toHaveLength(2)
  })
})

describe('confirm', () => {
  it('emits the chosen amounts, as change does', async () => {
    const w = await mountWidget({ options: OPTIONS })
    click(w.part('switch'))
    click(w.parts('option')[0])
    click(w.part('confirm'))
    expect(w.events.confirm).toEqual([w.events.change[1]])
    expect(w.events.confirm[0]).toMatchObject({ amount: '1.28', amountMinor: 128 })
  })

  it('with nothing chosen, emits nothing and asks for a choice in the live region', async () => {
    const w = await mountWidget({ options: OPTIONS })
    click(w.part('confirm'))
    expect(w.events.confirm).toEqual([])
    expect(w.part('summary')?.textContent).toBe('Choose an option first.')
  })
})

describe('update()', () => {
  it('re-prices the round-up for a new order total and drops a choice whose amount changed (change fires)', async () => {
    const w = await mountWidget({ options: OPTIONS })
    click(w.parts('option')[2])
    expect(w.events.change[0]).toMatchObject({ amount: '0.03', contribution: { option: 'roundUp' } })
    w.element.update({ roundUp: { orderTotal: '47.50' } })
    expect(w.optionLabels()).toEqual(['£1.00', '£2.00', 'Round up to £48.00 (+£0.50)'])
    expect(w.parts('option').map((b) => b.getAttribute('aria-pressed'))).toEqual(['false', 'false', 'false'])
    expect(w.events.change).toHaveLength(2)
    expect(w.events.change[1]).toMatchObject({ selected: false, amountMinor: 0, contribution: { option: null } })
  })

  it('keeps a choice that is still offered, without a change event', async () => {
    const w = await mountWidget({ options: OPTIONS })
    click(w.part('switch'))
    click(w.parts('option')[1])
    w.element.update({ contributionAmounts: ['2.00', '5.00'] })
    expect(w.parts('option').map((b) => b.getAttribute('aria-pressed'))).toEqual(['true', 'false', 'false'])
    expect(w.part('switch')?.getAttribute('aria-checked')).toBe('true')
    expect(w.events.change).toHaveLength(2)
    w.element.update({ roundUp: null, credits: false })
    expect(w.parts('option')).toHaveLength(2)
    expect(w.part('switch')).toBeNull()
    expect(w.events.change[2]).toMatchObject({ amount: '2.00', credits: null, contribution: { amount: '2.00' } })
  })

  it('throws at once for amounts the session currency cannot hold', async () => {
    const w = await mountWidget({ options: OPTIONS })
    expect(() => w.element.update({ contributionAmounts: ['1.005'] })).toThrow(
      'Canopy: contributionAmounts[0] ("1.005") has more decimal places than GBP allows (2)',
    )
    expect(w.parts('option')).toHaveLength(3)
  })
})
