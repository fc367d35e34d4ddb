// The guard judged on its own, without any network: URL hosts as the URL parser leaves them,
// names through an in-process resolver, and the lookup the HTTP client's sockets use.
import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import {
  BlockedHostError,
  isPrivateAddress,
  resolvePublicAddresses,
  specialPurposeRange,
  vettedLookup,
  type HostLookup,
} from '../../src/tools/network-guard.js';

const dns: Record<string, string[]> = {
  localhost: ['127.0.0.1'],
  'loopback.example': ['127.0.0.1'],
  'metadata.example': ['169.254.169.254'],
  'office.example': ['192.168.1.5'],
  // One private answer among public ones is enough to refuse: the connector might pick it.
  'mixed.example': ['93.184.215.14', '10.0.0.7'],
  'mapped.example': ['::ffff:127.0.0.1'],
  'public.example': ['93.184.215.14'],
  'public6.example': ['2606:4700:4700::1111', '93.184.215.14'],
};
const resolver: HostLookup = async (host) => {
  const addresses = dns[host];
  if (!addresses) throw Object.assign(new Error(`unknown test name ${host}`), { code: 'ENOTFOUND' });
  return addresses;
};

/** [URL, what the guard must decide]: the forms a model or a page can write. */
const table: ReadonlyArray<readonly [string, 'refused' | 'allowed']> = [
  // IPv4 in every notation the URL parser accepts, all of them 127.0.0.1 once parsed.
  ['http://127.0.0.1/', 'refused'],
  ['http://2130706433/', 'refused'],
  ['http://0177.0.0.1/', 'refused'],
  ['http://0x7f.0.0.1/', 'refused'],
  ['http://0x7f.1/', 'refused'],
  ['http://127.1/', 'refused'],
  // IPv4 special-purpose ranges.
  ['http://0.0.0.0/', 'refused'],
  ['http://10.1.2.3/', 'refused'],
  ['http://100.64.0.1/', 'refused'],
  ['http://169.254.169.254/latest/meta-data/', 'refused'],
  ['http://172.16.0.1/', 'refused'],
  ['http://172.31.255.255/', 'refused'],
  ['http://192.0.0.8/', 'refused'],
  ['http://192.0.2.1/', 'refused'],
  ['http://192.88.99.1/', 'refused'],
  ['http://192.168.1.1/', 'refused'],
  ['http://198.18.0.1/', 'refused'],
  ['http://198.19.255.255/', 'refused'],
  ['http://198.51.100.7/', 'refused'],
  ['http://203.0.113.9/', 'refused'],
  ['http://224.0.0.1/', 'refused'],
  ['http://240.0.0.1/', 'refused'],
  ['http://255.255.255.255/', 'refused'],
  // IPv6, and IPv6 carrying an IPv4 address.
  ['http://[::]/', 'refused'],
  ['http://[::1]/', 'refused'],
  ['http://[::ffff:127.0.0.1]/', 'refused'],
  ['http://[::ffff:7f00:1]/', 'refused'],
  ['http://[0:0:0:0:0:ffff:127.0.0.1]/', 'refused'],
  ['http://[::ffff:169.254.169.254]/', 'refused'],
  ['http://[::ffff:a01:203]/', 'refused'],
  ['http://[::127.0.0.1]/', 'refused'],
  ['http://[::8.8.8.8]/', 'refused'],
  ['http://[64:ff9b::7f00:1]/', 'refused'],
  ['http://[64:ff9b::169.254.169.254]/', 'refused'],
  ['http://[64:ff9b:1::808:808]/', 'refused'],
  ['http://[2002:7f00:1::]/', 'refused'],
  ['http://[2002:808:808::1]/', 'refused'],
  ['http://[2001::1]/', 'refused'],
  ['http://[2001:db8::1]/', 'refused'],
  ['http://[3fff::1]/', 'refused'],
  ['http://[100::1]/', 'refused'],
  ['http://[fc00::1]/', 'refused'],
  ['http://[fd12:3456::1]/', 'refused'],
  ['http://[fe80::1]/', 'refused'],
  ['http://[fec0::1]/', 'refused'],
  ['http://[ff02::1]/', 'refused'],
  // Names: local-only names without asking DNS, others by every address they resolve to.
  ['http://localhost/', 'refused'],
  ['http://LOCALHOST./', 'refused'],
  ['http://app.localhost/', 'refused'],
  ['http://printer.local/', 'refused'],
  ['http://intranet/', 'refused'],
  ['http://loopback.example/', 'refused'],
  ['http://metadata.example/', 'refused'],
  ['http://office.example/', 'refused'],
  ['http://mixed.example/', 'refused'],
  ['http://mapped.example/', 'refused'],
  // The public internet.
  ['http://1.1.1.1/', 'allowed'],
  ['http://8.8.8.8/', 'allowed'],
  ['https://93.184.216.34/', 'allowed'],
  ['http://172.32.0.1/', 'allowed'],
  ['http://[2606:4700:4700::1111]/', 'allowed'],
  ['http://[2001:4860:4860::8888]/', 'allowed'],
  ['http://[::ffff:8.8.8.8]/', 'allowed'],
  ['http://[64:ff9b::808:808]/', 'allowed'],
  ['http://public.example/', 'allowed'],
  ['https://public6.example:8443/', 'allowed'],
];

describe('the network guard', () => {
  it.each(table)('%s is %s', async (url, verdict) => {
    const judged = resolvePublicAddresses(new URL(url).hostname, { resolveHost: resolver });
    if (verdict === 'refused') {
      await expect(judged).rejects.toThrow(BlockedHostError);
      await expect(judged).rejects.toThrow(
        /^refused: .* is a private or local address \(.+\); fetch_url only reaches the public internet/,
      );
    } else {
      expect((await judged).length).toBeGreaterThan(0);
    }
  });

  it('names the range it refused, and the IPv4 address inside an IPv6 one', () => {
    expect(specialPurposeRange('169.254.169.254')).toBe('169.254.0.0/16 link-local, cloud metadata');
    expect(specialPurposeRange('198.18.0.1')).toBe('198.18.0.0/15 benchmarking');
    expect(specialPurposeRange('255.255.255.255')).toBe('255.255.255.255/32 broadcast');
    expect(specialPurposeRange('::ffff:7f00:1')).toBe('IPv4-mapped 127.0.0.1: 127.0.0.0/8 loopback');
    expect(specialPurposeRange('64:ff9b::a9fe:a9fe')).toBe(
      'NAT64 for 169.254.169.254: 169.254.0.0/16 link-local, cloud metadata',
    );
    expect(specialPurposeRange('2002:7f00:1::')).toBe('2002::/16 6to4 (deprecated), carrying 127.0.0.1');
    expect(specialPurposeRange('::7f00:1')).toBe('::/96 IPv4-compatible (deprecated), carrying 127.0.0.1');
    expect(specialPurposeRange('fe80::1%eth0')).toBe('fe80::/10 link-local');
    expect(specialPurposeRange('4000::1')).toBe('outside 2000::/3, the global unicast space');
    expect(specialPurposeRange('example.com')).toBe('not an IP address');
    expect(specialPurposeRange('93.184.215.14')).toBeUndefined();
    expect(['8.8.8.8', '2606:4700::1111', '172.32.0.1', '::ffff:1.1.1.1'].some(isPrivateAddress)).toBe(false);
  });

  it('asks the resolver once per name, never for an IP address or a local-only name', async () => {
    const asked: string[] = [];
    const counting: HostLookup = async (host) => {
      asked.push(host);
      return resolver(host);
    };
    await resolvePublicAddresses('public.example', { resolveHost: counting });
    await resolvePublicAddresses('[2606:4700:4700::1111]', { resolveHost: counting });
    await expect(resolvePublicAddresses('localhost', { resolveHost: counting })).rejects.toThrow(
      /localhost is a private or local address \(a name for this machine\)/,
    );
    expect(asked).toEqual(['public.example']);
  });
});

describe('the lookup the HTTP client connects through', () => {
  const lookupOnce = (
    lookup: ReturnType<typeof vettedLookup>,
    host: string,
    options: { all?: boolean; family?: number },
  ) =>
    new Promise<{ error: NodeJS.ErrnoException | null; address: string | LookupAddress[]; family?: number }>(
      (resolve) => {
        lookup(host, options, (error, address, family) => resolve({ error, address, family }));
      },
    );

  it('hands the socket exactly the addresses it judged, in the shape it asked for', async () => {
    const lookup = vettedLookup({ resolveHost: resolver });
    expect(await lookupOnce(lookup, 'public6.example', { all: true })).toEqual({
      error: null,
      address: [
        { address: '2606:4700:4700::1111', family: 6 },
        { address: '93.184.215.14', family: 4 },
      ],
      family: undefined,
    });
    expect(await lookupOnce(lookup, 'public6.example', {})).toEqual({
      error: null,
      address: '2606:4700:4700::1111',
      family: 6,
    });
    expect(await lookupOnce(lookup, 'public6.example', { family: 4 })).toEqual({
      error: null,
      address: '93.184.215.14',
      family: 4,
    });
  });

  it('fails the connection when any answer is private', async () => {
    const { error } = await lookupOnce(vettedLookup({ resolveHost: resolver }), 'mixed.example', { all: true });
    expect(error).toBeInstanceOf(BlockedHostError);
    expect(error?.message).toMatch(
      /^refused: mixed\.example \(10\.0\.0\.7\) is a private or local address \(10\.0\.0\.0\/8 private network\)/,
    );
  });

  it('lets private answers through when private networks are allowed', async () => {
    const lookup = vettedLookup({ resolveHost: resolver, allowPrivateNetworks: true });
    expect(await lookupOnce(lookup, 'loopback.example', {})).toEqual({ error: null, address: '127.0.0.1', family: 4 });
  });
});
