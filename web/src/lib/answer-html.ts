/**
 * Touches to an answer's sanitised nodes after markdown.ts has rendered them: the `[n]` markers
 * that cite the numbered passages the model was given become buttons, and tables get a wrapper
 * that scrolls sideways (a phone is narrower than most tables). Only elements built here with the
 * DOM API are added to the nodes, never HTML text, so the result stays as safe as markdown.ts made it.
 */
import { CITATION } from './citations';
import { t } from '../i18n';

/** Text inside these is shown as written: code, links and buttons are never rewritten. */
const KEEP = 'code, pre, a, button';

export interface CiteLabel {
  /** what the button's accessible name says of source n, e.g. its file name */
  (n: number): string;
}

/**
 * The answer's nodes with each `[n]` (1 ≤ n ≤ count) as a button carrying `data-cite="n"`, each
 * table inside a focusable, labelled box that scrolls sideways, and code blocks focusable. Markers of numbers beyond
 * `count` stay text (the model invented them).
 */
export function decorateAnswer(root: DocumentFragment, count: number, label: CiteLabel): void {
  if (count > 0) linkCitations(root, count, label);
  for (const table of Array.from(root.querySelectorAll('table'))) {
    const box = document.createElement('div');
    box.className = 'table-scroll';
    // scrolled with the keyboard too (Tab to it, then the arrow keys)
    box.tabIndex = 0;
    box.setAttribute('role', 'region');
    box.setAttribute('aria-label', t('answer.table'));
    table.replaceWith(box);
    box.append(table);
  }
  // a code block with long lines scrolls sideways: it takes the focus, so the keyboard scrolls it too
  for (const pre of Array.from(root.querySelectorAll('pre'))) pre.tabIndex = 0;
}

function linkCitations(root: DocumentFragment, count: number, label: CiteLabel): void {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const texts: Text[] = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const node = n as Text;
    if (node.data.includes('[') && !node.parentElement?.closest(KEEP)) texts.push(node);
  }
  for (const text of texts) {
    const parts: Array<string | Node> = [];
    let last = 0;
    let changed = false;
    for (const m of text.data.matchAll(CITATION)) {
      const nums = m[1]!.split(',').map((s) => Number(s.trim()));
      if (!nums.every((n) => n >= 1 && n <= count)) continue;
      parts.push(text.data.slice(last, m.index));
      const group = document.createElement('span');
      group.className = 'cites';
      for (const n of nums) {
        const b = document.createElement('button');
        b.type = 'button';
        b.className = 'cite';
        b.dataset['cite'] = String(n);
        b.textContent = String(n);
        b.setAttribute('aria-label', t('answer.source', { n, label: label(n) }));
        group.append(b);
      }
      parts.push(group);
      last = m.index + m[0].length;
      changed = true;
    }
    if (!changed) continue;
    parts.push(text.data.slice(last));
    text.replaceWith(...parts.filter((p) => p !== ''));
  }
}
