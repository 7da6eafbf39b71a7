// The client's pure parts, without the API: exact money, request bodies, the retry policy and backoff, error classes.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  CanopyApiError,
  CanopyConflictError,
  CanopyInvalidRequestError,
  CanopyRateLimitError,
  CanopyServerError,
  ERROR_CODE_STATUS,
  fromMinorUnits,
  toMinorUnits,
} from '../src/index.js'
import { apiErrorFrom } from '../src/errors.js'
import { serializeBody, serializeQuery } from '../src/json.js'
import { backoffDelayMs, isRetryable, neverSent, type AttemptFailure, type RetryPolicy } from '../src/retry.js'

describe('minor units', () => {
  it.each([
    [47.97, 'GBP', 4797],
    ['47.97', 'GBP', 4797],
    [0.29, 'GBP', 29],
    [1.005 + 0, 'KWD', 1005],
    ['5', 'JPY', 5],
    [-1.28, 'GBP', -128],
    ['0.10', 'GBP', 10],
    ['12.3400', 'EUR', 1234],
  ] as const)('toMinorUnits(%s, %s) = %s', (amount, currency, minor) => {
    expect(toMinorUnits(amount, currency)).toBe(minor)
  })

  it.each([
    [4797, 'GBP', '47.97'],
    [5, 'GBP', '0.05'],
    [5, 'JPY', '5'],
    [1005n, 'KWD', '1.005'],
    [-128, 'GBP', '-1.28'],
    [0, 'GBP', '0.00'],
  ] as const)('fromMinorUnits(%s, %s) = %s', (minor, currency, amount) => {
    expect(fromMinorUnits(minor, currency)).toBe(amount)
  })

  it('refuses what is not exact', () => {
    expect(() => toMinorUnits(47.975, 'GBP')).toThrow(RangeError)
    expect(() => toMinorUnits('1.5', 'JPY')).toThrow(RangeError)
    expect(() => toMinorUnits('1,50', 'GBP')).toThrow(RangeError)
    expect(() => toMinorUnits(1e-7, 'GBP')).toThrow(RangeError)
    expect(() => toMinorUnits(1, 'XXX1')).toThrow(/unknown currency/)
  })

  it('round-trips every amount a JSON number can carry, never through a float product', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -100_000_000_000, max: 100_000_000_000 }),
        fc.constantFrom('GBP', 'JPY', 'KWD', 'USD'),
        (minor, currency) => {
          const amount = fromMinorUnits(minor, currency)
          expect(toMinorUnits(amount, currency)).toBe(minor)
          // What JSON.parse gives back for the API's number is the same amount.
          expect(toMinorUnits(JSON.parse(amount) as number, currency)).toBe(minor)
        },
      ),
    )
  })
})

describe('request bodies', () => {
  const fields = [
    ['transaction', 'amount'],
    ['orderItems', '[]', 'unitPrice', 'value'],
  ]

  it('writes decimal strings at number fields as JSON numbers with exactly their digits', () => {
    const body = {
      transaction: { amount: '47.97', currencyCode: 'GBP' },
      orderItems: [{ unitPrice: { value: '015.990' } }],
      reference: '12.50',
    }
    expect(serializeBody(body, fields)).toBe(
      '{"transaction":{"amount":47.97,"currencyCode":"GBP"},"orderItems":[{"unitPrice":{"value":15.990}}],"reference":"12.50"}',
    )
    expect(serializeBody({ transaction: { amount: 0.1 }, skipped: undefined, list: [undefined] }, fields)).toBe(
      '{"transaction":{"amount":0.1},"list":[null]}',
    )
    expect(JSON.parse(serializeBody({ transaction: { amount: '123456789012345678.99' } }, fields)).transaction.amount).toBeTypeOf('number')
  })

  it.each(['47,97', '1e3', '', ' 1', '0x10', 'NaN'])('refuses %j at a number field', (amount) => {
    expect(() => serializeBody({ transaction: { amount } }, fields)).toThrow(/transaction\.amount must be a decimal number/)
  })

  it('refuses numbers JSON cannot carry', () => {
    expect(() => serializeBody({ transaction: { amount: Number.NaN } }, fields)).toThrow(/finite/)
    expect(() => serializeBody({ orderItems: [{ unitPrice: { value: Infinity } }] }, fields)).toThrow(/orderItems\[\]\.unitPrice\.value/)
  })

  it('writes query strings without empty values, dates as ISO 8601', () => {
    expect(serializeQuery({ dateTimeFrom: new Date('2026-11-01T00:00:00Z'), limit: 100, consumerReference: undefined, x: null })).toBe(
      '?dateTimeFrom=2026-11-01T00%3A00%3A00.000Z&limit=100',
    )
    expect(serializeQuery({})).toBe('')
  })
})

describe('retry policy', () => {
  const cases: [RetryPolicy, AttemptFailure, boolean][] = [
    ['idempotent', { kind: 'network', sent: true }, true],
    ['unsafe', { kind: 'network', sent: true }, false],
    ['unsafe', { kind: 'network', sent: false }, true],
    ['idempotent', { kind: 'response', status: 409, code: 'IDEMPOTENCY_KEY_IN_USE' }, true],
    ['idempotent', { kind: 'response', status: 409, code: 'ALREADY_REVERSED' }, false],
    ['unsafe', { kind: 'response', status: 409, code: 'IDEMPOTENCY_KEY_IN_USE' }, false],
    ['idempotent', { kind: 'response', status: 429 }, true],
    ['unsafe', { kind: 'response', status: 429 }, true],
    ['idempotent', { kind: 'response', status: 503 }, true],
    ['idempotent', { kind: 'response', status: 502 }, true],
    ['idempotent', { kind: 'response', status: 504 }, true],
    ['unsafe', { kind: 'response', status: 503 }, false],
    ['idempotent', { kind: 'response', status: 500 }, false],
    ['idempotent', { kind: 'response', status: 400 }, false],
    ['idempotent', { kind: 'response', status: 422, code: 'IDEMPOTENCY_KEY_REUSED' }, false],
  ]
  it.each(cases)('%s after %j: retried %s', (policy, failure, retried) => {
    expect(isRetryable(policy, failure)).toBe(retried)
  })

  it('knows a connection that never opened from one that broke', () => {
    expect(neverSent(new TypeError('fetch failed', { cause: Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }) }))).toBe(true)
    expect(
      neverSent(new TypeError('fetch failed', { cause: new AggregateError([{ code: 'ECONNREFUSED' }, { code: 'ECONNREFUSED' }]) })),
    ).toBe(true)
    expect(
      neverSent(new TypeError('fetch failed', { cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }) })),
    ).toBe(false)
    expect(neverSent(new TypeError('fetch failed', { cause: Object.assign(new Error('reset'), { code: 'ECONNRESET' }) }))).toBe(false)
  })

  it('backs off exponentially with jitter between half and all of it, never under the first delay, at least Retry-After', () => {
    const settings = { initialDelayMs: 500, maxDelayMs: 8000 }
    expect([1, 2, 3, 4, 5, 6].map((retry) => backoffDelayMs(retry, settings, 0.999999))).toEqual([500, 1000, 2000, 4000, 8000, 8000])
    expect([1, 2, 3, 4, 5, 6].map((retry) => backoffDelayMs(retry, settings, 0))).toEqual([500, 500, 1000, 2000, 4000, 4000])
    expect(backoffDelayMs(1, settings, 0.5, 3000)).toBe(3000)
    expect(backoffDelayMs(4, settings, 0.5, 1000)).toBe(3000)
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 30 }), fc.double({ min: 0, max: 0.999, noNaN: true }), (retry, random) => {
        const delay = backoffDelayMs(retry, settings, random)
        expect(delay).toBeGreaterThanOrEqual(500)
        expect(delay).toBeLessThanOrEqual(8000)
      }),
    )
  })
})

describe('errors keyed by code', () => {
  const headers = new Headers({ 'x-request-id': 'req-1', 'retry-after': '2' })

  it('chooses the class by the code, keeps status, requestId and details', () => {
    const error = apiErrorFrom(
      400,
      { error: 'bad', code: 'BAD_REQUEST', details: [{ path: '/a', message: 'is required' }], requestId: 'r' },
      headers,
    )
    expect(error).toBeInstanceOf(CanopyInvalidRequestError)
    expect(error).toMatchObject({ status: 400, code: 'BAD_REQUEST', requestId: 'r', details: [{ path: '/a', message: 'is required' }] })
    expect(apiErrorFrom(409, { error: 'x', code: 'ALREADY_REVERSED', requestId: 'r' }, headers)).toBeInstanceOf(CanopyConflictError)
    expect(apiErrorFrom(429, { error: 'x', code: 'TOO_MANY_REQUESTS', requestId: 'r' }, headers)).toMatchObject({ retryAfterMs: 2000 })
    expect(apiErrorFrom(429, { error: 'x', code: 'TOO_MANY_REQUESTS', requestId: 'r' }, headers)).toBeInstanceOf(CanopyRateLimitError)
  })

  it('has a class for every code of the contract, by its status', () => {
    for (const [code, status] of Object.entries(ERROR_CODE_STATUS)) {
      const error = apiErrorFrom(status, { error: 'x', code, requestId: 'r' }, headers)
      expect(error.code).toBe(code)
      expect(error.constructor, code).not.toBe(CanopyApiError)
    }
  })

  it('keeps a code newer than the client, and describes an answer that is not the error shape', () => {
    expect(apiErrorFrom(409, { error: 'new', code: 'SOMETHING_NEW', requestId: 'r' }, headers)).toMatchObject({
      code: 'SOMETHING_NEW',
      status: 409,
    })
    const proxyPage = apiErrorFrom(502, undefined, headers)
    expect(proxyPage).toBeInstanceOf(CanopyServerError)
    expect(proxyPage).toMatchObject({ code: 'UNEXPECTED_RESPONSE', status: 502, requestId: 'req-1' })
  })
})
