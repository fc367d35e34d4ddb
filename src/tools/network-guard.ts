// Which hosts fetch_url may reach. A model (or a page it reads) can ask for
// http://169.254.169.254/ (cloud metadata, with credentials), http://localhost:… (the
// bot's own ports) or a box on the office network: by default those are refused.
//
// One idea: a host is judged by the addresses the socket will really connect to, and a name
// is resolved once. `vettedLookup` is handed to the HTTP client as its DNS lookup: it resolves
// the name, refuses the connection if any answer is special-purpose, and gives the socket the
// very addresses it judged. Checking first and letting the client resolve again would let a
// DNS answer that changes in between (rebinding) reach an internal address.
//
// Addresses are compared as bytes (net.BlockList), never as text: the URL parser writes
// [::ffff:127.0.0.1] as [::ffff:7f00:1], and http://2130706433/, 0177.0.0.1 and 0x7f.1 all
// become 127.0.0.1, so only the parsed host is judged.
import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

export type HostLookup = (host: string) => Promise<string[]>;

/** Why an address may not be reached (a range and its name), or undefined when it is public. */
export type AddressPolicy = (address: string) => string | undefined;

const systemLookup: HostLookup = async (host) =>
  (await dnsLookup(host, { all: true, verbatim: true })).map((entry) => entry.address);

/** A refusal by the guard, told apart from network failures so the tool can say it plainly. */
export class BlockedHostError extends Error {
  readonly code = 'EBLOCKEDHOST';
}

type Range = { subnet: string; prefix: number; name: string; list: BlockList };

function ranges(family: 'ipv4' | 'ipv6', table: ReadonlyArray<readonly [string, string]>): Range[] {
  return table.map(([cidr, name]) => {
    const [subnet, prefix] = cidr.split('/') as [string, string];
    const list = new BlockList();
    list.addSubnet(subnet, Number(prefix), family);
    return { subnet, prefix: Number(prefix), name, list };
  });
}

// The IANA IPv4 Special-Purpose Address Registry, plus multicast and the reserved 240/4. The
// few entries the registry marks globally reachable (AS112, AMT, the 192.0.0.9-10 anycasts)
// are refused too: no web page lives there. 255.255.255.255 comes before 240/4 for its name.
const IPV4_SPECIAL = ranges('ipv4', [
  ['0.0.0.0/8', '"this network"'],
  ['10.0.0.0/8', 'private network'],
  ['100.64.0.0/10', 'carrier-grade NAT'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local, cloud metadata'],
  ['172.16.0.0/12', 'private network'],
  ['192.0.0.0/24', 'IETF protocol assignments'],
  ['192.0.2.0/24', 'documentation (TEST-NET-1)'],
  ['192.31.196.0/24', 'AS112'],
  ['192.52.193.0/24', 'AMT'],
  ['192.88.99.0/24', '6to4 relay anycast'],
  ['192.168.0.0/16', 'private network'],
  ['192.175.48.0/24', 'AS112 direct delegation'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation (TEST-NET-2)'],
  ['203.0.113.0/24', 'documentation (TEST-NET-3)'],
  ['224.0.0.0/4', 'multicast'],
  ['255.255.255.255/32', 'broadcast'],
  ['240.0.0.0/4', 'reserved'],
]);

// Only 2000::/3 is global unicast today; everything outside it is refused, named where it has a
// name. Inside it, the special-purpose blocks of the IANA IPv6 registry. All of 2001::/23 is
// refused, without the registry's few globally reachable exceptions (PCP and TURN anycast,
// AMT, AS112, ORCHIDv2, drone remote ID): no web page lives there, and Teredo (2001::/32)
// tunnels to an IPv4 host we cannot judge.
const IPV6_SPECIAL = ranges('ipv6', [
  ['2001::/23', 'IETF protocol assignments, Teredo'],
  ['2001:db8::/32', 'documentation'],
  ['2620:4f:8000::/48', 'AS112 direct delegation'],
  ['3fff::/20', 'documentation'],
  ['100::/64', 'discard-only'],
  ['5f00::/16', 'SRv6 SIDs'],
  ['fc00::/7', 'unique local (private network)'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'site-local (deprecated)'],
  ['ff00::/8', 'multicast'],
]);
const GLOBAL_UNICAST = ranges('ipv6', [['2000::/3', 'global unicast']])[0]!.list;

function named(range: Range): string {
  return `${range.subnet}/${range.prefix} ${range.name}`;
}

/**
 * Why `address` must not be reached, or undefined when it is a public address. Anything that
 * is not an IP address is refused. IPv6 forms that carry an IPv4 address are unwrapped:
 * IPv4-mapped (::ffff:0:0/96) and NAT64 (64:ff9b::/96, which a DNS64 network answers for every
 * IPv4-only site) are judged by the IPv4 address inside; IPv4-compatible (::/96, deprecated),
 * local-use NAT64 (64:ff9b:1::/48) and 6to4 (2002::/16, deprecated) are refused whatever they
 * carry, since a relay we cannot see decides where they lead.
 */
export function specialPurposeRange(address: string): string | undefined {
  const family = isIP(address);
  if (family === 4) {
    const range = IPV4_SPECIAL.find((candidate) => candidate.list.check(address, 'ipv4'));
    return range && named(range);
  }
  if (family !== 6) return 'not an IP address';
  // A zone (fe80::1%eth0) names an interface, not an address: judge the address.
  const bare = address.replace(/%.*$/, '');
  const bytes = ipv6Bytes(bare);
  const embedded = (offset: number): string => Array.from(bytes.subarray(offset, offset + 4)).join('.');
  const zeros = (from: number, to: number): boolean => bytes.subarray(from, to).every((byte) => byte === 0);

  if (zeros(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) {
    const inner = specialPurposeRange(embedded(12));
    return inner && `IPv4-mapped ${embedded(12)}: ${inner}`;
  }
  if (zeros(0, 12)) {
    if (zeros(12, 15) && bytes[15] === 0) return '::/128 unspecified';
    if (zeros(12, 15) && bytes[15] === 1) return '::1/128 loopback';
    return `::/96 IPv4-compatible (deprecated), carrying ${embedded(12)}`;
  }
  if (startsWith(bytes, [0x00, 0x64, 0xff, 0x9b]) && zeros(4, 12)) {
    const inner = specialPurposeRange(embedded(12));
    return inner && `NAT64 for ${embedded(12)}: ${inner}`;
  }
  if (startsWith(bytes, [0x00, 0x64, 0xff, 0x9b, 0x00, 0x01])) return '64:ff9b:1::/48 local-use NAT64';
  if (startsWith(bytes, [0x20, 0x02])) return `2002::/16 6to4 (deprecated), carrying ${embedded(2)}`;

  const range = IPV6_SPECIAL.find((candidate) => candidate.list.check(bare, 'ipv6'));
  if (range) return named(range);
  if (!GLOBAL_UNICAST.check(bare, 'ipv6')) return 'outside 2000::/3, the global unicast space';
  return undefined;
}

/**
 * Loopback, private, link-local, metadata, multicast, reserved or otherwise special-purpose.
 * @internal
 */
export function isPrivateAddress(address: string): boolean {
  return specialPurposeRange(address) !== undefined;
}

function startsWith(bytes: Uint8Array, prefix: readonly number[]): boolean {
  return prefix.every((byte, index) => bytes[index] === byte);
}

/** The 16 bytes of an IPv6 address that `isIP` has already accepted (no zone). */
function ipv6Bytes(address: string): Uint8Array {
  const bytes = new Uint8Array(16);
  let text = address;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    // A trailing dotted quad is the last 32 bits: rewrite it as two hex groups.
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = text.slice(0, dotted.index) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::') as [string, string | undefined];
  const groups = (part: string): number[] => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const front = groups(head);
  const back = tail === undefined ? [] : groups(tail);
  const all = [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
  all.forEach((group, index) => {
    bytes[index * 2] = group >> 8;
    bytes[index * 2 + 1] = group & 0xff;
  });
  return bytes;
}

/**
 * Why a host name must not be resolved at all, or undefined. Names that only mean something
 * on this machine or its network: localhost (RFC 6761), .local (mDNS), .home.arpa, .internal,
 * and single-label names, which the resolver completes with the local search domains.
 */
function localOnlyName(name: string): string | undefined {
  const host = name.toLowerCase().replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return 'a name for this machine';
  if (/\.(?:local|home\.arpa|internal)$/.test(host)) return 'a name of the local network';
  if (!host.includes('.')) return 'a single-label name, completed by the local network';
  return undefined;
}

export interface GuardOptions {
  resolveHost?: HostLookup;
  /** Which addresses are refused (default: every special-purpose range). */
  addressPolicy?: AddressPolicy;
}

function refusal(host: string, reason: string): BlockedHostError {
  return new BlockedHostError(
    `refused: ${host} is a private or local address (${reason}); fetch_url only reaches the public internet unless FETCH_ALLOW_PRIVATE=true`,
  );
}

/**
 * Throws unless a URL host (as the URL parser wrote it) may be contacted: an IP address must be
 * public, a name must not be local-only. Names are judged again by their addresses at connect time.
 */
export function assertPublicHost(hostname: string, addressPolicy: AddressPolicy = specialPurposeRange): void {
  const host = hostname.replace(/^\[|\]$/g, '');
  const reason = isIP(host) ? addressPolicy(host) : localOnlyName(host);
  if (reason !== undefined) throw refusal(host, reason);
}

/**
 * Resolves `hostname` once and returns its addresses if every one is public; throws otherwise.
 * Refusing when any answer is private (not only the first) leaves no choice to the connector's
 * address selection or a retry.
 * @internal
 */
export async function resolvePublicAddresses(hostname: string, options: GuardOptions = {}): Promise<string[]> {
  const policy = options.addressPolicy ?? specialPurposeRange;
  const host = hostname.replace(/^\[|\]$/g, '');
  assertPublicHost(host, policy);
  if (isIP(host)) return [host];
  const addresses = await (options.resolveHost ?? systemLookup)(host);
  if (addresses.length === 0) throw Object.assign(new Error(`${host} has no address`), { code: 'ENOTFOUND' });
  for (const address of addresses) {
    const reason = policy(address);
    if (reason !== undefined) throw refusal(`${host} (${address})`, reason);
  }
  return addresses;
}

/**
 * A DNS lookup for the HTTP client's sockets (net/tls `lookup` option): resolve once with
 * `resolveHost`, judge every answer unless private networks are allowed, and connect to exactly
 * those addresses. TLS still verifies the certificate and sends SNI for the name, since the
 * socket is given the name and only its address lookup is replaced.
 */
export function vettedLookup(options: GuardOptions & { allowPrivateNetworks?: boolean }): LookupFunction {
  const resolve = async (host: string): Promise<string[]> =>
    options.allowPrivateNetworks
      ? isIP(host)
        ? [host]
        : (options.resolveHost ?? systemLookup)(host)
      : resolvePublicAddresses(host, options);
  return (hostname, lookupOptions, callback) => {
    const wanted =
      lookupOptions.family === 'IPv4' ? 4 : lookupOptions.family === 'IPv6' ? 6 : lookupOptions.family || 0;
    const deliver = (addresses: string[]): void => {
      const usable: LookupAddress[] = addresses
        .map((address) => ({ address, family: isIP(address) }))
        .filter((entry) => entry.family !== 0 && (wanted === 0 || entry.family === wanted));
      const first = usable[0];
      if (!first) {
        callback(Object.assign(new Error(`${hostname} has no IPv${wanted} address`), { code: 'ENOTFOUND' }), '', 0);
      } else if (lookupOptions.all) {
        callback(null, usable);
      } else {
        callback(null, first.address, first.family);
      }
    };
    // A callback that throws must not be called a second time as a lookup failure.
    resolve(hostname)
      .then(deliver, (error: Error) => callback(error, '', 0))
      .catch((error: unknown) => {
        process.nextTick(() => {
          throw error;
        });
      });
  };
}
