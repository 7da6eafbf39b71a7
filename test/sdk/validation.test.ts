// @vitest-environment happy-dom
// Bad input to the SDK throws a clear Error synchronously.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { Canopy } from '../../sdk/src/canopy.js'
import { API, fixture, json, SECRET, SESSION_ID, stubFetch } from './helpers.js'

afterEach(() => {
  document.body.replaceChildren()
  vi.unstubAllGlobals()
})

const elements = () => new Canopy({ apiBase: API }).elements({ sessionId: SESSION_ID, clientSecret: SECRET })

describe('new Canopy()', () => {
  it.each([
    ['no apiBase', {}, 'Canopy: apiBase is required'],
    ['an empty apiBase', { apiBase: '' }, 'Canopy: apiBase is required'],
    ['a relative apiBase', { apiBase: '/canopy' }, 'is not an absolute URL'],
    ['an http apiBase off localhost', { apiBase: 'http://canopy.example.com' }, 'must use https (http only for localhost)'],
    ['a javascript: apiBase', { apiBase: 'javascript:alert(1)' }, 'must use https'],
    ['an apiBase with a query', { apiBase: 'https://canopy.example.com/?x=1' }, 'must not contain credentials, a query or a fragment'],
    ['an apiBase with credentials', { apiBase: 'https://u:p@canopy.example.com' }, 'must not contain credentials'],
    ['an unknown option', { apiBase: API, env: 'prod' }, 'Canopy: env is not an option (apiBase, locale, appearance)'],
    ['a malformed locale', { apiBase: API, locale: 'en_GB!' }, 'Canopy: locale "en_GB!" is not a BCP 47 language tag'],
    ['a non-string locale', { apiBase: API, locale: 42 }, 'is not a BCP 47 language tag'],
    ['an invalid appearance', { apiBase: API, appearance: { variables: { colorPrimary: 'red;}' } } }, 'which could break out of CSS'],
    ['an unknown appearance variable', { apiBase: API, appearance: { variables: { spacing: '4px' } } }, 'is not a theming variable'],
  ])('throws for %s', (_label, options, message) => {
    expect(() => new Canopy(options as never)).toThrow(message)
  })

  it('accepts https, http on localhost, the (apiBase, options) form, and canonicalises the locale', () => {
    expect(new Canopy({ apiBase: 'https://canopy.example.com/' }).apiBase).toBe('https://canopy.example.com')
    expect(new Canopy({ apiBase: 'http://127.0.0.1:3000' }).apiBase).toBe('http://127.0.0.1:3000')
    expect(new Canopy({ apiBase: 'http://localhost:3000/base/' }).apiBase).toBe('http://localhost:3000/base')
    const canopy = new Canopy('https://canopy.example.com', { locale: 'en-us' })
    expect([canopy.apiBase, canopy.locale]).toEqual(['https://canopy.example.com', 'en-US'])
  })
})

describe('canopy.elements()', () => {
  const canopy = () => new Canopy({ apiBase: API })
  it.each([
    ['no options', undefined, 'Canopy: elements() needs { sessionId, clientSecret }'],
    [
      'no clientSecret',
      { sessionId: SESSION_ID },
      "Canopy: elements(): clientSecret is required: the session's client secret from your backend",
    ],
    ['an empty clientSecret', { sessionId: SESSION_ID, clientSecret: '' }, 'clientSecret is required'],
    [
      'an API key as clientSecret',
      { sessionId: SESSION_ID, clientSecret: 'ck_live_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCd' },
      'looks like an API key (ck_…). Never send an API key to a browser',
    ],
    ['a malformed clientSecret', { sessionId: SESSION_ID, clientSecret: 'secret' }, 'clientSecret is not a client secret'],
    ['no sessionId', { clientSecret: SECRET }, 'Canopy: elements() needs a sessionId'],
    ['a sessionId that is not a UUID', { sessionId: 'abc', clientSecret: SECRET }, 'sessionId "abc" is not a session id (a UUID)'],
    ['an unknown option', { sessionId: SESSION_ID, clientSecret: SECRET, locale: 'en-GB' }, 'elements(): locale is not an option'],
  ])('throws for %s', (_label, options, message) => {
    expect(() => canopy().elements(options as never)).toThrow(message)
  })
})

describe('elements.create() and its options', () => {
  it('throws for an unknown element type', () => {
    expect(() => elements().create('popup' as never)).toThrow(
      'Canopy: create(): unknown element type "popup" (embedded, takeover, checkout)',
    )
  })

  it.each([
    ['options that are not an object', 'x', 'create() options must be an object'],
    ['an unknown option', { theme: 'dark' }, 'Canopy: theme is not an element option (contributionAmounts, roundUp, credits, container)'],
    ['contributionAmounts not an array', { contributionAmounts: '1.00' }, 'contributionAmounts must be an array of decimal strings'],
    ['a number amount', { contributionAmounts: [1] }, 'Canopy: contributionAmounts[0] must be a decimal string such as "2.00" (got 1)'],
    ['a negative amount', { contributionAmounts: ['-1.00'] }, 'contributionAmounts[0] must be a decimal string'],
    ['an exponent', { contributionAmounts: ['1e3'] }, 'contributionAmounts[0] must be a decimal string'],
    ['a zero amount', { contributionAmounts: ['0.00'] }, 'contributionAmounts[0] must be greater than 0'],
    ['a duplicate amount', { contributionAmounts: ['1', '1.00'] }, 'contributionAmounts[1] (1.00) is offered twice'],
    ['too many amounts', { contributionAmounts: ['1', '2', '3', '4', '5', '6', '7'] }, 'at most 6 amounts'],
    ['a roundUp without orderTotal', { roundUp: {} }, 'roundUp.orderTotal must be a decimal string'],
    ['a float orderTotal', { roundUp: { orderTotal: 47.97 } }, 'roundUp.orderTotal must be a decimal string such as "2.00" (got 47.97)'],
    ['an unknown roundUp key', { roundUp: { orderTotal: '1', to: '5' } }, 'roundUp.to is not a round-up option'],
    ['a zero increment', { roundUp: { orderTotal: '1', increment: '0' } }, 'roundUp.increment must be greater than 0'],
    ['a non-boolean credits', { credits: 'yes' }, 'credits must be true or false'],
  ])('throws for %s', (_label, options, message) => {
    expect(() => elements().create('embedded', options as never)).toThrow(message)
  })
})

describe('mount()', () => {
  it.each([
    ['no container', undefined, 'Canopy: mount() needs a container: a CSS selector or a DOM element'],
    ['a selector that matches nothing', '#missing', 'Canopy: mount(): no element matches "#missing"'],
    ['an invalid selector', '##', 'Canopy: mount(): "##" is not a valid CSS selector'],
    ['an empty selector', '', 'Canopy: mount(): no element matches ""'],
    ['a text node', 'text-node', 'needs a container'],
  ])('throws for %s', (_label, target, message) => {
    const element = elements().create('embedded')
    const argument = target === 'text-node' ? document.createTextNode('x') : target
    expect(() => element.mount(argument as never)).toThrow(message)
  })

  it('mounts into a selector or an element; ekko’s { container } form mounts at once', async () => {
    stubFetch(() => json(fixture('carbon-en-GB')))
    const box = document.createElement('div')
    box.id = 'impact'
    document.body.append(box)
    elements().create('embedded').mount('#impact')
    expect(box.querySelector('canopy-impact')).not.toBeNull()
    const other = document.createElement('section')
    document.body.append(other)
    elements().createImpactPayEmbedded({ container: other })
    expect(other.querySelector('canopy-impact')?.getAttribute('variant')).toBe('embedded')
    expect(() => elements().createImpactPayPageTakeover({ container: '#nope' })).toThrow('no element matches "#nope"')
    expect(elements().initCheckout().elementType).toBe('checkout')
    expect(elements().createImpactPayPageTakeover().elementType).toBe('takeover')
  })
})

describe('on()', () => {
  it('throws for an unknown event or a handler that is not a function', () => {
    const element = elements().create('checkout')
    expect(() => element.on('toggle' as never, () => undefined)).toThrow(
      'Canopy: unknown event "toggle" (ready, change, confirm, close, loaderror)',
    )
    expect(() => element.on('change', 'handler' as never)).toThrow('Canopy: on("change") needs a handler function')
    expect(element.on('change', () => undefined)).toBe(element)
  })

  it('update() refuses a container and bad options', () => {
    const element = elements().create('checkout')
    expect(() => element.update({ container: '#x' } as never)).toThrow('update() cannot change the container')
    expect(() => element.update({ contributionAmounts: ['x'] })).toThrow('contributionAmounts[0] must be a decimal string')
  })
})
