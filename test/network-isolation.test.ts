import http from 'node:http';
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { BlockedConnectionError, isLoopbackHost, takeBlockedConnections } from './setup/network.js';

function connectError(host: string): Promise<Error> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port: 80 });
    socket.once('connect', () => {
      socket.destroy();
      reject(new Error(`connected to ${host}`));
    });
    socket.once('error', resolve);
  });
}

describe('outbound network in tests', () => {
  it('refuses a private address and a public name before sending anything', async () => {
    for (const host of ['10.255.255.1', 'example.com', '93.184.216.34', '2001:db8::1']) {
      const err = await connectError(host);
      expect(err).toBeInstanceOf(BlockedConnectionError);
      expect(err.message).toContain(host);
    }
    expect(takeBlockedConnections()).toEqual(['10.255.255.1', 'example.com', '93.184.216.34', '2001:db8::1']);
  });

  it('refuses global fetch (http and https) and node:http to a non-loopback host', async () => {
    const failure = await fetch('http://example.com/').then(
      () => null,
      (err: unknown) => err as Error & { cause?: unknown },
    );
    expect(failure?.cause).toBeInstanceOf(BlockedConnectionError);
    const tlsFailure = await fetch('https://example.com/').then(
      () => null,
      (err: unknown) => err as Error & { cause?: unknown },
    );
    expect(tlsFailure?.cause).toBeInstanceOf(BlockedConnectionError);

    const httpErr = await new Promise<Error>((resolve) => {
      http.get('http://10.255.255.1/').once('error', resolve);
    });
    expect(httpErr).toBeInstanceOf(BlockedConnectionError);
    expect(takeBlockedConnections()).toEqual(['example.com', 'example.com', '10.255.255.1']);
  });

  it('lets loopback through', async () => {
    const server = http.createServer((_req, res) => res.end('ok'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as net.AddressInfo;
    try {
      expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe('ok');
      expect(await (await fetch(`http://localhost:${port}/`)).text()).toBe('ok');
    } finally {
      server.close();
    }
    expect(takeBlockedConnections()).toEqual([]);
  });

  it('knows loopback from the rest', () => {
    for (const h of ['127.0.0.1', '127.8.9.10', '::1', '[::1]', 'localhost', 'a.localhost', '::ffff:127.0.0.1']) expect(isLoopbackHost(h)).toBe(true);
    for (const h of ['10.0.0.1', '0.0.0.0', '::', '::ffff:10.0.0.1', 'example.com', 'localhost.example.com', '169.254.169.254']) {
      expect(isLoopbackHost(h)).toBe(false);
    }
  });
});
