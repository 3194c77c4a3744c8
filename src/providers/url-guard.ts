/**
 * SSRF guard for model-provider URLs.
 *
 * Always refused (both policies):
 *   - schemes other than http/https, URLs with embedded credentials
 *   - cloud metadata endpoints: 169.254.169.254, 100.100.100.200 (Alibaba), fd00:ec2::254 (AWS IPv6),
 *     and the names metadata.google.internal, metadata.goog, metadata, instance-data(.ec2.internal)
 *   - link-local 169.254.0.0/16, fe80::/10
 *   - unspecified / "this network" 0.0.0.0/8, ::  (0.0.0.0 reaches localhost on Linux)
 *   - multicast 224.0.0.0/4, ff00::/8, broadcast 255.255.255.255, reserved 240.0.0.0/4
 * Additionally refused with `public-only`:
 *   - loopback 127.0.0.0/8, ::1
 *   - private 10/8, 172.16/12, 192.168/16, fc00::/7, fec0::/10 (old site-local), 64:ff9b:1::/48
 *   - shared address space (CGNAT) 100.64.0.0/10
 *   - special-purpose / documentation: 192.0.0.0/24, 192.0.2.0/24, 198.18.0.0/15,
 *     198.51.100.0/24, 203.0.113.0/24, 2001:db8::/32, 100::/64
 * IPv6 forms that embed an IPv4 address are judged by that IPv4 address: IPv4-mapped
 * (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::/96) and 6to4 (2002::/16).
 *
 * Limitation: the check resolves the name, then the HTTP client resolves it again when it
 * connects (DNS rebinding window). Run the check right before each call to keep that window
 * small; the adapters additionally never follow redirects.
 */
import { lookup as dnsLookup } from 'node:dns/promises';

export type ProviderUrlPolicy = 'allow-private' | 'public-only';

export type ProviderUrlErrorReason = 'invalid_url' | 'unsupported_protocol' | 'credentials_in_url' | 'blocked_hostname' | 'blocked_address' | 'unresolvable';

export class ProviderUrlError extends Error {
  override readonly name = 'ProviderUrlError';
  readonly code = 'provider_url_not_allowed';
  constructor(
    public readonly reason: ProviderUrlErrorReason,
    message: string,
  ) {
    super(message);
  }
}

export type IpClass =
  | 'public'
  | 'unspecified'
  | 'metadata'
  | 'link_local'
  | 'multicast'
  | 'broadcast'
  | 'reserved'
  | 'loopback'
  | 'private'
  | 'shared' // CGNAT 100.64/10
  | 'special'; // documentation / benchmarking / protocol assignments

const ALWAYS_BLOCKED: ReadonlySet<IpClass> = new Set(['unspecified', 'metadata', 'link_local', 'multicast', 'broadcast', 'reserved']);
const PUBLIC_ONLY_BLOCKED: ReadonlySet<IpClass> = new Set([...ALWAYS_BLOCKED, 'loopback', 'private', 'shared', 'special']);

const CLASS_LABEL: Record<IpClass, string> = {
  public: 'public',
  unspecified: 'unspecified (0.0.0.0 / ::)',
  metadata: 'cloud metadata service',
  link_local: 'link-local',
  multicast: 'multicast',
  broadcast: 'broadcast',
  reserved: 'reserved',
  loopback: 'loopback',
  private: 'private network',
  shared: 'shared (carrier-grade NAT)',
  special: 'special-purpose',
};

const BLOCKED_HOSTNAMES = new Set(['metadata.google.internal', 'metadata.goog', 'metadata', 'instance-data', 'instance-data.ec2.internal']);

// ---------------------------------------------------------------------------------------
// IP parsing / classification
// ---------------------------------------------------------------------------------------

function parseIPv4(s: string): number | null {
  const parts = s.split('.');
  if (parts.length !== 4) return null;
  let n = 0;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p)) return null;
    const v = Number(p);
    if (v > 255) return null;
    n = n * 256 + v;
  }
  return n;
}

/** 8 groups of 16 bits, or null. Accepts `::` compression, an embedded dotted IPv4 tail and a `%zone`. */
export function parseIPv6(input: string): number[] | null {
  let s = input;
  const zone = s.indexOf('%');
  if (zone !== -1) s = s.slice(0, zone);
  if (s.startsWith('[') && s.endsWith(']')) s = s.slice(1, -1);
  if (!s.includes(':')) return null;
  let tail: number[] = [];
  const lastColon = s.lastIndexOf(':');
  const maybeV4 = s.slice(lastColon + 1);
  if (maybeV4.includes('.')) {
    const v4 = parseIPv4(maybeV4);
    if (v4 === null) return null;
    tail = [Math.floor(v4 / 65536), v4 % 65536];
    // Drop the dotted tail, keeping a '::' that directly precedes it (e.g. '::1.2.3.4').
    s = s.slice(0, lastColon + 1);
    if (!s.endsWith('::')) s = s.slice(0, -1);
  }
  const dbl = s.indexOf('::');
  if (dbl !== -1 && s.indexOf('::', dbl + 1) !== -1) return null;
  const parseGroups = (part: string): number[] | null => {
    if (part === '') return [];
    const out: number[] = [];
    for (const g of part.split(':')) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
      out.push(parseInt(g, 16));
    }
    return out;
  };
  const need = 8 - tail.length;
  let groups: number[];
  if (dbl !== -1) {
    const head = parseGroups(s.slice(0, dbl));
    const rest = parseGroups(s.slice(dbl + 2));
    if (!head || !rest) return null;
    const fill = need - head.length - rest.length;
    if (fill < 1) return null;
    groups = [...head, ...new Array<number>(fill).fill(0), ...rest];
  } else {
    const all = parseGroups(s);
    if (!all || all.length !== need) return null;
    groups = all;
  }
  return [...groups, ...tail];
}

function inV4(n: number, base: string, prefix: number): boolean {
  const b = parseIPv4(base)!;
  const size = 2 ** (32 - prefix);
  return Math.floor(n / size) === Math.floor(b / size);
}

function classifyV4(n: number): IpClass {
  if (inV4(n, '0.0.0.0', 8)) return 'unspecified';
  if (n === parseIPv4('169.254.169.254') || n === parseIPv4('100.100.100.200')) return 'metadata';
  if (inV4(n, '169.254.0.0', 16)) return 'link_local';
  if (inV4(n, '127.0.0.0', 8)) return 'loopback';
  if (inV4(n, '10.0.0.0', 8) || inV4(n, '172.16.0.0', 12) || inV4(n, '192.168.0.0', 16)) return 'private';
  if (inV4(n, '100.64.0.0', 10)) return 'shared';
  if (n === parseIPv4('255.255.255.255')) return 'broadcast';
  if (inV4(n, '224.0.0.0', 4)) return 'multicast';
  if (inV4(n, '240.0.0.0', 4)) return 'reserved';
  if (inV4(n, '192.0.0.0', 24) || inV4(n, '192.0.2.0', 24) || inV4(n, '198.18.0.0', 15) || inV4(n, '198.51.100.0', 24) || inV4(n, '203.0.113.0', 24)) {
    return 'special';
  }
  return 'public';
}

function classifyV6(g: number[]): IpClass {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  const v4 = g6 * 65536 + g7;
  const firstFiveZero = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  if (firstFiveZero && g5 === 0 && g6 === 0) {
    if (g7 === 0) return 'unspecified';
    if (g7 === 1) return 'loopback';
  }
  if (firstFiveZero && g5 === 0xffff) return classifyV4(v4); // IPv4-mapped
  if (firstFiveZero && g5 === 0) return classifyV4(v4); // IPv4-compatible (deprecated)
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) {
    const c = classifyV4(v4); // NAT64 well-known prefix
    return c;
  }
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 1) return 'private'; // local-use NAT64 64:ff9b:1::/48
  if (g0 === 0x2002) {
    const c = classifyV4(g1 * 65536 + g2); // 6to4
    if (c !== 'public') return c;
  }
  if (g0 === 0xfd00 && g1 === 0x0ec2 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0 && g6 === 0 && g7 === 0x254) {
    return 'metadata';
  }
  if ((g0 & 0xffc0) === 0xfe80) return 'link_local';
  if ((g0 & 0xffc0) === 0xfec0) return 'private';
  if ((g0 & 0xfe00) === 0xfc00) return 'private';
  if ((g0 & 0xff00) === 0xff00) return 'multicast';
  if (g0 === 0x2001 && g1 === 0x0db8) return 'special';
  if (g0 === 0x0100 && g1 === 0 && g2 === 0 && g3 === 0) return 'special';
  return 'public';
}

/** Classify a literal IPv4/IPv6 address (brackets and %zone accepted); null when not an IP literal. */
export function classifyIp(address: string): IpClass | null {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const v4 = parseIPv4(bare);
  if (v4 !== null) return classifyV4(v4);
  const v6 = parseIPv6(bare);
  if (v6 !== null) return classifyV6(v6);
  return null;
}

export function isIpAllowed(address: string, policy: ProviderUrlPolicy): boolean {
  const c = classifyIp(address);
  if (c === null) return false;
  return !(policy === 'public-only' ? PUBLIC_ONLY_BLOCKED : ALWAYS_BLOCKED).has(c);
}

function assertIp(address: string, policy: ProviderUrlPolicy, how: 'is' | 'resolves to'): void {
  const c = classifyIp(address);
  if (c === null) throw new ProviderUrlError('blocked_address', 'The provider URL host resolves to an unrecognised address');
  const blocked = policy === 'public-only' ? PUBLIC_ONLY_BLOCKED : ALWAYS_BLOCKED;
  if (blocked.has(c)) {
    const hint = ALWAYS_BLOCKED.has(c) ? '' : ' (only public addresses are allowed on this server)';
    throw new ProviderUrlError('blocked_address', `The provider URL host ${how} a ${CLASS_LABEL[c]} address, which is not allowed${hint}`);
  }
}

// ---------------------------------------------------------------------------------------
// URL checks
// ---------------------------------------------------------------------------------------

/** URL hostname without IPv6 brackets and without a trailing dot, lower-cased. */
function hostOf(u: URL): string {
  let h = u.hostname.toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  while (h.endsWith('.')) h = h.slice(0, -1);
  return h;
}

/**
 * Synchronous shape check (no DNS), suitable for request validation. Refuses malformed URLs,
 * non-http(s) schemes, embedded credentials, metadata host names, and literal IP hosts that the
 * policy forbids (by default only the always-refused ones). Returns the parsed URL.
 */
export function checkProviderUrlSyntax(url: string, policy: ProviderUrlPolicy = 'allow-private'): URL {
  if (typeof url !== 'string' || url.length === 0 || url.length > 2048) {
    throw new ProviderUrlError('invalid_url', 'The provider URL must be a non-empty absolute URL of at most 2048 characters');
  }
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new ProviderUrlError('invalid_url', 'The provider URL is not a valid absolute URL');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new ProviderUrlError('unsupported_protocol', 'The provider URL must use http or https');
  }
  if (u.username || u.password) {
    throw new ProviderUrlError('credentials_in_url', 'The provider URL must not contain a user name or password; use the API key field');
  }
  const host = hostOf(u);
  if (!host) throw new ProviderUrlError('invalid_url', 'The provider URL has no host');
  if (BLOCKED_HOSTNAMES.has(host)) {
    throw new ProviderUrlError('blocked_hostname', 'The provider URL points at a cloud metadata service, which is not allowed');
  }
  if (classifyIp(host) !== null) assertIp(host, policy, 'is');
  return u;
}

export type LookupAll = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

const defaultLookup: LookupAll = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/**
 * Full check: {@link checkProviderUrlSyntax} plus DNS resolution of the host (every address
 * returned must be allowed). Throws {@link ProviderUrlError}.
 * `options.lookup` replaces DNS (tests).
 */
export async function assertProviderUrlAllowed(url: string, policy: ProviderUrlPolicy, options: { lookup?: LookupAll } = {}): Promise<void> {
  const u = checkProviderUrlSyntax(url, policy);
  const host = hostOf(u);
  if (classifyIp(host) !== null) return; // literal IP, already checked
  let addresses: Array<{ address: string; family: number }>;
  try {
    addresses = await (options.lookup ?? defaultLookup)(host);
  } catch {
    throw new ProviderUrlError('unresolvable', 'The provider URL host name could not be resolved');
  }
  if (addresses.length === 0) {
    throw new ProviderUrlError('unresolvable', 'The provider URL host name could not be resolved');
  }
  for (const a of addresses) assertIp(a.address, policy, 'resolves to');
}
