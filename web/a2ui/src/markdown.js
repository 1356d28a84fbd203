// A small, safe Markdown renderer for the renderer's Text components.
//
// @a2ui/lit renders Text through a markdown renderer given by the host (a Lit context);
// without one it logs a warning for every text and, in v0.8, shows the raw "### " of a
// heading. The official @a2ui/markdown-it is an optional peer dependency that the
// playground does not install, so this covers what models write in short UI texts:
// headings, paragraphs, lists, fenced code blocks, **strong**, *em*, `code` and https
// links. Everything is
// escaped first; only the fixed tags below are produced, so model text cannot inject
// markup, styles or scripts.

const ESC = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escape = (s) => String(s).replace(/[&<>"']/g, (c) => ESC[c]);

/** Opening tag with the classes the theme maps to it (v0.8 passes tagClassMap). */
function open(tag, opts, attrs = '') {
  const classes = opts?.tagClassMap?.[tag];
  const list = Array.isArray(classes) ? classes : classes && typeof classes === 'object' ? Object.keys(classes).filter((k) => classes[k]) : [];
  return `<${tag}${list.length ? ` class="${escape(list.join(' '))}"` : ''}${attrs}>`;
}

function inline(text, opts) {
  // Code spans first, so their content is left alone.
  const parts = escape(text).split(/(`[^`]+`)/);
  return parts.map((p) => {
    if (p.length > 2 && p.startsWith('`') && p.endsWith('`')) return `${open('code', opts)}${p.slice(1, -1)}</code>`;
    return p
      .replace(/\[([^\]]+)\]\((https?:\/\/[^\s)]+)\)/g, (_, label, url) =>
        `${open('a', opts, ` href="${url}" target="_blank" rel="noopener noreferrer"`)}${label}</a>`)
      .replace(/\*\*([^*]+)\*\*/g, (_, s) => `${open('strong', opts)}${s}</strong>`)
      .replace(/(^|[^*\w])\*([^*\s](?:[^*]*[^*\s])?)\*(?![*\w])/g, (_, pre, s) => `${pre}${open('em', opts)}${s}</em>`)
      .replace(/(^|[^_\w])_([^_\s](?:[^_]*[^_\s])?)_(?![_\w])/g, (_, pre, s) => `${pre}${open('em', opts)}${s}</em>`);
  }).join('');
}

/**
 * Renders Markdown to HTML.
 * @param {string} value
 * @param {{tagClassMap?: Record<string, string[]>}} [opts]
 * @returns {Promise<string>}
 */
export async function renderMarkdown(value, opts) {
  const out = [];
  let para = [];
  let list = null; // {tag, items}
  let fence = null; // the lines of an open ``` block
  const flushPara = () => {
    if (para.length) out.push(`${open('p', opts)}${para.map((l) => inline(l, opts)).join('<br>')}</p>`);
    para = [];
  };
  const flushList = () => {
    if (list) out.push(`${open(list.tag, opts)}${list.items.map((i) => `${open('li', opts)}${inline(i, opts)}</li>`).join('')}</${list.tag}>`);
    list = null;
  };
  const flushFence = () => {
    out.push(`${open('pre', opts)}${open('code', opts)}${escape(fence.join('\n'))}</code></pre>`);
    fence = null;
  };
  for (const raw of String(value ?? '').split(/\r?\n/)) {
    const line = raw.trimEnd();
    let m;
    if (fence) {
      if (/^\s*```\s*$/.test(line)) flushFence();
      else fence.push(raw);
    } else if (/^\s*```/.test(line)) {
      flushPara();
      flushList();
      fence = [];
    } else if (!line.trim()) {
      flushPara();
      flushList();
    } else if ((m = /^(#{1,5})\s+(.*)$/.exec(line))) {
      flushPara();
      flushList();
      const tag = `h${m[1].length}`;
      out.push(`${open(tag, opts)}${inline(m[2], opts)}</${tag}>`);
    } else if ((m = /^\s*(?:[-*+]|(\d+)[.)])\s+(.*)$/.exec(line))) {
      flushPara();
      const tag = m[1] ? 'ol' : 'ul';
      if (list && list.tag !== tag) flushList();
      list ??= { tag, items: [] };
      list.items.push(m[2]);
    } else {
      flushList();
      para.push(line.trim());
    }
  }
  flushPara();
  flushList();
  if (fence) flushFence();
  return out.join('');
}
