import net from 'node:net';
import { afterEach } from 'vitest';

/**
 * Tests never reach the network beyond this machine: every TCP connection (net, tls, http,
 * undici/global fetch, the pg driver all end in Socket.prototype.connect) to an address that is
 * not loopback fails at once, before any packet or DNS query is sent. Host names other than
 * `localhost` are refused too, since resolving them would already leave the machine.
 *
 * The refused socket fails the way an unreachable host does (an 'error' event with
 * BlockedConnectionError), so the code under test takes its normal error path; and because such
 * code may turn the error into something quieter (a 502, a retry), the test in which it happened
 * fails afterwards, naming the host. A test that provokes it on purpose takes the record first.
 */
export class BlockedConnectionError extends Error {
  override readonly name = 'BlockedConnectionError';
  readonly code = 'ETESTNETBLOCKED';
}

const LOOPBACK_NAMES = new Set(['localhost', 'localhost.', 'ip6-localhost', 'ip6-loopback']);

export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  if (LOOPBACK_NAMES.has(h) || h.endsWith('.localhost')) return true;
  if (net.isIPv4(h)) return h.startsWith('127.');
  if (net.isIPv6(h)) {
    if (h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
    const mapped = /^(?:0{0,4}:){0,4}:?ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(h) ?? /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(h);
    return mapped !== null && mapped[1]!.startsWith('127.');
  }
  return false;
}

/** The target of a Socket#connect call, in any of its signatures; null for a Unix socket / pipe. */
function targetOf(args: unknown[]): string | null {
  let first = args[0];
  // net.connect() passes its normalized [options, callback] array.
  if (Array.isArray(first)) first = first[0];
  if (first !== null && typeof first === 'object') {
    const o = first as { path?: unknown; host?: unknown };
    if (typeof o.path === 'string') return null;
    return typeof o.host === 'string' && o.host !== '' ? o.host : 'localhost';
  }
  if (typeof first === 'string' && !/^\d+$/.test(first)) return null; // connect(path)
  return typeof args[1] === 'string' && args[1] !== '' ? args[1] : 'localhost';
}

let blocked: string[] = [];

/** The hosts refused since the last call (and forget them): for tests that provoke a refusal. */
export function takeBlockedConnections(): string[] {
  const out = blocked;
  blocked = [];
  return out;
}

const original = net.Socket.prototype.connect;
const guarded = function (this: net.Socket, ...args: unknown[]) {
  const host = targetOf(args);
  if (host === null || isLoopbackHost(host)) return (original as (...a: unknown[]) => net.Socket).apply(this, args);
  blocked.push(host);
  const err = new BlockedConnectionError(`Tests may only connect to loopback; refused a connection to ${host} (test/setup/network.ts)`);
  process.nextTick(() => this.destroy(err));
  return this;
};
net.Socket.prototype.connect = guarded as typeof net.Socket.prototype.connect;

afterEach(() => {
  const hosts = takeBlockedConnections();
  if (hosts.length > 0) throw new Error(`This test tried to reach the network beyond loopback: ${[...new Set(hosts)].join(', ')}`);
});
