import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/*
 * Herald sends requests to URLs its customers name. Without a rule, a customer could make Herald
 * call what only Herald's network reaches: a cloud's metadata service (credentials), a database, an
 * admin port on loopback. So an address must be a public unicast one: ipaddr.js's range names
 * every special block (loopback, private, link-local with 169.254.169.254, carrier-grade NAT,
 * unique-local, multicast, unspecified, the IPv4-in-IPv6 forms, reserved...), and only `unicast`
 * is left. An IPv4-mapped IPv6 address (::ffff:10.0.0.1) is judged as the IPv4 address it is.
 */

/** The range ipaddr.js gives `address`, IPv4-mapped IPv6 judged as IPv4; undefined if not an IP. */
export function addressRange(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return undefined;
  return ipaddr.process(address).range();
}

/** Whether `address` (an IP literal) is one Herald may send to: public unicast only. */
export function isPublicAddress(address: string): boolean {
  return addressRange(address) === 'unicast';
}

/** A resolved address Herald may not send to. */
export class ForbiddenAddressError extends Error {
  readonly code = 'forbidden_address';
  constructor(
    readonly host: string,
    readonly address: string,
  ) {
    const range = addressRange(address) ?? 'invalid';
    super(
      host === address
        ? `${address} is a ${range} address, which webhooks may not reach`
        : `${host} resolves to ${address}, a ${range} address, which webhooks may not reach`,
    );
    this.name = 'ForbiddenAddressError';
  }
}

/** A host that does not resolve. */
export class UnresolvedHostError extends Error {
  readonly code = 'unresolved_host';
  constructor(
    readonly host: string,
    cause: unknown,
  ) {
    super(`${host} does not resolve (${(cause as { code?: string }).code ?? String(cause)})`);
    this.name = 'UnresolvedHostError';
  }
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** How a host's addresses are found; dns.lookup (the system resolver, /etc/hosts) by default. */
export type Resolver = (host: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = async (host) => {
  const all = await dnsLookup(host, { all: true, verbatim: true });
  return all.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

/**
 * Every address `host` resolves to, refused whole when any one is not public (a name with one
 * private address among public ones could be answered with it on the next lookup). `allowPrivate`
 * lifts the rule (development only). An IP literal is judged without a lookup.
 */
export async function resolveAllowed(
  host: string,
  opts: { allowPrivate: boolean; resolver?: Resolver },
): Promise<ResolvedAddress[]> {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  let found: ResolvedAddress[];
  const family = isIP(bare);
  if (family !== 0) {
    found = [{ address: bare, family: family === 6 ? 6 : 4 }];
  } else {
    try {
      found = await (opts.resolver ?? systemResolver)(bare);
    } catch (err) {
      throw new UnresolvedHostError(bare, err);
    }
    if (found.length === 0) throw new UnresolvedHostError(bare, new Error('no address'));
  }
  if (!opts.allowPrivate) {
    const bad = found.find((a) => !isPublicAddress(a.address));
    if (bad) throw new ForbiddenAddressError(bare, bad.address);
  }
  return found;
}
