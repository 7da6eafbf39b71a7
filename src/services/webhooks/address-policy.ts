// Which addresses webhooks may reach (no server-side request forgery): public unicast only, unless an operator
// opens ranges with WEBHOOK_ALLOWED_CIDRS. Checked when an endpoint is created and again for the address the
// delivery actually dials (docs/webhooks.md, "SSRF").
import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import ipaddr from 'ipaddr.js'

type Address = ipaddr.IPv4 | ipaddr.IPv6
type Cidr = [Address, number]

/** Named ranges that ipaddr.js calls unicast but that are no public host either. */
const EXTRA_BLOCKED: Cidr[] = ['192.0.0.0/24', '198.18.0.0/15', '64:ff9b:1::/48'].map((c) => ipaddr.parseCIDR(c))

export type Lookup = (hostname: string) => Promise<string[]>

/** Every A and AAAA address of a name. */
export const systemLookup: Lookup = async (hostname) => (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address)

export class AddressPolicy {
  private readonly allowed: Cidr[]

  /** `allowedCidrs`: comma-separated ranges that are allowed whatever their kind (development and tests). */
  constructor(allowedCidrs = '') {
    this.allowed = AddressPolicy.parseCidrs(allowedCidrs) ?? []
  }

  /** Comma-separated CIDRs → parsed ranges; undefined when one does not parse. */
  static parseCidrs(text: string): Cidr[] | undefined {
    const parts = text
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean)
    try {
      return parts.map((p) => ipaddr.parseCIDR(p))
    } catch {
      return undefined
    }
  }

  get opensRanges(): boolean {
    return this.allowed.length > 0
  }

  /**
   * Why an IP literal may not be dialled ('loopback', 'private', 'ipv4Mapped'…), or undefined when it may. IPv4-mapped
   * IPv6 addresses are refused outright, whatever they map to.
   */
  refusal(ip: string): string | undefined {
    const bare = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip
    if (!ipaddr.isValid(bare)) return 'invalid'
    const address = ipaddr.parse(bare)
    if (this.allowed.some(([range, bits]) => address.kind() === range.kind() && address.match(range, bits))) return undefined
    const range = address.range()
    if (range !== 'unicast') return range
    if (EXTRA_BLOCKED.some(([r, bits]) => address.kind() === r.kind() && address.match(r, bits))) return 'reserved'
    return undefined
  }

  /**
   * The addresses to dial for a host, all vetted: throws BlockedAddressError when any address it resolves to is
   * refused (a name with one private record is refused, so a rebinding answer cannot pick it).
   */
  async resolve(hostname: string, resolveName: Lookup = systemLookup): Promise<string[]> {
    const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname
    const addresses = isIP(bare) ? [bare] : await resolveName(bare)
    if (addresses.length === 0) throw new Error(`${bare} has no address`)
    for (const address of addresses) {
      const why = this.refusal(address)
      if (why) throw new BlockedAddressError(bare, address, why)
    }
    return addresses
  }
}

export class BlockedAddressError extends Error {
  readonly code = 'blocked_address'
  constructor(
    readonly host: string,
    readonly address: string,
    readonly range: string,
  ) {
    super(`blocked_address: ${host} resolves to ${address} (${range})`)
    this.name = 'BlockedAddressError'
  }
}
