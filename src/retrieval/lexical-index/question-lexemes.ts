/**
 * A question's lexemes read from its tsvector's text form: what a search of the in-memory indexes
 * starts from (RetrievalRepo.questionLexemes, PlusRepo.findWithLexemes).
 */
/** One of a question's lexemes as the database found it (to_tsvector), with its first position and whether it was carried. */
export interface QuestionLexeme {
  lexeme: string;
  pos: number | null;
  carried: boolean;
}

/**
 * A question's lexemes from its tsvector in text form (`to_tsvector('english', q)::text`), each
 * with its first position — what questionLexemesSql gives, read without json_agg (which costs
 * PGlite more than the rest of the statement).
 */
export function lexemesOfVector(vector: string): QuestionLexeme[] {
  const out: QuestionLexeme[] = [];
  for (const m of vector.matchAll(/'((?:[^'\\]|''|\\.)*)'(?::(\d+))?/g)) {
    out.push({ lexeme: m[1]!.replace(/''/g, "'").replace(/\\(.)/g, '$1'), pos: m[2] === undefined ? null : Number(m[2]), carried: false });
  }
  return out;
}
