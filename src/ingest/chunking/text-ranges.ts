/** Whitespace tests and trimming on [start, end) offsets, shared by the chunking stages. */

export const isSpace = (c: number): boolean =>
  c === 32 || c === 10 || c === 9 || c === 13 || c === 11 || c === 12 || c === 0xa0 || c === 0xfeff || c === 0x85 || c === 0x2028 || c === 0x2029;

export function trimRange(text: string, s: number, e: number): [number, number] {
  while (s < e && isSpace(text.charCodeAt(s))) s++;
  while (e > s && isSpace(text.charCodeAt(e - 1))) e--;
  return [s, e];
}
