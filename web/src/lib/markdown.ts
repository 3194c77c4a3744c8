/**
 * Markdown → sanitised DOM nodes for chat messages: marked parses, DOMPurify sanitises (a model's
 * answer is untrusted text), highlight.js colours code in a few common languages. Code blocks get
 * a copy button, handled by one delegated click listener (copyCodeOnClick).
 *
 * Nothing ever edits HTML text after sanitising: DOMPurify hands back its own sanitised nodes
 * (RETURN_DOM_FRAGMENT), what the app adds (copy buttons, links in place of remote images) is
 * added to those nodes with DOM calls, and the nodes are inserted as they are (Markdown.tsx), never
 * serialised and parsed again. So neither a serialiser's quirks (Chromium's left `<` and `>`
 * unescaped in attribute values until 2025) nor a reparse can turn an attribute into markup.
 *
 * Images from anywhere but the app itself (or data:/blob: URLs) are shown as a link that opens
 * the image in a new tab, without a referrer: an answer cannot make the browser fetch a URL (and
 * send what it encodes) before the person asks. The Content-Security-Policy (img-src) enforces
 * the same (src/http/security-headers.ts).
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
import { mathExtension } from './math';
import { t } from '../i18n';

const LANGUAGES = { bash, css, javascript, json, python, sql, typescript, xml, yaml };
for (const [name, lang] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, lang);
hljs.registerAliases(['sh', 'shell', 'zsh'], { languageName: 'bash' });
hljs.registerAliases(['js', 'jsx', 'mjs'], { languageName: 'javascript' });
hljs.registerAliases(['ts', 'tsx'], { languageName: 'typescript' });
hljs.registerAliases(['html', 'svg'], { languageName: 'xml' });
hljs.registerAliases(['py'], { languageName: 'python' });
hljs.registerAliases(['yml'], { languageName: 'yaml' });

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** One parser (building marked's rules is a noticeable part of start-up); the flag is per call. */
let highlightNext = true;

function makeParser(): Marked {
  const m = new Marked({ gfm: true, breaks: true });
  m.use(mathExtension);
  m.use({
    renderer: {
      code({ text, lang }) {
        const language = (lang ?? '').trim().split(/\s+/)[0]?.toLowerCase() ?? '';
        const known = language && hljs.getLanguage(language);
        const body = highlightNext && known ? hljs.highlight(text, { language, ignoreIllegals: true }).value : escapeHtml(text);
        const label = known ? escapeHtml(language) : '';
        // The copy button is added to the sanitised nodes (addCopyButton), so the model's text cannot fake one.
        return `<pre data-lang="${label}"><code class="hljs${label ? ` language-${label}` : ''}">${body}</code></pre>\n`;
      },
    },
  });
  return m;
}

const parser = makeParser();

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  // Links in answers open elsewhere and never carry the app's referrer.
  if (node.tagName === 'A') {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
});

const SANITIZE = {
  // media too: an answer has none of the app's own to show, and a remote source, refused by the policy, would be an empty box
  FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'template', 'video', 'audio', 'source', 'track', 'picture'],
  FORBID_ATTR: ['style', 'srcset'],
  RETURN_DOM_FRAGMENT: true as const,
};

/** Wrap a code block with its copy button (made here, so an answer's own markup cannot fake one). */
function addCopyButton(pre: HTMLPreElement): void {
  const block = document.createElement('div');
  block.className = 'code-block';
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'copy-code';
  button.setAttribute('aria-label', t('code.copy'));
  button.textContent = t('copy.copy');
  pre.replaceWith(block);
  block.append(button, pre);
}

/** Whether the browser may load this image at once: the app's own, or a data:/blob: URL. */
function localImage(src: string): boolean {
  try {
    const url = new URL(src, window.location.href);
    return url.protocol === 'data:' || url.protocol === 'blob:' || url.origin === window.location.origin;
  } catch {
    return false;
  }
}

/** Replace a remote image with a link to it (or its description alone, inside a link or for a URL that is not http(s)). */
function linkRemoteImage(img: HTMLImageElement): void {
  const src = img.getAttribute('src') ?? '';
  if (localImage(src)) return;
  let url: URL | null = null;
  try {
    url = new URL(src, window.location.href);
  } catch {
    url = null;
  }
  const web = url && (url.protocol === 'https:' || url.protocol === 'http:') ? url : null;
  const alt = (img.getAttribute('alt') ?? '').trim();
  const label = web
    ? alt
      ? t('md.imageAltHost', { alt, host: web.hostname })
      : t('md.imageHost', { host: web.hostname })
    : alt
      ? t('md.imageAlt', { alt })
      : t('md.image');
  const inLink = img.closest('a') !== null;
  const shown = document.createElement(web && !inLink ? 'a' : 'span');
  shown.className = 'remote-image';
  shown.textContent = label;
  if (web && shown instanceof HTMLAnchorElement) {
    shown.href = web.href;
    shown.target = '_blank';
    shown.rel = 'noopener noreferrer';
    shown.title = `Open ${web.href} in a new tab`;
  }
  img.replaceWith(shown);
}

/** An answer's Markdown as sanitised nodes, ready to insert (see Markdown.tsx). */
export function renderMarkdown(text: string, opts: { highlight: boolean }): DocumentFragment {
  highlightNext = opts.highlight;
  const html = parser.parse(text, { async: false });
  const fragment = DOMPurify.sanitize(html, SANITIZE);
  for (const pre of Array.from(fragment.querySelectorAll('pre'))) addCopyButton(pre);
  for (const img of Array.from(fragment.querySelectorAll('img'))) linkRemoteImage(img);
  return fragment;
}

/** One listener on a message list: a click on a code block's copy button copies its code. */
export function copyCodeOnClick(e: MouseEvent): void {
  const button = (e.target as Element | null)?.closest?.('button.copy-code');
  if (!button) return;
  const code = button.parentElement?.querySelector('pre')?.textContent ?? '';
  void navigator.clipboard?.writeText(code).then(
    () => {
      button.textContent = t('copy.copied');
      setTimeout(() => (button.textContent = t('copy.copy')), 1500);
    },
    () => {
      button.textContent = t('code.copyFailed');
    },
  );
}
