// @vitest-environment happy-dom
// The widget rendered from canned session reads (carbon and nature; en-GB, en-US, de-DE; GBP, KWD, JPY).
import { afterEach, describe, expect, it, vi } from 'vitest'
import { fixture, mountWidget, spaces } from './helpers.js'

afterEach(() => {
  document.body.replaceChildren()
  vi.unstubAllGlobals()
})

const OPTIONS = { contributionAmounts: ['1.00', '2.00'], roundUp: { orderTotal: '47.97' } }

describe('a carbon session', () => {
  it('renders the footprint, its equivalents, the offset price, the partners and the choices (en-GB)', async () => {
    const w = await mountWidget({ options: OPTIONS })
    expect(w.events.loaderror).toEqual([])
    expect(w.part('title')?.textContent).toBe("Your order's carbon footprint")
    expect(spaces(w.part('footprint')?.textContent)).toBe("This order's estimated footprint is 10.8 kg CO₂e.")
    expect([...(w.part('equivalents')?.children ?? [])].map((li) => li.textContent)).toEqual([
      "That's about the same as driving an average petrol car for 28 miles.",
      "That's about the same as charging a smartphone 874 times.",
      "That's about as much CO₂ as a tree seedling absorbs in 659 days.",
    ])
    expect(spaces(w.part('switch')?.textContent)).toBe('Offset it for £0.28')
    expect(w.part('offset')?.textContent).toContain('Funds carbon projects with Verdant Removals (demo) and Forest Guardians (demo).')
    expect(w.optionLabels()).toEqual(['£1.00', '£2.00', 'Round up to £48.00 (+£0.03)'])
    expect(w.part('contribution')?.textContent).toContain('Goes to Rewild Trust (demo) and Ocean Commons (demo).')
    expect(w.parts('partner').map((p) => p.querySelector('strong')?.textContent)).toEqual([
      'Verdant Removals (demo)',
      'Forest Guardians (demo)',
      'Rewild Trust (demo)',
      'Ocean Commons (demo)',
    ])
    expect(w.part('summary')?.textContent).toBe('Nothing selected.')
    expect(w.part('confirm')?.textContent).toBe('Confirm')
    expect(w.part('disclosure')).toBeNull()
    expect(w.part('root')?.getAttribute('lang')).toBe('en-GB')
  })

  it('starts with every choice off: the switch unchecked, no option pressed, confirm disabled', async () => {
    const w = await mountWidget({ options: OPTIONS })
    const switchButton = w.part('switch')
    expect(switchButton?.tagName).toBe('BUTTON')
    expect(switchButton?.getAttribute('role')).toBe('switch')
    expect(switchButton?.getAttribute('aria-checked')).toBe('false')
    expect(w.parts('option').map((b) => b.getAttribute('aria-pressed'))).toEqual(['false', 'false', 'false'])
    // The tick that shows a pressed option without colour is hidden from assistive technology.
    expect(w.parts('option').map((b) => b.querySelector('.tick')?.getAttribute('aria-hidden'))).toEqual(['true', 'true', 'true'])
    expect(w.part('confirm')?.getAttribute('aria-disabled')).toBe('true')
    expect(w.shadow.querySelector('[role="group"]')?.getAttribute('aria-labelledby')).toBe('canopy-contribution')
  })

  it('shows partner logos as <img> with alt text, resolved against apiBase, with their size reserved', async () => {
    const w = await mountWidget({ options: OPTIONS })
    const logos = w.parts('partner-logo') as HTMLImageElement[]
    expect(logos).toHaveLength(4)
    expect(logos[0]?.getAttribute('src')).toBe('https://canopy.example.com/demo/images/verdant-removals-logos.png')
    expect(logos[0]?.getAttribute('alt')).toBe('Verdant Removals (demo) logo')
    expect([logos[0]?.getAttribute('width'), logos[0]?.getAttribute('height')]).toEqual(['256', '256'])
  })

  it('renders text only: markup in server data stays text; no style or on* attributes anywhere', async () => {
    const body = fixture('carbon-en-GB')
    body.footprint.equivalents[0].description = '<img src=x onerror="alert(1)">Driving'
    body.credits.impactPartners[0].name = '<b>Verdant</b>'
    body.credits.impactPartners[0].images.logos[0].path = 'javascript:alert(1)'
    const w = await mountWidget({ body, options: OPTIONS })
    expect(w.part('equivalents')?.firstElementChild?.textContent).toBe('<img src=x onerror="alert(1)">Driving')
    expect(w.shadow.querySelectorAll('b, script, style, iframe')).toHaveLength(0)
    // The javascript: logo is dropped; the other partners keep theirs.
    expect(w.parts('partner-logo').map((i) => i.getAttribute('src'))).not.toContain('javascript:alert(1)')
    expect(w.parts('partner-logo')).toHaveLength(3)
    for (const element of w.shadow.querySelectorAll('*')) {
      for (const attribute of element.getAttributeNames()) expect(attribute).not.toMatch(/^(style|on)/)
    }
  })

  it('styles through adopted constructed stylesheets: the base sheet and the appearance sheet', async () => {
    const w = await mountWidget({
      canopy: { apiBase: 'https://canopy.example.com', appearance: { variables: { colorPrimary: '#123456' } } },
    })
    const sheets = w.shadow.adoptedStyleSheets
    expect(sheets).toHaveLength(2)
    const css = sheets.map((s) => [...s.cssRules].map((r) => r.cssText).join('\n')).join('\n')
    expect(css).toContain('--canopy-color-primary')
    expect(css).toMatch(/--canopy-color-primary:\s*#123456/)
    expect(w.shadow.mode).toBe('open')
  })

  it('in en-US: pounds of CO2e, the US charitable-fundraising disclosure (partners, timing, tax, service fee)', async () => {
    const w = await mountWidget({
      body: fixture('carbon-en-US'),
      canopy: { apiBase: 'https://canopy.example.com', locale: 'en-US' },
      options: OPTIONS,
    })
    expect(spaces(w.part('footprint')?.textContent)).toBe("This order's estimated footprint is 23.9 lb CO₂e.")
    expect(w.part('equivalents')?.textContent).toContain('gas-powered car for 28 miles')
    const disclosure = spaces(w.part('disclosure')?.textContent)
    expect(disclosure).toContain('Rewild Trust (demo) and Ocean Commons (demo)')
    expect(disclosure).toContain('within 30 to 60 days')
    expect(disclosure).toContain('may be tax-deductible')
    // serviceFee 0.1612903226 + serviceFeeTax 0.0322580645 of each contribution.
    expect(disclosure).toContain('A service fee of 19.4% of each contribution (including tax) is deducted')
  })

  it('in en-US: names who collects and the payout days when the API states them', async () => {
    const body = fixture('carbon-en-US')
    body.disclosure = { collectingParty: 'Canopy Operator Ltd', payoutDays: { min: 45, max: 45 } }
    const w = await mountWidget({ body, canopy: { apiBase: 'https://canopy.example.com', locale: 'en-US' }, options: OPTIONS })
    const disclosure = spaces(w.part('disclosure')?.textContent)
    expect(disclosure).toMatch(/^Canopy Operator Ltd collects contributions for the partners named here\. Contributions are granted to/)
    expect(disclosure).toContain('who receive the funds within 45 days.')
    body.disclosure = { collectingParty: null, payoutDays: { min: 10, max: 20 } }
    document.body.replaceChildren()
    const ranged = await mountWidget({ body, canopy: { apiBase: 'https://canopy.example.com', locale: 'en-US' }, options: OPTIONS })
    expect(spaces(ranged.part('disclosure')?.textContent)).toMatch(/^Contributions are granted to .* within 10 to 20 days\./)
  })

  it('shows no disclosure in en-US when no contribution is offered', async () => {
    const w = await mountWidget({ body: fixture('carbon-en-US'), canopy: { apiBase: 'https://canopy.example.com', locale: 'en-US' } })
    expect(w.part('disclosure')).toBeNull()
    expect(w.part('contribution')).toBeNull()
  })

  it('in de-DE: German strings and German number formats ("0,28 £", "10,8 kg")', async () => {
    const w = await mountWidget({
      body: fixture('carbon-de-DE'),
      canopy: { apiBase: 'https://canopy.example.com', locale: 'de-DE' },
      options: OPTIONS,
    })
    expect(w.part('title')?.textContent).toBe('Der CO₂-Fußabdruck Ihrer Bestellung')
    expect(spaces(w.part('footprint')?.textContent)).toBe('Geschätzter Fußabdruck dieser Bestellung: 10,8 kg CO₂e.')
    expect(spaces(w.part('switch')?.textContent)).toBe('Für 0,28 £ ausgleichen')
    expect(w.optionLabels()).toEqual(['1,00 £', '2,00 £', 'Auf 48,00 £ aufrunden (+0,03 £)'])
    expect(w.part('equivalents')?.textContent).toContain('Fahrt von 44 km')
    expect(w.part('summary')?.textContent).toBe('Nichts ausgewählt.')
    expect(w.part('root')?.getAttribute('lang')).toBe('de-DE')
    expect(w.part('disclosure')).toBeNull()
  })

  it('asks the API for the bundled locale the page asked for (fallback by language: de-AT → de-DE)', async () => {
    const w = await mountWidget({ body: fixture('carbon-de-DE'), canopy: { apiBase: 'https://canopy.example.com', locale: 'de-AT' } })
    expect(new URL(w.fetch.mock.calls[0]?.[0] ?? '').searchParams.get('locale')).toBe('de-DE')
    expect(w.part('title')?.textContent).toBe('Der CO₂-Fußabdruck Ihrer Bestellung')
  })

  it('marks the language of each part: equivalents in a locale without SDK strings keep theirs', async () => {
    const body = fixture('carbon-en-GB')
    body.locale = 'fr-FR'
    body.footprint.equivalents = [{ key: 'car', value: 44, description: 'Cela équivaut à environ 44 km parcourus en voiture.' }]
    const w = await mountWidget({ body })
    expect(w.part('root')?.getAttribute('lang')).toBe('en-GB')
    expect(w.part('equivalents')?.getAttribute('lang')).toBe('fr-FR')
    expect(w.part('title')?.textContent).toBe("Your order's carbon footprint")
  })

  it('offers only the contribution when credits: false', async () => {
    const w = await mountWidget({ options: { ...OPTIONS, credits: false } })
    expect(w.part('switch')).toBeNull()
    expect(w.parts('option')).toHaveLength(3)
    expect(w.parts('partner').map((p) => p.querySelector('strong')?.textContent)).toEqual(['Rewild Trust (demo)', 'Ocean Commons (demo)'])
  })

  it('shows the projects with their locations when the session read carries them', async () => {
    const body = fixture('carbon-en-GB')
    body.credits.projects = [
      { id: 'p1', name: 'Agroforestry restoration, Rwanda (demo)', location: { countryCode: 'RWA', countryName: 'Rwanda', state: null } },
      { id: 'p2', name: 'Family forest management (demo)', location: { countryCode: 'USA', state: 'CA' } },
      { id: 'p3', name: 'Biochar, durable removal (demo)', location: { countryCode: null, countryName: null, state: null } },
    ]
    const w = await mountWidget({ body })
    expect(w.parts('project').map((p) => p.textContent)).toEqual([
      'Agroforestry restoration, Rwanda (demo) — Rwanda',
      'Family forest management (demo) — CA, USA',
      'Biochar, durable removal (demo)',
    ])
  })

  it('formats money with the currency’s own decimals: KWD 3, JPY 0', async () => {
    const kwd = await mountWidget({ type: 'checkout', body: fixture('checkout-kwd'), options: { contributionAmounts: ['0.500'] } })
    expect(spaces(kwd.part('switch')?.textContent)).toBe('Offset it for KWD 0.073')
    expect(kwd.optionLabels()[0]).toBe('KWD 0.500')
    document.body.replaceChildren()
    const jpy = await mountWidget({ type: 'checkout', body: fixture('checkout-jpy'), options: { roundUp: { orderTotal: '4797' } } })
    expect(spaces(jpy.part('switch')?.textContent)).toBe('Offset it for ¥1')
    // 0-decimal currencies round up to the next 100 by default.
    expect(jpy.optionLabels()[0]).toBe('Round up to ¥4,800 (+¥3)')
  })

  it('does not offer a round-up when the order total is already round', async () => {
    const w = await mountWidget({ options: { roundUp: { orderTotal: '48.00' } } })
    expect(w.parts('option')).toHaveLength(0)
    expect(w.part('contribution')).toBeNull()
  })

  it('rounds up to a given increment', async () => {
    const w = await mountWidget({ options: { roundUp: { orderTotal: '47.97', increment: '5' } } })
    expect(w.optionLabels()[0]).toBe('Round up to £50.00 (+£2.03)')
  })
})

describe('a nature session', () => {
  it('renders the area in m² (en-GB) with the area equivalents, and no offset', async () => {
    const w = await mountWidget({ body: fixture('nature-en-GB'), options: { contributionAmounts: ['1.00'] } })
    expect(w.part('title')?.textContent).toBe("Your order's nature footprint")
    expect(spaces(w.part('footprint')?.textContent)).toBe("This order's estimated footprint is 22.1 m² of intact nature.")
    expect(w.part('equivalents')?.textContent).toContain('parking spaces')
    expect(w.part('switch')).toBeNull()
    expect(w.optionLabels()).toEqual(['£1.00'])
  })

  it('renders ft² in en-US and m² in de-DE', async () => {
    const us = await mountWidget({ body: fixture('nature-en-US'), canopy: { apiBase: 'https://canopy.example.com', locale: 'en-US' } })
    expect(spaces(us.part('footprint')?.textContent)).toBe("This order's estimated footprint is 238 ft² of intact nature.")
    document.body.replaceChildren()
    const de = await mountWidget({ body: fixture('nature-de-DE'), canopy: { apiBase: 'https://canopy.example.com', locale: 'de-DE' } })
    expect(spaces(de.part('footprint')?.textContent)).toBe('Geschätzter Fußabdruck dieser Bestellung: 22,1 m² intakter Natur.')
  })

  it('with nothing to choose, shows the footprint without a summary or a confirm button', async () => {
    const w = await mountWidget({ body: fixture('nature-en-GB') })
    expect(w.part('summary')).toBeNull()
    expect(w.part('confirm')).toBeNull()
    expect(w.shadow.querySelectorAll('[aria-live]')).toHaveLength(0)
  })
})

describe('variants', () => {
  it('checkout has no confirm button; its summary speaks of the order', async () => {
    const w = await mountWidget({ type: 'checkout', body: { ...fixture('carbon-en-GB'), kind: 'checkout', sdkVariant: null } })
    expect(w.part('confirm')).toBeNull()
    expect(w.host.getAttribute('variant')).toBe('checkout')
    expect(new URL(w.fetch.mock.calls[0]?.[0] ?? '').pathname).toMatch(/^\/v3\/checkout\/sessions\//)
  })

  it('has exactly one polite live region', async () => {
    const w = await mountWidget({ options: OPTIONS })
    const live = w.shadow.querySelectorAll('[aria-live]')
    expect(live).toHaveLength(1)
    expect(live[0]?.getAttribute('aria-live')).toBe('polite')
  })

  it('shows a skeleton that reserves height while loading', async () => {
    let answer: ((response: Response) => void) | undefined
    vi.stubGlobal('fetch', () => new Promise<Response>((resolve) => (answer = resolve)))
    const { Canopy } = await import('../../sdk/src/canopy.js')
    const container = document.createElement('div')
    document.body.append(container)
    const element = new Canopy({ apiBase: 'https://canopy.example.com' })
      .elements({ sessionId: '7a3d8f33-6e5b-48bc-96ee-7db90cdcb414', clientSecret: 'cs_test_A_secret_B' })
      .create('embedded')
    element.mount(container)
    const shadow = container.querySelector('canopy-impact')?.shadowRoot
    const skeleton = shadow?.querySelector('[part="skeleton"]')
    expect(skeleton?.getAttribute('aria-busy')).toBe('true')
    expect(skeleton?.textContent).toBe('Loading…')
    expect(skeleton?.classList.contains('skeleton')).toBe(true)
    const ready = new Promise((resolve) => element.on('ready', resolve))
    await vi.waitFor(() => expect(answer).toBeDefined())
    answer?.(new Response(JSON.stringify(fixture('carbon-en-GB'))))
    await ready
    expect(shadow?.querySelector('[part="skeleton"]')).toBeNull()
  })
})
