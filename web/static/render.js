// Renders a genui surface definition ({root, widgets:[{id, widget:{<Type>:{props}}}]}) into
// DOM. Children are resolved by id; a missing id, a cycle or an unknown widget type renders
// as an inspectable box instead of failing the surface.
//
// Input widgets keep their current value in ctx.values (a Map keyed by widget id) across
// re-renders of the same surface, like the Flutter client's data model. A value the model
// changes in a new definition replaces the user's value; an unchanged one keeps it.

const SVG = 'http://www.w3.org/2000/svg';

// Material icon paths (24×24) for the rich catalog's icon names.
const ICONS = {
  check: 'M9 16.17 4.83 12l-1.42 1.41L9 19 21 7l-1.41-1.41z',
  close: 'M19 6.41 17.59 5 12 10.59 6.41 5 5 6.41 10.59 12 5 17.59 6.41 19 12 13.41 17.59 19 19 17.59 13.41 12z',
  star: 'M12 17.27 18.18 21l-1.64-7.03L22 9.24l-7.19-.61L12 2 9.19 8.63 2 9.24l5.46 4.73L5.82 21z',
  info: 'M12 2C6.48 2 2 6.48 2 12s4.48 10 10 10 10-4.48 10-10S17.52 2 12 2zm1 15h-2v-6h2v6zm0-8h-2V7h2v2z',
  warning: 'M1 21h22L12 2 1 21zm12-3h-2v-2h2v2zm0-4h-2v-4h2v4z',
  search: 'M15.5 14h-.79l-.28-.27A6.47 6.47 0 0 0 16 9.5 6.5 6.5 0 1 0 9.5 16c1.61 0 3.09-.59 4.23-1.57l.27.28v.79l5 4.99L20.49 19l-4.99-5zm-6 0C7.01 14 5 11.99 5 9.5S7.01 5 9.5 5 14 7.01 14 9.5 11.99 14 9.5 14z',
  home: 'M10 20v-6h4v6h5v-8h3L12 3 2 12h3v8z',
  person: 'M12 12c2.21 0 4-1.79 4-4s-1.79-4-4-4-4 1.79-4 4 1.79 4 4 4zm0 2c-2.67 0-8 1.34-8 4v2h16v-2c0-2.66-5.33-4-8-4z',
};
const FALLBACK_ICON = 'M12 2a10 10 0 1 0 0 20 10 10 0 0 0 0-20zm0 4a6 6 0 1 1 0 12 6 6 0 0 1 0-12z';

const ALIGN = { start: 'flex-start', center: 'center', end: 'flex-end', stretch: 'stretch', baseline: 'baseline' };
const JUSTIFY = {
  start: 'flex-start', center: 'center', end: 'flex-end',
  spaceBetween: 'space-between', spaceAround: 'space-around', spaceEvenly: 'space-evenly',
};
const FIT = { contain: 'contain', cover: 'cover', fill: 'fill', none: 'none', scaleDown: 'scale-down', fitWidth: 'contain', fitHeight: 'contain' };
const TEXT_STYLES = new Set(['headline', 'title', 'body', 'caption']);
const MAX_DEPTH = 64;

let groupSeq = 0;

/** h creates an element with attributes (on* are listeners; null/false are skipped) and children. */
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'text') el.textContent = v;
    else if (k in el && typeof v !== 'string') el[k] = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  el.append(...children.flat().filter((c) => c !== null && c !== undefined));
  return el;
}

function num(v, lo, hi, def) {
  return typeof v === 'number' && Number.isFinite(v) ? Math.min(hi, Math.max(lo, v)) : def;
}

function ids(v) {
  return Array.isArray(v) ? v : [];
}

/**
 * renderSurface returns the DOM of a surface definition.
 * @param {{root: string, widgets: Array<{id: string, widget: object}>}} def
 * @param {{values: Map<string, any>, seen?: Map<string, string>, onEvent?: (widgetId: string, eventType: string) => void}} ctx
 */
export function renderSurface(def, ctx) {
  ctx.seen ??= new Map();
  ctx.onEvent ??= () => {};
  if (!def || typeof def !== 'object' || !Array.isArray(def.widgets)) {
    return problem('Invalid surface definition: expected {root, widgets: [...]}', def);
  }
  const byId = new Map();
  for (const w of def.widgets) if (w && typeof w.id === 'string' && !byId.has(w.id)) byId.set(w.id, w);
  const r = { byId, ctx, stack: new Set(), inputs: new Set() };
  const el = renderWidget(def.root, r);
  // Values of inputs the surface no longer has are dropped.
  for (const id of [...ctx.values.keys()]) if (!r.inputs.has(id)) ctx.values.delete(id);
  return el;
}

function renderWidget(id, r) {
  if (typeof id !== 'string') return problem('Invalid widget reference', id);
  const entry = r.byId.get(id);
  if (!entry) return problem(`Missing widget "${id}"`);
  if (r.stack.has(id) || r.stack.size >= MAX_DEPTH) return problem(`Cycle or nesting too deep at "${id}"`, entry);
  const w = entry.widget;
  const keys = w && typeof w === 'object' && !Array.isArray(w) ? Object.keys(w) : [];
  const type = keys.length === 1 ? keys[0] : null;
  const props = type && w[type] && typeof w[type] === 'object' ? w[type] : {};
  const render = type && Object.hasOwn(WIDGETS, type) ? WIDGETS[type] : null;
  r.stack.add(id);
  let el;
  try {
    el = render ? render(props, id, r) : unknown(type, keys, entry);
  } finally {
    r.stack.delete(id);
  }
  el.dataset.widgetId = id;
  el.dataset.widgetType = type ?? '(invalid)';
  return el;
}

/** initial returns the value an input shows: the user's, unless the model changed the prop. */
function initial(r, id, propValue, fallback) {
  const { values, seen } = r.ctx;
  const key = JSON.stringify(propValue ?? null);
  if (!values.has(id) || seen.get(id) !== key) values.set(id, propValue ?? fallback);
  seen.set(id, key);
  r.inputs.add(id);
  return values.get(id);
}

function flex(dir, p, r) {
  const el = h('div', { class: `w-${dir}` }, ids(p.children).map((c) => renderWidget(c, r)));
  el.style.gap = `${num(p.spacing, 0, 200, 8)}px`;
  if (ALIGN[p.crossAxisAlignment]) el.style.alignItems = ALIGN[p.crossAxisAlignment];
  if (JUSTIFY[p.mainAxisAlignment]) el.style.justifyContent = JUSTIFY[p.mainAxisAlignment];
  return el;
}

const WIDGETS = {
  Column: (p, id, r) => flex('column', p, r),
  Row: (p, id, r) => flex('row', p, r),

  Text: (p) => h('span', {
    class: `w-text${TEXT_STYLES.has(p.style) ? ' ' + p.style : ''}`,
    text: String(p.text ?? ''),
  }),

  Card: (p, id, r) => {
    const el = h('div', { class: 'w-card' }, typeof p.child === 'string' ? renderWidget(p.child, r) : null);
    el.style.setProperty('--elev', String(num(p.elevation, 0, 24, 1)));
    return el;
  },

  List: (p, id, r) => h('ul', { class: `w-list${p.dividers ? ' dividers' : ''}` },
    ids(p.children).map((c) => h('li', {}, renderWidget(c, r)))),

  ListTile: (p, id, r) => h('div', { class: 'w-listtile' },
    typeof p.leading === 'string' ? h('span', { class: 'lead' }, renderWidget(p.leading, r)) : null,
    h('span', { class: 'w-listtile-text' },
      h('span', { class: 'title', text: String(p.title ?? '') }),
      typeof p.subtitle === 'string' && p.subtitle ? h('span', { class: 'subtitle', text: p.subtitle }) : null),
    typeof p.trailing === 'string' ? h('span', { class: 'trail' }, renderWidget(p.trailing, r)) : null),

  Image: (p) => {
    const url = typeof p.url === 'string' && /^(https?:\/\/|data:image\/)/i.test(p.url) ? p.url : null;
    if (!url) {
      const what = p.assetName ? `asset "${p.assetName}"` : 'no image URL';
      return h('div', { class: 'w-image placeholder', role: 'img', 'aria-label': p.alt || what, text: `Image: ${what}` });
    }
    const img = h('img', { class: 'w-image', src: url, alt: String(p.alt ?? ''), loading: 'lazy', decoding: 'async', referrerpolicy: 'no-referrer' });
    img.style.objectFit = FIT[p.fit] ?? 'contain';
    const height = num(p.height, 1, 2000, null);
    if (height) img.style.height = `${height}px`;
    return img;
  },

  Icon: (p) => {
    const name = String(p.name ?? '');
    const svg = document.createElementNS(SVG, 'svg');
    svg.setAttribute('viewBox', '0 0 24 24');
    svg.setAttribute('class', 'w-icon');
    svg.setAttribute('role', 'img');
    svg.setAttribute('aria-label', name || 'icon');
    const path = document.createElementNS(SVG, 'path');
    path.setAttribute('d', ICONS[name] ?? FALLBACK_ICON);
    svg.append(path);
    return svg;
  },

  ElevatedButton: (p, id, r) => h('button', {
    type: 'button',
    class: 'w-button',
    'data-action': typeof p.action === 'string' ? p.action : null,
    onclick: () => r.ctx.onEvent(id, 'onTap'),
  }, typeof p.child === 'string' ? renderWidget(p.child, r) : h('span', { class: 'w-text', text: String(p.label ?? p.text ?? 'Button') })),

  TextField: (p, id, r) => {
    const multi = num(p.maxLines, 1, 20, 1) > 1;
    const input = h(multi ? 'textarea' : 'input', {
      class: 'w-input',
      type: multi ? null : (p.obscureText ? 'password' : 'text'),
      rows: multi ? String(Math.min(p.maxLines, 8)) : null,
      placeholder: typeof p.hintText === 'string' ? p.hintText : null,
      'aria-label': p.label ? null : (p.hintText || `Text field ${id}`),
      autocomplete: 'off',
      enterkeyhint: multi ? null : 'send',
    });
    input.value = String(initial(r, id, typeof p.value === 'string' ? p.value : undefined, ''));
    input.addEventListener('input', () => r.ctx.values.set(id, input.value));
    input.addEventListener('keydown', (e) => {
      // Enter submits a single-line field; Ctrl/Cmd+Enter a multi-line one.
      if (e.key !== 'Enter' || e.isComposing || (multi && !(e.ctrlKey || e.metaKey))) return;
      e.preventDefault();
      r.ctx.values.set(id, input.value);
      r.ctx.onEvent(id, 'onSubmitted');
    });
    return h('label', { class: 'w-field' }, p.label ? h('span', { class: 'w-label', text: String(p.label) }) : null, input);
  },

  Checkbox: (p, id, r) => {
    const box = h('input', { type: 'checkbox', checked: Boolean(initial(r, id, typeof p.value === 'boolean' ? p.value : undefined, false)) });
    box.addEventListener('change', () => r.ctx.values.set(id, box.checked));
    return h('label', { class: 'w-check' }, box, h('span', { text: String(p.label ?? id) }));
  },

  CheckboxGroup: (p, id, r) => {
    const labels = ids(p.labels).map(String);
    const start = labels.map((_, i) => Boolean(ids(p.values)[i]));
    const current = initial(r, id, Array.isArray(p.values) ? start : undefined, start);
    const values = labels.map((_, i) => Boolean(current?.[i]));
    r.ctx.values.set(id, values);
    return h('fieldset', { class: 'w-group', 'aria-label': id },
      labels.map((label, i) => {
        const box = h('input', { type: 'checkbox', checked: values[i] });
        box.addEventListener('change', () => {
          const next = [...r.ctx.values.get(id)];
          next[i] = box.checked;
          r.ctx.values.set(id, next);
        });
        return h('label', { class: 'w-check' }, box, h('span', { text: label }));
      }));
  },

  RadioGroup: (p, id, r) => {
    const labels = ids(p.labels).map(String);
    const value = initial(r, id, typeof p.groupValue === 'string' ? p.groupValue : undefined, '');
    const name = `radio-${++groupSeq}`;
    return h('fieldset', { class: 'w-group', role: 'radiogroup', 'aria-label': id },
      labels.map((label) => {
        const radio = h('input', { type: 'radio', name, value: label, checked: label === value });
        radio.addEventListener('change', () => { if (radio.checked) r.ctx.values.set(id, label); });
        return h('label', { class: 'w-check' }, radio, h('span', { text: label }));
      }));
  },

  Slider: (p, id, r) => {
    const min = num(p.min, -1e12, 1e12, 0);
    const max = Math.max(num(p.max, -1e12, 1e12, 100), min + Number.EPSILON);
    const divisions = num(p.divisions, 1, 1e6, null);
    const value = Number(initial(r, id, typeof p.value === 'number' ? p.value : undefined, min));
    const input = h('input', {
      type: 'range', min: String(min), max: String(max),
      step: divisions ? String((max - min) / divisions) : 'any', 'aria-label': id,
    });
    input.value = String(value);
    const out = h('output', { class: 'w-slider-value', text: fmt(value) });
    input.addEventListener('input', () => {
      r.ctx.values.set(id, Number(input.value));
      out.textContent = fmt(Number(input.value));
    });
    return h('div', { class: 'w-slider' }, input, out);
  },

  Chip: (p, id, r) => {
    const selected = Boolean(initial(r, id, typeof p.selected === 'boolean' ? p.selected : undefined, false));
    const chip = h('button', { type: 'button', class: 'w-chip', 'aria-pressed': String(selected), text: String(p.label ?? id) });
    chip.addEventListener('click', () => {
      const next = chip.getAttribute('aria-pressed') !== 'true';
      chip.setAttribute('aria-pressed', String(next));
      r.ctx.values.set(id, next);
    });
    return chip;
  },

  Divider: () => h('hr', { class: 'w-divider' }),
};

function fmt(n) {
  return Number.isInteger(n) ? String(n) : String(Math.round(n * 100) / 100);
}

function unknown(type, keys, entry) {
  const title = type
    ? `Unknown widget: ${type}`
    : `Invalid widget entry: ${keys.length === 0 ? 'no widget type' : `${keys.length} widget types (${keys.join(', ')})`}`;
  return problem(title, entry);
}

/** problem renders an inspectable box: a title plus the offending JSON in a <details>. */
function problem(title, data) {
  return h('div', { class: 'w-unknown', role: 'group', 'aria-label': title },
    h('strong', { text: title }),
    data === undefined ? null : h('details', {},
      h('summary', { text: 'JSON' }),
      h('pre', { text: JSON.stringify(data, null, 2) ?? String(data) })));
}

/** Names of the widgets a catalog defines (for display; the server is the judge). */
export function catalogWidgetNames(catalog) {
  const resolve = (s, depth = 0) => {
    if (s && typeof s.$ref === 'string' && s.$ref.startsWith('#/') && depth < 16) {
      let cur = catalog;
      for (const part of s.$ref.slice(2).split('/')) cur = cur?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
      return resolve(cur, depth + 1);
    }
    return s;
  };
  const widget = resolve(resolve(resolve(resolve(catalog)?.properties?.widgets)?.items)?.properties?.widget) ?? resolve(catalog);
  const alts = widget?.anyOf ?? widget?.oneOf ?? [widget];
  const names = new Set();
  for (const alt of Array.isArray(alts) ? alts : []) {
    const a = resolve(alt);
    const keys = Array.isArray(a?.required) && a.required.length === 1 ? a.required : Object.keys(a?.properties ?? {});
    for (const k of keys) names.add(k);
  }
  return [...names];
}
