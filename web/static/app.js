// The playground: session set-up, chat, live surfaces and the stream inspector, for two
// UI formats: genui (a widget catalog, POST /generateUi, surfaces drawn by render.js) and
// A2UI v0.9 or v0.8 (POST /generateA2ui, surfaces drawn by the official A2UI web
// renderer, bundled as a2ui-v09.js / a2ui-v08.js and loaded on demand).
import { catalogWidgetNames, renderSurface } from './render.js';
import { a2uiOp, readEvents } from './stream.js';

const $ = (id) => document.getElementById(id);
const ui = {
  modelName: $('model-name'), modelFlag: $('model-flag'), modelNote: $('model-note'),
  catalogSelect: $('catalog-select'), catalogJSON: $('catalog-json'), transport: $('transport'),
  start: $('start'), sessionStatus: $('session-status'), sessionError: $('session-error'),
  log: $('log'), composer: $('composer'), message: $('message'), stop: $('stop'),
  surfaces: $('surfaces'), surfacesEmpty: $('surfaces-empty'),
  turns: $('turns'), inspectorEmpty: $('inspector-empty'), clearInspector: $('clear-inspector'),
  format: $('ui-format'), genuiSetup: $('genui-setup'), a2uiSetup: $('a2ui-setup'),
  a2uiRenderer: $('a2ui-renderer'), a2uiCatalog: $('a2ui-catalog'), a2uiCapabilities: $('a2ui-capabilities'),
  a2uiReset: $('a2ui-reset'), a2uiStatus: $('a2ui-status'), a2uiError: $('a2ui-error'),
};

// The A2UI formats and their renderer bundles. Both bundles define <a2ui-surface>, so a
// page loads at most one of them: switching to the other version reloads the page.
const A2UI_FORMATS = {
  'a2ui-v0.9': { version: 'v0.9', bundle: './a2ui-v09.js' },
  'a2ui-v0.8': { version: 'v0.8', bundle: './a2ui-v08.js' },
};

const state = {
  sessionId: null,
  history: [], // the conversation sent with every turn
  surfaces: new Map(), // surfaceId → {el, body, rev, values, seen}
  queue: Promise.resolve(), // turns run one after another
  controller: null, // aborts the running turn
  sampleLoad: Promise.resolve(), // the sample catalog being loaded into the editor
  turnNo: 0,
  format: 'genui', // or a key of A2UI_FORMATS
  bundle: null, // the A2UI bundle this page has loaded (its URL)
  a2ui: null, // A2UI mode: {version, module, renderer}
  a2uiErrors: [], // v0.9 client errors to report with the next user message
};

// ---- helpers -------------------------------------------------------------------------

function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k === 'text') el.textContent = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  el.append(...children.flat().filter((c) => c !== null && c !== undefined));
  return el;
}

const ms = (t) => `${t.toFixed(1)} ms`;

async function readJSON(res) {
  const text = await res.text();
  try {
    return JSON.parse(text);
  } catch {
    return { error: { status: `HTTP ${res.status}`, message: text.slice(0, 500) || res.statusText } };
  }
}

function errorText(err, httpStatus) {
  const status = err?.status ?? 'ERROR';
  const code = httpStatus ? ` (HTTP ${httpStatus})` : '';
  return `${status}${code}: ${err?.message ?? 'unknown error'}`;
}

// ---- model and catalogs --------------------------------------------------------------

async function loadModel() {
  try {
    const info = await readJSON(await fetch('readyz'));
    ui.modelName.textContent = info.model ?? 'unknown';
    const offline = info.llm === false;
    ui.modelFlag.hidden = !offline;
    document.body.classList.toggle('offline', offline);
    if (info.note) {
      ui.modelNote.textContent = info.note;
      ui.modelNote.hidden = false;
    }
  } catch (e) {
    ui.modelName.textContent = `unknown (${e.message})`;
  }
}

async function loadCatalogs() {
  try {
    const { catalogs = [] } = await readJSON(await fetch('catalogs'));
    const custom = ui.catalogSelect.querySelector('option[value="custom"]');
    for (const name of catalogs) custom.before(h('option', { value: name, text: `${name} (sample)` }));
    if (catalogs.length) {
      ui.catalogSelect.value = catalogs.includes('basic') ? 'basic' : catalogs[0];
      await (state.sampleLoad = loadSample(ui.catalogSelect.value));
    }
  } catch (e) {
    showSessionError(`Could not load the sample catalogs: ${e.message}`);
  }
}

async function loadSample(name) {
  try {
    const res = await fetch(`catalogs/${encodeURIComponent(name)}`);
    const body = await readJSON(res);
    if (!res.ok) return showSessionError(errorText(body.error, res.status));
    ui.catalogJSON.value = JSON.stringify(body, null, 2);
    ui.catalogJSON.dataset.sample = name;
  } catch (e) {
    showSessionError(`Could not load the catalog “${name}”: ${e.message}`);
  }
}

// ---- session -------------------------------------------------------------------------

function showSessionError(text) {
  ui.sessionError.textContent = text;
  ui.sessionError.hidden = !text;
}

/** Starts a session with the catalog in the editor; fresh clears the conversation. */
async function startSession({ fresh = true } = {}) {
  showSessionError('');
  await state.sampleLoad;
  let catalog;
  try {
    catalog = JSON.parse(ui.catalogJSON.value);
  } catch (e) {
    showSessionError(`The catalog is not valid JSON: ${e.message}`);
    ui.catalogJSON.focus();
    return false;
  }
  ui.start.disabled = true;
  ui.sessionStatus.textContent = 'Starting a session…';
  try {
    const res = await fetch('startSession', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ data: { protocolVersion: '0.1.0', catalog } }),
    });
    const body = await readJSON(res);
    if (!res.ok || typeof body.result !== 'string') {
      state.sessionId = null;
      ui.sessionStatus.textContent = 'No session.';
      showSessionError(`The server refused the catalog. ${errorText(body.error, res.status)}`);
      return false;
    }
    if (fresh) resetConversation();
    state.sessionId = body.result;
    const names = catalogWidgetNames(catalog);
    const label = ui.catalogSelect.value === 'custom' ? 'custom catalog' : `catalog “${ui.catalogSelect.value}”`;
    ui.sessionStatus.textContent = `Session ${state.sessionId.slice(0, 8)}… with ${label}` +
      (names.length ? ` (${names.length} widgets: ${names.join(', ')}).` : '.');
    note(`Session started with ${label}.`);
    return true;
  } catch (e) {
    showSessionError(`Could not reach the server: ${e.message}`);
    ui.sessionStatus.textContent = 'No session.';
    return false;
  } finally {
    ui.start.disabled = false;
  }
}

function resetConversation() {
  state.controller?.abort();
  state.history = [];
  state.a2uiErrors = [];
  if (state.a2ui) {
    state.a2ui.renderer.dispose();
    state.a2ui.renderer = newA2uiRenderer(state.a2ui.module);
  }
  for (const s of state.surfaces.values()) s.el.remove();
  state.surfaces.clear();
  ui.surfacesEmpty.hidden = false;
  ui.log.replaceChildren();
}

// ---- chat ----------------------------------------------------------------------------

function addToLog(li) {
  ui.log.append(li);
  ui.log.scrollTop = ui.log.scrollHeight;
  return li;
}

/** Runs fn, keeping the log scrolled to the end if it was (a streaming reply grows). */
function updateLog(fn) {
  const atEnd = ui.log.scrollHeight - ui.log.scrollTop - ui.log.clientHeight < 48;
  fn();
  if (atEnd) ui.log.scrollTop = ui.log.scrollHeight;
}

function note(text) {
  addToLog(h('li', { class: 'msg note', text }));
}

function userBubble(display) {
  const li = h('li', { class: 'msg user' }, h('span', { class: 'who', text: 'You' }));
  if (display.action) {
    const a = display.action;
    li.append(h('span', { class: 'body' },
      h('span', { text: `Action “${a.name}” from “${a.sourceComponentId}” on ${a.surfaceId}` }),
      h('code', { class: 'values', text: JSON.stringify(a.context ?? {}) })));
  } else if (display.event) {
    const ev = display.event;
    li.append(h('span', { class: 'body' },
      h('span', { text: `Used “${ev.widgetId}” (${ev.eventType}) on ${ev.surfaceId}` }),
      h('code', { class: 'values', text: JSON.stringify(ev.value) })));
  } else {
    li.append(h('span', { class: 'body', text: display.text }));
  }
  return addToLog(li);
}

function errorBubble(text, details) {
  const li = h('li', { class: 'msg error' }, h('span', { class: 'who', text: 'Error' }), h('span', { class: 'body', text }));
  if (details !== undefined && details !== null) {
    li.append(h('details', {}, h('summary', { text: 'Details' }), h('pre', { text: JSON.stringify(details, null, 2) })));
  }
  return addToLog(li);
}

function enqueue(fn) {
  state.queue = state.queue.then(fn).catch((e) => errorBubble(`Playground error: ${e.message}`));
  return state.queue;
}

function sendText(text) {
  enqueue(async () => {
    if (state.format !== 'genui') {
      if (state.a2ui) await runA2uiTurn({ role: 'user', parts: [{ type: 'text', text }] }, { text });
      else errorBubble('The A2UI renderer is not loaded; see the Session panel.');
      return;
    }
    if (!state.sessionId && !(await startSession())) return;
    await runTurn({ role: 'user', parts: [{ type: 'text', text }] }, { text });
  });
}

/** A UI action: one uiEvent part carrying every input value of the surface. */
function sendEvent(surfaceId, widgetId, eventType) {
  const s = state.surfaces.get(surfaceId);
  if (!s) return;
  const event = {
    surfaceId, widgetId, eventType, isAction: true,
    value: Object.fromEntries(s.values), timestamp: new Date().toISOString(),
  };
  enqueue(() => runTurn({ role: 'user', parts: [{ type: 'uiEvent', event }] }, { event }));
}

// ---- surfaces ------------------------------------------------------------------------

function upsertSurface(surfaceId, definition) {
  let s = state.surfaces.get(surfaceId);
  const isNew = !s;
  if (isNew) {
    const rev = h('span', { class: 'rev' });
    const body = h('div', { class: 'surface-body' });
    const el = h('article', { class: 'surface', 'data-surface-id': surfaceId, 'aria-label': `Surface ${surfaceId}` },
      h('header', { class: 'surface-head' }, h('code', { text: surfaceId }), rev), body);
    s = { el, body, revEl: rev, rev: 0, values: new Map(), seen: new Map() };
    state.surfaces.set(surfaceId, s);
    ui.surfaces.append(el);
    ui.surfacesEmpty.hidden = true;
  }
  s.rev++;
  s.revEl.textContent = s.rev === 1 ? 'new' : `update ${s.rev - 1}`;

  // Keep focus on the same widget when a surface is replaced under the user's hands.
  const active = document.activeElement;
  const focusedId = s.body.contains(active) ? active.closest('[data-widget-id]')?.dataset.widgetId : null;

  s.body.replaceChildren(renderSurface(definition, {
    values: s.values, seen: s.seen,
    onEvent: (widgetId, eventType) => sendEvent(surfaceId, widgetId, eventType),
  }));

  if (focusedId) {
    const target = s.body.querySelector(`[data-widget-id="${CSS.escape(focusedId)}"]`);
    (target?.matches('input, textarea, button, select') ? target : target?.querySelector('input, textarea, button, select'))?.focus();
  }
  s.el.classList.remove('flash');
  void s.el.offsetWidth; // restart the highlight animation
  s.el.classList.add('flash');
  if (isNew) s.el.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
}

function deleteSurface(surfaceId) {
  const s = state.surfaces.get(surfaceId);
  if (!s) return false;
  s.el.remove();
  state.surfaces.delete(surfaceId);
  ui.surfacesEmpty.hidden = state.surfaces.size > 0;
  return true;
}

// ---- inspector -----------------------------------------------------------------------

function inspectorTurn(n, transport, url, requestBody) {
  ui.inspectorEmpty.hidden = true;
  for (const d of ui.turns.querySelectorAll(':scope > details[open]')) d.open = false;
  const metric = (name, label) => {
    const dd = h('dd', { 'data-metric': name, text: '…' });
    return { dd, el: h('div', {}, h('dt', { text: label }), dd) };
  };
  const status = h('span', { 'data-metric': 'status', text: '…' });
  const m = {
    headers: metric('headers', 'Headers after'),
    firstSurface: metric('first-surface', 'First surface'),
    total: metric('total', 'Total'),
  };
  const events = h('ol', { class: 'events', 'aria-label': `Events of turn ${n}` });
  const transportLabel = transport === 'sse' ? 'Genkit SSE' : transport.startsWith('a2ui-') ? `NDJSON, A2UI ${transport.slice(5)}` : 'NDJSON';
  const summary = h('summary', {}, h('span', { class: 'turn-title', text: `Turn ${n}` }), h('span', { class: 'turn-transport', text: transportLabel }));
  const el = h('details', { class: 'turn', open: true, 'data-turn': n },
    summary,
    h('p', { class: 'req' }, h('code', { text: `POST ${url}` }), ' → ', status),
    h('dl', { class: 'metrics' }, Object.values(m).map((x) => x.el)),
    h('details', { class: 'reqbody' }, h('summary', { text: 'Request body' }), h('pre', { text: JSON.stringify(requestBody, null, 2) })),
    events);
  ui.turns.prepend(el);
  return {
    set(name, text) { (name === 'status' ? status : m[name].dd).textContent = text; },
    event(t, label, raw, kind) {
      events.append(h('li', { class: `ev k-${kind}` },
        h('details', {},
          h('summary', {}, h('time', { class: 't', text: `+${ms(t)}` }), ' ', h('span', { class: 'label', text: label })),
          h('pre', { text: raw }))));
    },
  };
}

// ---- one turn ------------------------------------------------------------------------

/**
 * Posts a turn and returns the response to stream, or null after reporting an error
 * answer (its JSON error, or its text) to the inspector and fail.
 */
async function postTurn(url, requestBody, transport, controller, insp, t0, fail) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: transport === 'sse' ? 'text/event-stream' : 'application/x-ndjson' },
    body: JSON.stringify(requestBody),
    signal: controller.signal,
  });
  insp.set('headers', ms(performance.now() - t0));
  insp.set('status', `${res.status} ${res.headers.get('Content-Type') ?? ''}`.trim());
  if (res.ok && res.body) return res;
  const raw = await res.text();
  insp.event(performance.now() - t0, `HTTP ${res.status}`, raw, 'error');
  let body;
  try { body = JSON.parse(raw); } catch { body = { error: { status: `HTTP ${res.status}`, message: raw.slice(0, 500) } }; }
  fail(body.error, res.status);
  return null;
}

async function runTurn(userMessage, display) {
  const n = ++state.turnNo;
  const transport = ui.transport.value === 'sse' ? 'sse' : 'ndjson';
  state.history.push(userMessage);
  userBubble(display);

  const textEl = h('span', { class: 'body typing', text: '' });
  const notes = h('ul', { class: 'notes' });
  const modelLi = addToLog(h('li', { class: 'msg model', 'aria-busy': 'true' }, h('span', { class: 'who', text: 'Model' }), textEl, notes));
  const addNote = (text) => updateLog(() => notes.append(h('li', { text })));
  const setText = (t) => updateLog(() => { textEl.textContent = t; });

  const url = transport === 'sse' ? 'generateUi?stream=true' : 'generateUi?format=ndjson';
  const requestBody = { data: { sessionId: state.sessionId, conversation: state.history } };
  const insp = inspectorTurn(n, transport, url, requestBody);

  let text = '';
  let finished = false;
  let firstSurface = null;
  const shown = new Map(); // surfaceId → its latest definition this turn
  const controller = new AbortController();
  state.controller = controller;
  ui.stop.hidden = false;
  const t0 = performance.now();
  const fail = (err, http, details) => {
    finished = true;
    const msg = errorText(err, http);
    errorBubble(msg, details ?? err?.details);
    if (err?.status === 'NOT_FOUND' && /session/i.test(err?.message ?? '')) {
      state.sessionId = null;
      ui.sessionStatus.textContent = 'The session expired. The next message starts a new one with the same catalog; the conversation is kept.';
    }
  };

  try {
    const res = await postTurn(url, requestBody, transport, controller, insp, t0, fail);
    if (!res) return;
    for await (const ev of readEvents(res.body, transport)) {
      const t = performance.now() - t0;
      const kind = ev.invalid ? 'error' : (ev.actions[0]?.kind ?? 'other');
      insp.event(t, ev.invalid ? `not JSON (${ev.invalid})` : ev.label, ev.raw, kind);
      for (const a of ev.actions) {
        switch (a.kind) {
          case 'text':
            text += a.text;
            setText(text);
            break;
          case 'tool': {
            const id = a.input?.surfaceId;
            if (typeof id !== 'string' || !id) {
              addNote(`Ignored ${a.name}: no surfaceId`);
            } else if (a.name === 'addOrUpdateSurface') {
              const existed = state.surfaces.has(id);
              upsertSurface(id, a.input.definition);
              shown.set(id, a.input.definition);
              if (firstSurface === null) {
                firstSurface = t;
                insp.set('firstSurface', ms(t));
              }
              addNote(`${existed ? 'Updated' : 'Showed'} surface ${id}`);
            } else if (a.name === 'deleteSurface') {
              shown.delete(id);
              addNote(deleteSurface(id) ? `Removed surface ${id}` : `Asked to remove unknown surface ${id}`);
            } else {
              addNote(`Ignored unknown tool ${a.name}`);
            }
            break;
          }
          case 'result': {
            finished = true;
            if (!text) {
              const parts = a.result?.message?.content ?? [];
              text = parts.map((p) => p?.text ?? '').join('');
              setText(text);
            }
            break;
          }
          case 'error':
            fail(a.error);
            break;
        }
      }
    }
    if (!finished) fail({ status: 'UNAVAILABLE', message: 'the stream ended without a result' });
  } catch (e) {
    if (e.name === 'AbortError') {
      insp.event(performance.now() - t0, 'aborted', 'The request was stopped.', 'error');
      addNote('Stopped.');
    } else {
      fail({ status: 'NETWORK', message: e.message });
    }
  } finally {
    const total = performance.now() - t0;
    insp.set('total', ms(total));
    if (firstSurface === null) insp.set('firstSurface', 'none');
    if (state.controller === controller) state.controller = null;
    ui.stop.hidden = true;
    modelLi.removeAttribute('aria-busy');
    textEl.classList.remove('typing');
    if (!text && notes.children.length === 0) modelLi.remove();

    // History: the model's text plus one ui part per surface it showed this turn.
    const parts = [];
    if (text) parts.push({ type: 'text', text });
    for (const [surfaceId, def] of shown) {
      parts.push({ type: 'ui', definition: { surfaceId, root: def?.root, widgets: def?.widgets ?? [] } });
    }
    if (parts.length) state.history.push({ role: 'model', parts });
  }
}

// ---- A2UI mode ---------------------------------------------------------------------

function showA2uiError(text) {
  ui.a2uiError.textContent = text;
  ui.a2uiError.hidden = !text;
}

/** A renderer for a new conversation: its surfaces go to the Surfaces panel. */
function newA2uiRenderer(mod) {
  return mod.createRenderer({
    onSurfaceCreated: (surfaceId) => addA2uiSurface(surfaceId),
    onSurfaceDeleted: (surfaceId) => deleteSurface(surfaceId),
    onAction: (action) => sendA2uiAction(action),
    onClientError: (error) => {
      // Reported to the server with the next user message, as an A2UI client error.
      state.a2uiErrors.push(error);
      errorBubble(`Surface ${error?.surfaceId ?? '?'} reported an error: ${error?.message ?? error?.code ?? 'unknown'}`, error);
    },
  });
}

function addA2uiSurface(surfaceId) {
  const { version, renderer } = state.a2ui;
  const rev = h('span', { class: 'rev', text: `A2UI ${version}` });
  const body = h('div', { class: 'surface-body a2ui-host' });
  const el = h('article', {
    class: `surface a2ui ${version === 'v0.8' ? 'a2ui-v08' : 'a2ui-v09'}`, 'data-surface-id': surfaceId,
    'data-a2ui-version': version, 'aria-label': `Surface ${surfaceId}`,
  }, h('header', { class: 'surface-head' }, h('code', { text: surfaceId }), rev), body);
  state.surfaces.set(surfaceId, { el, body, revEl: rev, rev: 0, values: new Map(), seen: new Map() });
  ui.surfaces.append(el);
  ui.surfacesEmpty.hidden = true;
  renderer.mount(surfaceId, body);
  el.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
}

/** The text of a renderer's error: a zod validation error lists its issues. */
function rendererError(e) {
  const issues = Array.isArray(e?.issues) ? e.issues : null;
  if (!issues?.length) return e?.message ?? String(e);
  return issues.map((i) => `${i.message}${i.path?.length ? ` (at ${i.path.join('.')})` : ''}`).join('; ');
}

/** Counts a message applied to a surface and flashes it. */
function touchA2uiSurface(surfaceId) {
  const s = state.surfaces.get(surfaceId);
  if (!s) return;
  s.rev++;
  s.revEl.textContent = `A2UI ${state.a2ui.version} · ${s.rev} message${s.rev === 1 ? '' : 's'}`;
  s.el.classList.remove('flash');
  void s.el.offsetWidth; // restart the highlight animation
  s.el.classList.add('flash');
}

/** A user action from the renderer: the next turn, with the action as an A2UI client message. */
function sendA2uiAction(action) {
  const version = state.a2ui?.version;
  const message = version === 'v0.8' ? { userAction: action } : { version: 'v0.9', action };
  enqueue(() => runA2uiTurn({ role: 'user', parts: [{ type: 'a2ui', message }] }, { action }));
}

/** Loads the renderer bundle of format and enters A2UI mode (or genui mode). */
async function setFormat(format) {
  const spec = A2UI_FORMATS[format];
  if (spec && state.bundle && state.bundle !== spec.bundle) {
    // The other version's <a2ui-surface> is defined on this page: start a fresh one.
    location.assign(formatURL(format));
    return;
  }
  state.format = format;
  ui.format.value = format;
  history.replaceState(null, '', formatURL(format));
  ui.genuiSetup.hidden = !!spec;
  ui.a2uiSetup.hidden = !spec;
  document.body.dataset.format = format;
  if (state.a2ui) {
    state.a2ui.renderer.dispose();
    state.a2ui = null;
  }
  resetConversation();
  state.sessionId = null;
  ui.sessionStatus.textContent = 'No session yet. Start one, or just send a message.';
  if (!spec) return;

  showA2uiError('');
  ui.a2uiStatus.textContent = `Loading the A2UI ${spec.version} renderer…`;
  let mod;
  try {
    mod = await import(spec.bundle);
  } catch (e) {
    ui.a2uiStatus.textContent = 'No renderer.';
    showA2uiError(`Could not load the A2UI renderer (${spec.bundle}): ${e.message}`);
    return;
  }
  state.bundle = spec.bundle;
  if (state.format !== format) return; // switched again meanwhile
  state.a2ui = { version: spec.version, module: mod, renderer: newA2uiRenderer(mod) };
  ui.a2uiRenderer.textContent = Object.entries(mod.packages).map(([name, v]) => `${name} ${v}`).join(' + ');
  ui.a2uiCatalog.textContent = mod.catalogId;
  ui.a2uiCapabilities.textContent = JSON.stringify(state.a2ui.renderer.capabilities(), null, 2);
  ui.a2uiStatus.textContent = `A2UI ${spec.version}: messages go to /generateA2ui and render as they stream.`;
}

function formatURL(format) {
  const url = new URL(location.href);
  if (format === 'genui') url.searchParams.delete('ui');
  else url.searchParams.set('ui', format);
  return url.pathname + url.search + url.hash;
}

/** One A2UI turn: POST /generateA2ui, every A2UI line to the renderer as it arrives. */
async function runA2uiTurn(userMessage, display) {
  const { version, renderer } = state.a2ui;
  const n = ++state.turnNo;
  if (version === 'v0.9' && state.a2uiErrors.length) {
    // Errors the surfaces reported since the last turn go with this message.
    userMessage.parts.push(...state.a2uiErrors.splice(0).map((error) => ({ type: 'a2ui', message: { version: 'v0.9', error } })));
  }
  state.history.push(userMessage);
  userBubble(display);

  const textEl = h('span', { class: 'body typing', text: '' });
  const notes = h('ul', { class: 'notes' });
  const modelLi = addToLog(h('li', { class: 'msg model', 'aria-busy': 'true' }, h('span', { class: 'who', text: 'Model' }), textEl, notes));
  const setText = (t) => updateLog(() => { textEl.textContent = t; });
  const surfaceNotes = new Map(); // surfaceId → {li, created, count}
  const noteSurface = (surfaceId, op) => updateLog(() => {
    let sn = surfaceNotes.get(surfaceId);
    if (!sn) {
      sn = { li: h('li'), created: false, deleted: false, count: 0 };
      surfaceNotes.set(surfaceId, sn);
      notes.append(sn.li);
    }
    sn.count++;
    if (op === 'createSurface' || op === 'beginRendering') sn.created = true;
    if (op === 'deleteSurface') sn.deleted = true;
    const verb = sn.deleted ? 'Removed' : sn.created ? 'Created' : 'Updated';
    sn.li.textContent = `${verb} surface ${surfaceId} (${sn.count} A2UI message${sn.count === 1 ? '' : 's'})`;
  });

  const url = 'generateA2ui';
  const requestBody = { version, a2uiClientCapabilities: renderer.capabilities(), conversation: state.history };
  const dataModel = renderer.dataModel();
  if (dataModel) requestBody.a2uiClientDataModel = dataModel;
  const insp = inspectorTurn(n, `a2ui-${version}`, url, requestBody);

  let text = '';
  let finished = false;
  let firstSurface = null;
  const parts = []; // the model message for the history: text and A2UI messages in arrival order
  const addText = (t) => {
    const last = parts.at(-1);
    if (last?.type === 'text') last.text += t;
    else parts.push({ type: 'text', text: t });
  };
  const controller = new AbortController();
  state.controller = controller;
  ui.stop.hidden = false;
  const t0 = performance.now();
  const fail = (err, http, details) => {
    finished = true;
    errorBubble(errorText(err, http), details ?? err?.details);
  };

  try {
    const res = await postTurn(url, requestBody, 'ndjson', controller, insp, t0, fail);
    if (!res) return;
    for await (const ev of readEvents(res.body, 'ndjson')) {
      const t = performance.now() - t0;
      let kind = ev.invalid ? 'error' : (ev.actions[0]?.kind ?? 'other');
      let label = ev.invalid ? `not JSON (${ev.invalid})` : ev.label;
      for (const a of ev.actions) {
        switch (a.kind) {
          case 'text':
            text += a.text;
            addText(a.text);
            setText(text);
            break;
          case 'a2ui': {
            const op = a2uiOp(a.message);
            const surfaceId = a.message[op]?.surfaceId;
            try {
              renderer.process(a.message);
            } catch (e) {
              // The renderer refused the server's message: nothing of it was applied.
              kind = 'error';
              label += ' (rejected by the renderer)';
              errorBubble(`The A2UI ${version} renderer rejected a ${op} message: ${rendererError(e)}`, a.message);
              if (version === 'v0.9') {
                state.a2uiErrors.push({ code: 'INVALID_MESSAGE', surfaceId: surfaceId ?? '', message: `${op} rejected: ${rendererError(e)}` });
              }
              break;
            }
            parts.push({ type: 'a2ui', message: a.message });
            if (typeof surfaceId === 'string') {
              touchA2uiSurface(surfaceId);
              noteSurface(surfaceId, op);
              if (firstSurface === null && renderer.hasRoot(surfaceId)) {
                firstSurface = t;
                insp.set('firstSurface', ms(t));
              }
            }
            break;
          }
          case 'result':
            finished = true;
            if (!text) {
              text = (a.result?.message?.content ?? []).map((p) => p?.text ?? '').join('');
              if (text) addText(text);
              setText(text);
            }
            break;
          case 'error':
            fail(a.error);
            break;
        }
      }
      insp.event(t, label, ev.raw, kind);
    }
    if (!finished) fail({ status: 'UNAVAILABLE', message: 'the stream ended without a result' });
  } catch (e) {
    if (e.name === 'AbortError') {
      insp.event(performance.now() - t0, 'aborted', 'The request was stopped.', 'error');
      updateLog(() => notes.append(h('li', { text: 'Stopped.' })));
    } else {
      fail({ status: 'NETWORK', message: e.message });
    }
  } finally {
    insp.set('total', ms(performance.now() - t0));
    if (firstSurface === null) insp.set('firstSurface', 'none');
    if (state.controller === controller) state.controller = null;
    ui.stop.hidden = true;
    modelLi.removeAttribute('aria-busy');
    textEl.classList.remove('typing');
    textEl.textContent = text.trim();
    if (!text && notes.children.length === 0) modelLi.remove();
    // The model's turn as the client received it: every A2UI message it applied.
    if (parts.length) state.history.push({ role: 'model', parts });
  }
}

// ---- wiring --------------------------------------------------------------------------

ui.catalogSelect.addEventListener('change', () => {
  if (ui.catalogSelect.value !== 'custom') state.sampleLoad = loadSample(ui.catalogSelect.value);
});
ui.catalogJSON.addEventListener('input', () => {
  ui.catalogSelect.value = 'custom';
});
ui.start.addEventListener('click', () => {
  state.controller?.abort(); // a new session replaces the running turn
  enqueue(() => startSession());
});
ui.composer.addEventListener('submit', (e) => {
  e.preventDefault();
  const text = ui.message.value.trim();
  if (!text) return ui.message.focus();
  ui.message.value = '';
  sendText(text);
});
ui.stop.addEventListener('click', () => state.controller?.abort());
ui.format.addEventListener('change', () => {
  state.controller?.abort(); // a new format replaces the running turn
  const format = ui.format.value;
  enqueue(() => setFormat(format));
});
ui.a2uiReset.addEventListener('click', () => {
  state.controller?.abort();
  enqueue(() => {
    resetConversation();
    note('New conversation.');
  });
});
ui.clearInspector.addEventListener('click', () => {
  ui.turns.replaceChildren();
  ui.inspectorEmpty.hidden = false;
});

loadModel();
loadCatalogs();
{
  const format = new URLSearchParams(location.search).get('ui');
  if (format in A2UI_FORMATS) enqueue(() => setFormat(format));
}
