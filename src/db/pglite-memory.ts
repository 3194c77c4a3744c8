import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';

const MB = 1024 * 1024;
/** PostgreSQL's default, and the most `auto` gives: the page cache serves the rest. */
export const MAX_AUTO_SHARED_BUFFERS = 128 * MB;
/** The least `auto` gives a folder: a database that grows within one process (a write-heavy gateway run) measured slower at 16 MB. */
export const MIN_AUTO_SHARED_BUFFERS = 32 * MB;
/** An in-memory database's (tests): its pages never leave memory anyway. */
export const IN_MEMORY_SHARED_BUFFERS = 16 * MB;
/** `auto` rounds up to this step. */
const STEP = 16 * MB;
/** The template databases' folders (template1, template0) in every PostgreSQL ≥ 15 cluster; never read by Atrium. */
const TEMPLATES = new Set(['1', '4']);

/** `EMBEDDED_SHARED_BUFFERS`: 'auto' (sized to the data, see sharedBuffersFor) or a size in bytes. */
export type SharedBuffersSetting = 'auto' | number;

/**
 * The embedded database's `shared_buffers` (its page cache inside the WebAssembly memory), in
 * bytes. PostgreSQL zeroes all of it when it starts, in WebAssembly that is not yet optimised:
 * PostgreSQL's default of 128 MB cost ~0.1 s of every start and 128 MB of memory on an instance
 * whose data is a few megabytes (BENCHMARKS.md, "Start-up"). `auto` gives twice the size of the
 * data (the database folders under `base/`, templates left out) rounded up to 16 MB, between
 * 32 MB and 128 MB: a small instance starts faster and uses less memory; one whose data
 * outgrows that gets PostgreSQL's default. The size is chosen at each start, so a database that
 * grew gets a larger cache at its next start; pages beyond the cache are read from the
 * operating system's file cache. Without a folder (in memory) 16 MB.
 */
export async function sharedBuffersFor(dir: string | undefined, setting: SharedBuffersSetting): Promise<number> {
  if (setting !== 'auto') return setting;
  if (!dir) return IN_MEMORY_SHARED_BUFFERS;
  const bytes = await dataBytes(path.join(dir, 'base'));
  return Math.min(MAX_AUTO_SHARED_BUFFERS, Math.max(MIN_AUTO_SHARED_BUFFERS, Math.ceil((2 * bytes) / STEP) * STEP));
}

/** Bytes of the relation files of the non-template databases under `base/` (0 when it does not exist yet). */
async function dataBytes(base: string): Promise<number> {
  const dbs = await readdir(base).catch(() => [] as string[]);
  const sizes = await Promise.all(
    dbs
      .filter((d) => !TEMPLATES.has(d))
      .map(async (d) => {
        const files = await readdir(path.join(base, d)).catch(() => [] as string[]);
        const each = await Promise.all(
          files.map((f) =>
            stat(path.join(base, d, f)).then(
              (s) => s.size,
              () => 0,
            ),
          ),
        );
        return each.reduce((a, b) => a + b, 0);
      }),
  );
  return sizes.reduce((a, b) => a + b, 0);
}

/** The PostgreSQL setting for a size in bytes (kB, which every size here is a multiple of). */
export const sharedBuffersParam = (bytes: number): string => `shared_buffers=${Math.floor(bytes / 1024)}kB`;
