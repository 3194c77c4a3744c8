/**
 * Real English sentences from text files on this machine, for synthetic-but-natural chunk text:
 * the Debian licence texts, this project's text fixtures, and the READMEs of the packages in
 * node_modules (technical prose). Deterministic: files are read in sorted order.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './child.js';

function files(dir: string, pick: (name: string) => boolean, depth: number): string[] {
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const n of names) {
    const p = path.join(dir, n);
    let st;
    try {
      st = statSync(p);
    } catch {
      continue;
    }
    if (st.isDirectory() && depth > 0) out.push(...files(p, pick, depth - 1));
    else if (st.isFile() && st.size > 200 && st.size < 1_000_000 && pick(n)) out.push(p);
  }
  return out;
}

export function sourceFiles(): string[] {
  return [
    ...files('/usr/share/common-licenses', () => true, 0),
    ...files(path.join(ROOT, 'test/fixtures'), (n) => n.endsWith('.txt') || n.endsWith('.md'), 0),
    ...files(path.join(ROOT, 'node_modules'), (n) => n.toLowerCase() === 'readme.md', 2),
  ];
}

/** Markdown/plain text → prose sentences (code blocks, tables, URLs and markup dropped). */
export function sentencesOf(text: string): string[] {
  const prose = text
    .replace(/```[\s\S]*?```/g, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/https?:\/\/\S+/g, ' ')
    .split('\n')
    .filter((l) => !/^\s*(\||#|\s{4}|-{3,}|={3,}|\*{3,})/.test(l))
    .join(' ')
    .replace(/[`*_>#|]/g, ' ')
    .replace(/\s+/g, ' ');
  return prose
    .split(/(?<=[.!?])\s+(?=["(A-Z])/)
    .map((s) => s.trim())
    .filter((s) => {
      if (s.length < 40 || s.length > 400) return false;
      const letters = s.replace(/[^A-Za-z]/g, '').length;
      return letters / s.length > 0.72 && s.split(' ').length >= 7 && /[.!?]$/.test(s);
    });
}

/** Distinct sentences from the machine's text files (at most `max`). */
export function loadSentences(max = 20_000): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const f of sourceFiles()) {
    let text: string;
    try {
      text = readFileSync(f, 'utf8');
    } catch {
      continue;
    }
    for (const s of sentencesOf(text)) {
      if (seen.has(s)) continue;
      seen.add(s);
      out.push(s);
      if (out.length >= max) return out;
    }
  }
  return out;
}

/** A small deterministic PRNG (mulberry32), so every run asks the same questions. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
