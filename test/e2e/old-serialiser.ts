/**
 * Chromium's HTML serialiser as it was before mid-2025, for the XSS suite (xss.spec.ts): `<` and
 * `>` inside attribute values were left as they are (only `&`, U+00A0 and `"` were escaped), so
 * `title="<pre x>"` came out of `innerHTML` with a real-looking tag in it. Today's Chromium
 * escapes them, which hides bugs that re-read serialised HTML as markup.
 *
 * DOMPurify returns its result as `body.innerHTML` (or `body.outerHTML` for whole documents),
 * read through the getter on Element.prototype at call time, and reads `innerHTML` of some nodes
 * to look for markup in them; this replaces both getters (setters untouched) with the HTML
 * fragment serialisation algorithm and the old attribute escaping. The node's own properties
 * are read through the prototypes' getters, so a clobbered form cannot fool it.
 *
 * `installOldSerialiser` runs in the page (page.addInitScript) before any script of the app; it
 * keeps the browser's own getter as `window.__nativeInnerHTML(el)` for comparison.
 */
export function installOldSerialiser(): void {
  const HTML = 'http://www.w3.org/1999/xhtml';
  const SVG = 'http://www.w3.org/2000/svg';
  const MATHML = 'http://www.w3.org/1998/Math/MathML';
  const XML = 'http://www.w3.org/XML/1998/namespace';
  const XMLNS = 'http://www.w3.org/2000/xmlns/';
  const XLINK = 'http://www.w3.org/1999/xlink';
  const VOID = new Set([
    'area',
    'base',
    'basefont',
    'bgsound',
    'br',
    'col',
    'embed',
    'frame',
    'hr',
    'img',
    'input',
    'keygen',
    'link',
    'meta',
    'param',
    'source',
    'track',
    'wbr',
  ]);
  const RAW_TEXT = new Set(['style', 'script', 'xmp', 'iframe', 'noembed', 'noframes', 'plaintext']);

  const getter = <T>(proto: object, name: string) => Object.getOwnPropertyDescriptor(proto, name)!.get as (this: unknown) => T;
  const childNodes = getter<NodeListOf<ChildNode>>(Node.prototype, 'childNodes');
  const nodeType = getter<number>(Node.prototype, 'nodeType');
  const ownerDocument = getter<Document>(Node.prototype, 'ownerDocument');
  const localName = getter<string>(Element.prototype, 'localName');
  const namespaceURI = getter<string | null>(Element.prototype, 'namespaceURI');
  const tagName = getter<string>(Element.prototype, 'tagName');
  const attributes = getter<NamedNodeMap>(Element.prototype, 'attributes');
  const templateContent = getter<DocumentFragment>(HTMLTemplateElement.prototype, 'content');
  const charData = getter<string>(CharacterData.prototype, 'data');
  const defaultView = getter<Window | null>(Document.prototype, 'defaultView');

  const escapeAttr = (s: string) =>
    s
      .replace(/&/g, '&amp;')
      .replace(/\u00a0/g, '&nbsp;')
      .replace(/"/g, '&quot;');
  const escapeText = (s: string) =>
    s
      .replace(/&/g, '&amp;')
      .replace(/\u00a0/g, '&nbsp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;');

  function attrName(a: Attr): string {
    if (a.namespaceURI === null) return a.localName;
    if (a.namespaceURI === XML) return `xml:${a.localName}`;
    if (a.namespaceURI === XMLNS) return a.localName === 'xmlns' ? 'xmlns' : `xmlns:${a.localName}`;
    if (a.namespaceURI === XLINK) return `xlink:${a.localName}`;
    return a.name;
  }

  function isRawTextParent(parent: Node | null): boolean {
    if (!parent || nodeType.call(parent) !== Node.ELEMENT_NODE || namespaceURI.call(parent) !== HTML) return false;
    const name = localName.call(parent);
    // noscript's text is raw only where scripting is enabled (not in DOMParser's documents)
    return RAW_TEXT.has(name) || (name === 'noscript' && defaultView.call(ownerDocument.call(parent)) !== null);
  }

  function children(node: Node): string {
    const el = node as Element;
    const isTemplate = nodeType.call(node) === Node.ELEMENT_NODE && namespaceURI.call(el) === HTML && localName.call(el) === 'template';
    const from = isTemplate ? templateContent.call(el) : node;
    let out = '';
    for (const child of Array.from(childNodes.call(from))) out += serialise(child, node);
    return out;
  }

  function serialise(node: Node, parent: Node | null): string {
    switch (nodeType.call(node)) {
      case Node.ELEMENT_NODE: {
        const el = node as Element;
        const ns = namespaceURI.call(el);
        const tag = ns === HTML || ns === SVG || ns === MATHML ? localName.call(el) : tagName.call(el);
        let out = `<${tag}`;
        for (const a of Array.from(attributes.call(el))) out += ` ${attrName(a)}="${escapeAttr(a.value)}"`;
        out += '>';
        if (ns === HTML && VOID.has(tag)) return out;
        return `${out}${children(el)}</${tag}>`;
      }
      case Node.TEXT_NODE:
        return isRawTextParent(parent) ? charData.call(node) : escapeText(charData.call(node));
      case Node.COMMENT_NODE:
        return `<!--${charData.call(node)}-->`;
      case Node.PROCESSING_INSTRUCTION_NODE:
        return `<?${(node as ProcessingInstruction).target} ${charData.call(node)}>`;
      case Node.DOCUMENT_TYPE_NODE:
        return `<!DOCTYPE ${(node as DocumentType).name}>`;
      default:
        return '';
    }
  }

  const inner = Object.getOwnPropertyDescriptor(Element.prototype, 'innerHTML')!;
  const outer = Object.getOwnPropertyDescriptor(Element.prototype, 'outerHTML')!;
  Object.defineProperty(Element.prototype, 'innerHTML', {
    ...inner,
    get(this: Element) {
      return children(this);
    },
  });
  Object.defineProperty(Element.prototype, 'outerHTML', {
    ...outer,
    get(this: Element) {
      return serialise(this, this.parentNode);
    },
  });
  (window as unknown as { __nativeInnerHTML: (el: Element) => string }).__nativeInnerHTML = (el) => inner.get!.call(el) as string;
}
