/**
 * Hostile Markdown a model could answer (or a prompt-injected document could make it answer),
 * for xss.spec.ts. `RUN` in a payload stands for code that reports to the test when it runs
 * (`top.pwn(<index>)`); the test also looks for what could run later (a handler attribute, a
 * `javascript:` link) in what is shown.
 */
export const PAYLOADS: Array<{ name: string; markdown: string }> = [
  // Attribute values that say "<pre": a regex on serialised HTML turns them into markup.
  { name: 'link title breaks out of its attribute', markdown: '[a link](https://example.test/ "<pre x><img src=x onerror=RUN>")' },
  { name: 'link title with a bare <pre>', markdown: '[a link](https://example.test/ "<pre><img src=x onerror=RUN>")' },
  { name: 'raw HTML title with <pre x>', markdown: '<abbr title="<pre x><img src=x onerror=RUN>">abbr</abbr>' },
  { name: 'raw HTML title closing </pre>', markdown: '<p title="</pre><img src=x onerror=RUN>">p</p>\n\n```\ncode\n```' },
  { name: 'image alt with <pre', markdown: '![<pre x><img src=x onerror=RUN>](/nothing.png)' },
  { name: 'code fence language', markdown: '```"><img src=x onerror=RUN>\ncode\n```' },
  { name: 'code fence language with pre', markdown: '```<pre><img/src=x/onerror=RUN>\ncode\n```' },
  // Plain injections.
  { name: 'img onerror', markdown: '<img src=x onerror=RUN>' },
  { name: 'script element', markdown: '<script>RUN</script>' },
  { name: 'svg onload', markdown: '<svg onload=RUN><circle r=5></circle></svg>' },
  { name: 'svg script', markdown: '<svg><script>RUN</script></svg>' },
  { name: 'svg animate onbegin', markdown: '<svg><animate onbegin=RUN attributeName=x dur=1s></animate></svg>' },
  { name: 'svg set href javascript', markdown: '<svg><a><set attributeName="href" to="javascript:RUN"/><text y="20">svg link</text></a></svg>' },
  { name: 'svg xlink:href javascript', markdown: '<svg><a xlink:href="javascript:RUN"><text y="20">x</text></a></svg>' },
  { name: 'details ontoggle', markdown: '<details open ontoggle=RUN><summary>s</summary>d</details>' },
  { name: 'iframe srcdoc', markdown: '<iframe srcdoc="<script>RUN</script>"></iframe>' },
  { name: 'object data', markdown: '<object data="data:text/html,<script>RUN</script>"></object>' },
  { name: 'embed src', markdown: '<embed src="data:text/html,<script>RUN</script>">' },
  { name: 'video source onerror', markdown: '<video><source onerror=RUN src=x></video>' },
  { name: 'body onload', markdown: '<body onload=RUN>' },
  { name: 'input autofocus onfocus', markdown: '<input autofocus onfocus=RUN>' },
  { name: 'form button formaction', markdown: '<form><button formaction="javascript:RUN">go</button></form>' },
  { name: 'meta refresh', markdown: '<meta http-equiv="refresh" content="0;url=javascript:RUN">' },
  { name: 'base href', markdown: '<base href="javascript:RUN//">' },
  { name: 'style import', markdown: '<style>@import "javascript:RUN";</style>' },
  { name: 'template content', markdown: '<template><img src=x onerror=RUN></template>' },
  // URLs.
  { name: 'markdown link javascript:', markdown: '[click](javascript:RUN)' },
  { name: 'markdown link with entity-encoded scheme', markdown: '[click](&#x6A;avascript:RUN)' },
  { name: 'markdown link with a tab in the scheme', markdown: '[click](java\tscript:RUN)' },
  { name: 'raw link JaVaScRiPt:', markdown: '<a href="JaVaScRiPt:RUN">click</a>' },
  { name: 'link to data:text/html', markdown: '[click](data:text/html;base64,PHNjcmlwdD50b3AucHduKDApPC9zY3JpcHQ+)' },
  { name: 'image javascript:', markdown: '![x](javascript:RUN)' },
  { name: 'vbscript link', markdown: '<a href="vbscript:RUN">click</a>' },
  // MathML and mutation XSS (namespace confusion and reparsing).
  { name: 'MathML href', markdown: '<math><mtext><a href="javascript:RUN">m</a></mtext></math>' },
  { name: 'MathML mglyph style', markdown: '<math><mtext><table><mglyph><style><img src=x onerror=RUN></style></mglyph></table></mtext></math>' },
  { name: 'form math mtext namespace confusion', markdown: '<form><math><mtext></form><form><mglyph><style></math><img src=x onerror=RUN>' },
  { name: 'noscript title', markdown: '<noscript><p title="</noscript><img src=x onerror=RUN>"></p></noscript>' },
  { name: 'svg p style', markdown: '<svg></p><style><a id="</style><img src=1 onerror=RUN>"></a></style></svg>' },
  { name: 'math mi table style', markdown: '<math><mi><table><mi><style><img src=x onerror=RUN></style></mi></table></mi></math>' },
  { name: 'svg foreignObject', markdown: '<svg><foreignObject><img src=x onerror=RUN></foreignObject></svg>' },
  { name: 'comment breakout', markdown: '<!--><img src=x onerror=RUN>-->' },
  { name: 'xmp', markdown: '<xmp><p title="</xmp><img src=x onerror=RUN>">' },
  { name: 'textarea', markdown: '<textarea><p title="</textarea><img src=x onerror=RUN>">' },
];

/** A payload with RUN replaced by the call that reports payload `i`. */
export const armed = (markdown: string, i: number) => markdown.replaceAll('RUN', `top.pwn(${i})`);
