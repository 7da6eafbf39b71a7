// IP allowlists of API keys: entries are single addresses ("203.0.113.7", "2001:db8::1"), CIDR blocks ("10.0.0.0/8")
// or inclusive ranges ("192.0.2.10-192.0.2.50"), IPv4 or IPv6. Stored normalised; matched against the client address.
import ipaddr from 'ipaddr.js'

export const MAX_IP_ALLOWLIST_ENTRIES = 100

export interface IpAllowlist {
  enabled: boolean
  entries: string[]
}

type Address = ipaddr.IPv4 | ipaddr.IPv6

/** Only the usual spellings: four decimal parts for IPv4 (no "10.1", no hex, no leading zeros), any valid IPv6. */
function parseAddress(text: string): Address | undefined {
  const value = text.trim()
  if (ipaddr.IPv4.isValidFourPartDecimal(value)) return ipaddr.IPv4.parse(value)
  if (value.includes(':') && ipaddr.IPv6.isValid(value)) {
    const parsed = ipaddr.IPv6.parse(value)
    // An IPv4-mapped IPv6 address is the IPv4 address (the form a dual-stack socket reports).
    return parsed.isIPv4MappedAddress() ? parsed.toIPv4Address() : parsed
  }
  return undefined
}

const bytesOf = (address: Address): number[] => address.toByteArray()

function compare(a: Address, b: Address): number {
  const x = bytesOf(a)
  const y = bytesOf(b)
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return (x[i] ?? 0) - (y[i] ?? 0)
  return 0
}

type Matcher = (address: Address) => boolean

interface ParsedEntry {
  normalised: string
  matches: Matcher
}

/** One entry, normalised (a CIDR block by its network address, IPv6 compressed), or a reason it is refused. */
export function parseIpEntry(text: string): ParsedEntry | { error: string } {
  const value = text.trim()
  if (value.length === 0 || value.length > 100) return { error: 'must be an IP address, a CIDR block or a range' }
  if (value.includes('/')) {
    const [base = '', bits = ''] = value.split('/')
    const address = parseAddress(base)
    const prefix = /^\d{1,3}$/.test(bits) ? Number(bits) : NaN
    const max = address?.kind() === 'ipv4' ? 32 : 128
    if (!address || !(prefix >= 0 && prefix <= max)) return { error: 'must be a CIDR block such as 10.0.0.0/8 or 2001:db8::/32' }
    const network =
      address.kind() === 'ipv4'
        ? ipaddr.IPv4.networkAddressFromCIDR(`${address.toString()}/${prefix}`)
        : ipaddr.IPv6.networkAddressFromCIDR(`${address.toString()}/${prefix}`)
    const range: [Address, number] = [network, prefix]
    return {
      normalised: `${network.toString()}/${prefix}`,
      matches: (candidate) => candidate.kind() === network.kind() && candidate.match(range as [ipaddr.IPv4, number]),
    }
  }
  if (value.includes('-')) {
    const [fromText = '', toText = '', ...rest] = value.split('-')
    const from = parseAddress(fromText)
    const to = parseAddress(toText)
    if (rest.length > 0 || !from || !to || from.kind() !== to.kind()) {
      return { error: 'must be a range of two addresses of the same family, such as 192.0.2.10-192.0.2.50' }
    }
    if (compare(from, to) > 0) return { error: 'must be a range whose first address is not after its last' }
    return {
      normalised: `${from.toString()}-${to.toString()}`,
      matches: (candidate) => candidate.kind() === from.kind() && compare(candidate, from) >= 0 && compare(candidate, to) <= 0,
    }
  }
  const address = parseAddress(value)
  if (!address) return { error: 'must be an IP address, a CIDR block or a range' }
  const normalised = address.toString()
  return { normalised, matches: (candidate) => candidate.kind() === address.kind() && candidate.toString() === normalised }
}

export type IpAllowlistResult = { allowlist: IpAllowlist } | { errors: { index: number; message: string }[] }

/** Normalises every entry (duplicates dropped, first kept) or names every bad one. */
export function normaliseIpAllowlist(input: { enabled: boolean; entries: readonly string[] }): IpAllowlistResult {
  const errors: { index: number; message: string }[] = []
  const entries: string[] = []
  input.entries.forEach((text, index) => {
    const parsed = parseIpEntry(text)
    if ('error' in parsed) errors.push({ index, message: parsed.error })
    else if (!entries.includes(parsed.normalised)) entries.push(parsed.normalised)
  })
  if (errors.length > 0) return { errors }
  return { allowlist: { enabled: input.enabled, entries } }
}

/**
 * The check of an allowlist in force, compiled once: true when the list is off (or there is none), or the address
 * is in one of its entries. An address that cannot be parsed is never allowed by a list that is on.
 */
export function compileIpAllowlist(allowlist: IpAllowlist | null): (address: string) => boolean {
  if (!allowlist || !allowlist.enabled) return () => true
  const matchers = allowlist.entries.flatMap((entry) => {
    const parsed = parseIpEntry(entry)
    return 'error' in parsed ? [] : [parsed.matches]
  })
  return (text) => {
    const address = parseAddress(text)
    return address !== undefined && matchers.some((matches) => matches(address))
  }
}
