import { describe, it, expect } from 'vitest';
import {
  assertProviderUrlAllowed,
  checkProviderUrlSyntax,
  classifyIp,
  isIpAllowed,
  ProviderUrlError,
  type ProviderUrlErrorReason,
  type ProviderUrlPolicy,
} from '../../src/providers/index.js';
import { parseIPv6, type LookupAll } from '../../src/providers/url-guard.js';

async function refusal(url: string, policy: ProviderUrlPolicy, lookup?: LookupAll): Promise<ProviderUrlError> {
  try {
    await assertProviderUrlAllowed(url, policy, lookup ? { lookup } : {});
  } catch (err) {
    expect(err).toBeInstanceOf(ProviderUrlError);
    return err as ProviderUrlError;
  }
  throw new Error(`expected ${url} to be refused under ${policy}`);
}

const resolvesTo =
  (...addresses: string[]): LookupAll =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

const failingLookup: LookupAll = async () => {
  throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
};

describe('checkProviderUrlSyntax', () => {
  it.each<[string, ProviderUrlErrorReason]>([
    ['', 'invalid_url'],
    ['not a url', 'invalid_url'],
    ['/v1/chat', 'invalid_url'],
    ['ftp://example.com/', 'unsupported_protocol'],
    ['file:///etc/passwd', 'unsupported_protocol'],
    ['javascript:alert(1)', 'unsupported_protocol'],
    ['gopher://127.0.0.1:6379/_INFO', 'unsupported_protocol'],
    ['https://user:pass@api.example.com/v1', 'credentials_in_url'],
    ['https://token@api.example.com/v1', 'credentials_in_url'],
    ['http://metadata.google.internal/computeMetadata/v1/', 'blocked_hostname'],
    ['http://METADATA.google.internal./', 'blocked_hostname'],
    ['http://metadata/computeMetadata/v1/', 'blocked_hostname'],
    ['http://169.254.169.254/latest/meta-data/', 'blocked_address'],
    ['http://[fd00:ec2::254]/latest/meta-data/', 'blocked_address'],
    ['http://[::ffff:169.254.169.254]/', 'blocked_address'],
    ['http://[::ffff:a9fe:a9fe]/', 'blocked_address'],
    ['http://2852039166/', 'blocked_address'], // 169.254.169.254 as a decimal integer
    ['http://0xa9.0xfe.0xa9.0xfe/', 'blocked_address'], // hex octets
    ['http://0.0.0.0:8080/', 'blocked_address'],
    ['http://0/', 'blocked_address'],
    ['http://[::]/', 'blocked_address'],
    ['http://[fe80::1]/', 'blocked_address'],
    ['http://169.254.10.20/', 'blocked_address'],
    ['http://224.0.0.1/', 'blocked_address'],
    ['http://255.255.255.255/', 'blocked_address'],
    ['http://100.100.100.200/', 'blocked_address'],
  ])('refuses %j (%s)', (url, reason) => {
    let caught: unknown;
    try {
      checkProviderUrlSyntax(url);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ProviderUrlError);
    expect((caught as ProviderUrlError).reason).toBe(reason);
    expect((caught as ProviderUrlError).code).toBe('provider_url_not_allowed');
    expect((caught as ProviderUrlError).message.length).toBeGreaterThan(10);
  });

  it.each([
    'https://api.openai.com/v1',
    'http://localhost:11434/v1',
    'http://127.0.0.1:8080',
    'http://10.1.2.3:8000/v1',
    'http://[::1]:8080/',
    'https://my-resource.openai.azure.com/openai/deployments/x?api-version=2024-10-21',
  ])('accepts %s under allow-private', (url) => {
    expect(checkProviderUrlSyntax(url)).toBeInstanceOf(URL);
  });

  it('with public-only it also refuses private / loopback literals', () => {
    expect(() => checkProviderUrlSyntax('http://10.0.0.5/', 'public-only')).toThrow(ProviderUrlError);
    expect(() => checkProviderUrlSyntax('http://[::1]/', 'public-only')).toThrow(/loopback/);
    expect(() => checkProviderUrlSyntax('https://api.openai.com/v1', 'public-only')).not.toThrow();
    // Host names are not resolved by the sync check.
    expect(() => checkProviderUrlSyntax('http://localhost/', 'public-only')).not.toThrow();
  });
});

describe('assertProviderUrlAllowed — literal IPs', () => {
  it.each([
    ['http://127.0.0.1:8080/v1', 'loopback'],
    ['http://127.8.9.10/', 'loopback'],
    ['http://[::1]/', 'loopback'],
    ['http://10.0.0.1/', 'private'],
    ['http://172.16.0.1/', 'private'],
    ['http://172.31.255.255/', 'private'],
    ['http://192.168.1.1/', 'private'],
    ['http://[fc00::1]/', 'private'],
    ['http://[fd12:3456::1]/', 'private'],
    ['http://100.64.0.1/', 'carrier-grade NAT'],
    ['http://100.127.255.255/', 'carrier-grade NAT'],
    ['http://[::ffff:10.0.0.1]/', 'private'],
    ['http://[::ffff:127.0.0.1]/', 'loopback'],
    ['http://[64:ff9b::10.0.0.1]/', 'private'],
  ])('%s is allowed with allow-private but refused with public-only (%s)', async (url, label) => {
    await expect(assertProviderUrlAllowed(url, 'allow-private')).resolves.toBeUndefined();
    const e = await refusal(url, 'public-only');
    expect(e.reason).toBe('blocked_address');
    expect(e.message).toContain(label);
  });

  it.each([
    'http://169.254.169.254/',
    'http://[::ffff:169.254.169.254]/',
    'http://[0:0:0:0:0:ffff:a9fe:a9fe]/',
    'http://[::169.254.169.254]/',
    'http://[64:ff9b::169.254.169.254]/',
    'http://[2002:a9fe:a9fe::1]/',
    'http://[fd00:ec2::254]/',
    'http://[fe80::abcd]/',
    'http://169.254.0.1/',
    'http://0.0.0.0/',
    'http://0.1.2.3/',
    'http://[::]/',
  ])('%s is refused under both policies', async (url) => {
    for (const policy of ['allow-private', 'public-only'] as const) {
      const e = await refusal(url, policy);
      expect(e.reason).toBe('blocked_address');
    }
  });

  it('public literal addresses pass both policies', async () => {
    await expect(assertProviderUrlAllowed('http://8.8.8.8/', 'public-only')).resolves.toBeUndefined();
    await expect(assertProviderUrlAllowed('http://[2606:4700::1111]/', 'public-only')).resolves.toBeUndefined();
    await expect(assertProviderUrlAllowed('http://172.32.0.1/', 'public-only')).resolves.toBeUndefined();
    await expect(assertProviderUrlAllowed('http://100.128.0.1/', 'public-only')).resolves.toBeUndefined();
  });
});

describe('assertProviderUrlAllowed — DNS', () => {
  it('refuses a host name that resolves to the metadata address, under both policies', async () => {
    for (const policy of ['allow-private', 'public-only'] as const) {
      const e = await refusal('https://innocent.example.com/v1', policy, resolvesTo('169.254.169.254'));
      expect(e.reason).toBe('blocked_address');
      expect(e.message).toContain('cloud metadata');
      expect(e.message).not.toContain('169.254'); // resolution results are not echoed
    }
  });

  it('refuses when ANY resolved address is blocked', async () => {
    const e = await refusal('https://mixed.example.com/', 'public-only', resolvesTo('93.184.216.34', '10.0.0.7'));
    expect(e.message).toContain('private');
    await expect(
      assertProviderUrlAllowed('https://mixed.example.com/', 'allow-private', { lookup: resolvesTo('93.184.216.34', '10.0.0.7') }),
    ).resolves.toBeUndefined();
  });

  it('refuses IPv4-mapped IPv6 answers', async () => {
    const e = await refusal('https://v6.example.com/', 'allow-private', resolvesTo('::ffff:169.254.169.254'));
    expect(e.reason).toBe('blocked_address');
  });

  it('accepts public answers', async () => {
    await expect(
      assertProviderUrlAllowed('https://api.example.com/v1', 'public-only', { lookup: resolvesTo('93.184.216.34', '2606:2800:220:1::1') }),
    ).resolves.toBeUndefined();
  });

  it('unresolvable host names are refused with a clear reason', async () => {
    const e = await refusal('https://does-not-exist.example/', 'public-only', failingLookup);
    expect(e.reason).toBe('unresolvable');
    const empty = await refusal('https://empty.example/', 'public-only', resolvesTo());
    expect(empty.reason).toBe('unresolvable');
  });

  it('localhost (real resolver) is loopback: allowed with allow-private, refused with public-only', async () => {
    await expect(assertProviderUrlAllowed('http://localhost:11434/v1', 'allow-private')).resolves.toBeUndefined();
    const e = await refusal('http://localhost:11434/v1', 'public-only');
    expect(e.message).toContain('loopback');
  });

  it('metadata host names are refused before any DNS lookup', async () => {
    let looked = false;
    const e = await refusal('http://metadata.google.internal/', 'allow-private', async () => {
      looked = true;
      return [{ address: '8.8.8.8', family: 4 }];
    });
    expect(e.reason).toBe('blocked_hostname');
    expect(looked).toBe(false);
  });
});

describe('IP helpers', () => {
  it('parses IPv6 forms', () => {
    expect(parseIPv6('::')).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    expect(parseIPv6('::1')).toEqual([0, 0, 0, 0, 0, 0, 0, 1]);
    expect(parseIPv6('fe80::1%eth0')).toEqual([0xfe80, 0, 0, 0, 0, 0, 0, 1]);
    expect(parseIPv6('::ffff:169.254.169.254')).toEqual([0, 0, 0, 0, 0, 0xffff, 0xa9fe, 0xa9fe]);
    expect(parseIPv6('1:2:3:4:5:6:7.8.9.10')).toEqual([1, 2, 3, 4, 5, 6, 0x0708, 0x090a]);
    expect(parseIPv6('2001:db8:0:0:0:0:0:1')).toEqual([0x2001, 0xdb8, 0, 0, 0, 0, 0, 1]);
    expect(parseIPv6('1::2::3')).toBeNull();
    expect(parseIPv6('12345::')).toBeNull();
    expect(parseIPv6('1:2:3:4:5:6:7:8:9')).toBeNull();
    expect(parseIPv6('::ffff:300.1.1.1')).toBeNull();
    expect(parseIPv6('example.com')).toBeNull();
  });

  it('classifies addresses', () => {
    expect(classifyIp('169.254.169.254')).toBe('metadata');
    expect(classifyIp('[fd00:ec2::254]')).toBe('metadata');
    expect(classifyIp('169.254.1.1')).toBe('link_local');
    expect(classifyIp('febf::1')).toBe('link_local');
    expect(classifyIp('fec0::1')).toBe('private');
    expect(classifyIp('127.0.0.1')).toBe('loopback');
    expect(classifyIp('100.64.0.0')).toBe('shared');
    expect(classifyIp('198.18.0.1')).toBe('special');
    expect(classifyIp('2001:db8::1')).toBe('special');
    expect(classifyIp('240.0.0.1')).toBe('reserved');
    expect(classifyIp('ff02::1')).toBe('multicast');
    expect(classifyIp('1.1.1.1')).toBe('public');
    expect(classifyIp('not-an-ip')).toBeNull();
    expect(isIpAllowed('10.0.0.1', 'allow-private')).toBe(true);
    expect(isIpAllowed('10.0.0.1', 'public-only')).toBe(false);
    expect(isIpAllowed('169.254.169.254', 'allow-private')).toBe(false);
    expect(isIpAllowed('garbage', 'allow-private')).toBe(false);
  });
});
