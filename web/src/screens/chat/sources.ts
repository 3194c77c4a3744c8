/**
 * Which of an answer's sources are listed under it. Every source keeps its number (its place in
 * the context the model was given, which the answer's `[n]` markers cite), and the list leaves
 * out the passages that are far less relevant than the best one:
 *
 *   a source is listed when its score is at least RELEVANCE_CUT × the best score of the answer's
 *   sources, or when the answer cites it; the rest are behind a "Show … less relevant" button.
 *
 * The score is the one that ordered the passages (BM25 over the text, or the fused rank score of
 * text and meaning search); both grow with relevance and are positive. With no positive score
 * (passages taken from a document's start when no question word matched) every source is listed.
 */

export const RELEVANCE_CUT = 0.5;

export interface NumberedSource<S> {
  /** 1-based, as the model saw it */
  n: number;
  source: S;
  cited: boolean;
}

export function splitSources<S extends { score: number }>(sources: S[], cited: number[]): { listed: NumberedSource<S>[]; less: NumberedSource<S>[] } {
  const best = Math.max(0, ...sources.map((s) => s.score));
  const all = sources.map((source, i) => ({ n: i + 1, source, cited: cited.includes(i + 1) }));
  if (best <= 0) return { listed: all, less: [] };
  const keep = (x: NumberedSource<S>) => x.cited || x.source.score >= best * RELEVANCE_CUT;
  return { listed: all.filter(keep), less: all.filter((x) => !keep(x)) };
}
