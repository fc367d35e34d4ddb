// Which hosts fetch_url may reach. A model (or a page it reads) can ask for
// http://169.254.169.254/ (cloud metadata, with credentials), http://localhost:… (the
// bot's own ports) or a box on the office network: by default those are refused. Every
// redirect hop is checked again, since a public URL can redirect to a private one.
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';

export type HostLookup = (host: string) => Promise<string[]>;

export const systemLookup: HostLookup = async (host) => (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);

/** Loopback, private, link-local, carrier-grade NAT, multicast and unspecified ranges. */
export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return isPrivateAddress(mapped[1]!);
  if (isIP(address) === 4) {
    const [a, b] = address.split('.').map(Number) as [number, number];
    return (
      a === 0 ||
      a === 10 ||
      a === 127 ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      (a === 100 && b >= 64 && b <= 127) ||
      a >= 224
    );
  }
  const lower = address.toLowerCase();
  return lower === '::' || lower === '::1' || /^f[cd]/.test(lower) || /^fe[89ab]/.test(lower) || lower.startsWith('ff');
}

/** Throws unless every address the URL's host resolves to is public. */
export async function assertPublicUrl(url: URL, resolveHost: HostLookup = systemLookup): Promise<void> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host) ? [host] : await resolveHost(host);
  const blocked = addresses.find(isPrivateAddress);
  if (blocked !== undefined) {
    throw new Error(
      `refused: ${host} is a private or local address (${blocked}); fetch_url only reaches the public internet unless FETCH_ALLOW_PRIVATE=true`,
    );
  }
}
