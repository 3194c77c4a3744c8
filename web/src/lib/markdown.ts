/**
 * Markdown → safe HTML for chat messages: marked parses, DOMPurify sanitises (a model's answer is
 * untrusted text), highlight.js colours code in a few common languages. Code blocks get a copy
 * button, handled by one delegated click listener (copyCodeOnClick).
 *
 * While an answer streams, `highlight: false` skips highlighting: the unfinished message is
 * re-parsed on every frame, and highlighting runs once when it is complete.
 */
import DOMPurify from 'dompurify';
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import css from 'highlight.js/lib/languages/css';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import python from 'highlight.js/lib/languages/python';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';
import { Marked } from 'marked';

const LANGUAGES = { bash, css, javascript, json, python, sql, typescript, xml, yaml };
for (const [name, lang] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, lang);
hljs.registerAliases(['sh', 'shell', 'zsh'], { languageName: 'bash' });
hljs.registerAliases(['js', 'jsx', 'mjs'], { languageName: 'javascript' });
hljs.registerAliases(['ts', 'tsx'], { languageName: 'typescript' });
hljs.registerAliases(['html', 'svg'], { languageName: 'xml' });
hljs.registerAliases(['py'], { languageName: 'python' });
hljs.registerAliases(['yml'], { languageName: 'yaml' });

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function makeParser(highlight: boolean): Marked {
  const m = new Marked({ gfm: true, breaks: true });
  m.use({
    renderer: {
      code({ text, lang }) {
        const language = (lang ?? '').trim().split(/\s+/)[0]?.toLowerCase() ?? '';
        const known = language && hljs.getLanguage(language);
        const body = highlight && known ? hljs.highlight(text, { language, ignoreIllegals: true }).value : escapeHtml(text);
        const label = known ? escapeHtml(language) : '';
        // The copy button is added after sanitising (see render), so the model's text cannot fake one.
        return `<pre data-lang="${label}"><code class="hljs${label ? ` language-${label}` : ''}">${body}</code></pre>\n`;
      },
    },
  });
  return m;
}

const parsers = { final: makeParser(true), streaming: makeParser(false) };
const COPY = '<button type="button" class="copy-code" aria-label="Copy code">Copy</button>';

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  // Links in answers open elsewhere and never carry the app's referrer.
  if (node.tagName === 'A') {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
});

export function renderMarkdown(text: string, opts: { highlight: boolean }): string {
  const html = (opts.highlight ? parsers.final : parsers.streaming).parse(text, { async: false });
  const clean = DOMPurify.sanitize(html, { FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select'], FORBID_ATTR: ['style'] });
  // Only real <pre> elements survive sanitising as "<pre"; text that says "<pre" is escaped by now.
  return clean.replace(/<pre(\s|>)/g, `<div class="code-block">${COPY}<pre$1`).replace(/<\/pre>/g, '</pre></div>');
}

/** One listener on a message list: a click on a code block's copy button copies its code. */
export function copyCodeOnClick(e: MouseEvent): void {
  const button = (e.target as Element | null)?.closest?.('button.copy-code');
  if (!button) return;
  const code = button.parentElement?.querySelector('pre')?.textContent ?? '';
  void navigator.clipboard?.writeText(code).then(
    () => {
      button.textContent = 'Copied';
      setTimeout(() => (button.textContent = 'Copy'), 1500);
    },
    () => {
      button.textContent = 'Copy failed';
    },
  );
}
