/** Percentiles and summaries of latency samples (milliseconds). */

export interface Summary {
  n: number;
  mean: number;
  min: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** Percentile `p` (0..100) of an ascending array, linear interpolation between closest ranks. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  if (sorted.length === 1) return sorted[0]!;
  const rank = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  const a = sorted[lo]!;
  const b = sorted[hi]!;
  return a + (b - a) * (rank - lo);
}

export function summarize(samples: readonly number[]): Summary {
  const s = [...samples].sort((a, b) => a - b);
  const sum = s.reduce((acc, x) => acc + x, 0);
  return {
    n: s.length,
    mean: s.length ? sum / s.length : Number.NaN,
    min: s[0] ?? Number.NaN,
    p50: percentile(s, 50),
    p90: percentile(s, 90),
    p99: percentile(s, 99),
    max: s.at(-1) ?? Number.NaN,
  };
}

export function median(samples: readonly number[]): number {
  return percentile(
    [...samples].sort((a, b) => a - b),
    50,
  );
}

/** Round for a table cell: 3 significant-ish decimals below 10, fewer above. */
export function round(x: number, digits?: number): number {
  if (!Number.isFinite(x)) return x;
  const d = digits ?? (Math.abs(x) < 1 ? 3 : Math.abs(x) < 10 ? 2 : Math.abs(x) < 1000 ? 1 : 0);
  const f = 10 ** d;
  return Math.round(x * f) / f;
}

/** A pass/miss cell for a "smaller is better" (`<=`) or "larger is better" (`>=`) target. */
export function verdict(value: number, op: '<=' | '>=', target: number): string {
  const ok = op === '<=' ? value <= target : value >= target;
  return `${ok ? 'pass' : 'MISS'} (${op} ${target})`;
}
