/**
 * The peer in the gateway bench: Portkey's open-source AI gateway (`@portkey-ai/gateway`, a
 * development dependency), started from its own command in a child process on loopback and told
 * per request, by its headers, to forward to the stand-in as an OpenAI provider. It stores nothing.
 * Its streams need the preload of ./portkey-streams.mjs (a bug of its release on Node).
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export interface Portkey {
  url: string;
  /** the headers that route a request through Portkey to `upstream` (an OpenAI base URL) */
  headers(upstream: string, apiKey: string): Record<string, string>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as { port: number }).port;
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

export async function startPortkey(): Promise<Portkey> {
  const pkg = createRequire(import.meta.url).resolve('@portkey-ai/gateway/package.json');
  const entry = path.join(path.dirname(pkg), 'build/start-server.js');
  const port = await freePort();
  const fix = path.join(path.dirname(fileURLToPath(import.meta.url)), 'portkey-streams.mjs');
  const child = spawn(process.execPath, ['--import', pathToFileURL(fix).href, entry, `--port=${port}`, '--headless'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-2000)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`Portkey exited (${child.exitCode}): ${stderr}`);
    try {
      await fetch(`${url}/`);
      break;
    } catch {
      if (Date.now() > deadline) {
        child.kill();
        throw new Error('Portkey did not start within 30 s');
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  return {
    url,
    headers: (upstream, apiKey) => ({ 'x-portkey-provider': 'openai', 'x-portkey-custom-host': upstream, authorization: `Bearer ${apiKey}` }),
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill();
      await exited;
    },
  };
}
