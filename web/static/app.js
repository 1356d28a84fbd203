// The playground: session set-up, chat, live surfaces and the stream inspector, for two
// UI formats: genui (a widget catalog, POST /generateUi, surfaces drawn by render.js) and
// A2UI v0.9 or v0.8 (POST /generateA2ui, surfaces drawn by the official A2UI web
// renderer, bundled as a2ui-v09.js / a2ui-v08.js and loaded on demand). Either format
// can also run over one WebSocket (GET /ws, JSON-RPC 2.0): a session the server keeps,
// a prompt per message, and client tools the page answers.
import { catalogWidgetNames, renderSurface } from './render.js';
import { a2uiOp, readEvents, sessionUpdateEvent } from './stream.js';
import { RpcError, RpcSocket, wsURL } from './rpc.js';

const $ = (id) => document.getElementById(id);
const ui = {
  modelName: $('model-name'), modelFlag: $('model-flag'), modelNote: $('model-note'),
  catalogSelect: $('catalog-select'), catalogJSON: $('catalog-json'), transport: $('transport'),
  transportHelp: $('transport-help'), clientTools: $('client-tools'), toolCity: $('tool-city'),
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
  ws: null, // the WebSocket transport's connection: {socket, session, turn, insp, log, t0}
  overWs: false, // the conversation runs over the WebSocket
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
    // A catalog the user typed meanwhile stays.
    if (catalogs.length && !ui.catalogJSON.value.trim()) {
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
    if (ui.catalogSelect.value !== name) return; // the user edited the catalog or picked another meanwhile
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
  if (wsTransport()) return startWsSession(catalog, fresh);
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
    const label = catalogLabel();
    ui.sessionStatus.textContent = `Session ${state.sessionId.slice(0, 8)}… with ${label}${widgetList(catalog)}`;
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

const catalogLabel = () => (ui.catalogSelect.value === 'custom' ? 'custom catalog' : `catalog “${ui.catalogSelect.value}”`);

function widgetList(catalog) {
  const names = catalogWidgetNames(catalog);
  return names.length ? ` (${names.length} widgets: ${names.join(', ')}).` : '.';
}

/** Starts a session over the WebSocket: new_session with the catalog and the client tools. */
async function startWsSession(catalog, fresh) {
  try {
    if (fresh) resetConversation();
    const id = await openWsSession({ catalog });
    const label = catalogLabel();
    ui.sessionStatus.textContent = `Session ${id.slice(0, 8)}… over WebSocket with ${label}${widgetList(catalog)}`;
    note(`Session started over WebSocket with ${label}.`);
    return true;
  } catch (e) {
    ui.sessionStatus.textContent = 'No session.';
    showSessionError(e instanceof RpcError
      ? `The server refused the session. ${errorText(rpcFailure(e))}`
      : `Could not open the WebSocket: ${e.message}`);
    return false;
  } finally {
    ui.start.disabled = false;
  }
}

function resetConversation() {
  state.controller?.abort();
  closeWs(); // the server keeps a WebSocket session's conversation: a new one needs a new session
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
      if (!state.a2ui) errorBubble('The A2UI renderer is not loaded; see the Session panel.');
      else if (!wsTransport() || state.ws?.session || (await startA2uiWsSession())) {
        await runA2uiTurn({ role: 'user', parts: [{ type: 'text', text }] }, { text });
      }
      return;
    }
    const ready = wsTransport() ? state.ws?.session : state.sessionId;
    if (!ready && !(await startSession())) return;
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

/** The label of a turn's transport in the inspector. */
function transportLabel(transport, a2uiVersion) {
  const wire = transport === 'ws' ? 'WebSocket' : transport === 'sse' ? 'Genkit SSE' : 'NDJSON';
  return a2uiVersion ? `${wire}, A2UI ${a2uiVersion}` : wire;
}

function inspectorEntry(el) {
  ui.inspectorEmpty.hidden = true;
  for (const d of ui.turns.querySelectorAll(':scope > details[open]')) d.open = false;
  ui.turns.prepend(el);
}

/** Adds an event to an inspector list: its time, a label, and the raw text to unfold. */
function inspectorEvent(list, t, label, raw, kind) {
  list.append(h('li', { class: `ev k-${kind}` },
    h('details', {},
      h('summary', {}, h('time', { class: 't', text: `+${ms(t)}` }), ' ', h('span', { class: 'label', text: label })),
      h('pre', { text: raw }))));
}

/**
 * A turn in the inspector: request is the line naming what was sent (POST url, or the
 * WebSocket's), requestBody what it carried. Over the WebSocket the first metric is the
 * time of the turn's first message from the server.
 */
function inspectorTurn(n, label, request, requestBody, ws = false) {
  const metric = (name, text) => {
    const dd = h('dd', { 'data-metric': name, text: '…' });
    return { dd, el: h('div', {}, h('dt', { text }), dd) };
  };
  const status = h('span', { 'data-metric': 'status', text: '…' });
  const m = {
    headers: metric('headers', ws ? 'First message' : 'Headers after'),
    firstSurface: metric('first-surface', 'First surface'),
    total: metric('total', 'Total'),
  };
  const events = h('ol', { class: 'events', 'aria-label': `Events of turn ${n}` });
  const summary = h('summary', {}, h('span', { class: 'turn-title', text: `Turn ${n}` }), h('span', { class: 'turn-transport', text: label }));
  inspectorEntry(h('details', { class: 'turn', open: true, 'data-turn': n },
    summary,
    h('p', { class: 'req' }, h('code', { text: request }), ' → ', status),
    h('dl', { class: 'metrics' }, Object.values(m).map((x) => x.el)),
    h('details', { class: 'reqbody' }, h('summary', { text: ws ? 'JSON-RPC request' : 'Request body' }), h('pre', { text: JSON.stringify(requestBody, null, 2) })),
    events));
  return {
    set(name, text) { (name === 'status' ? status : m[name].dd).textContent = text; },
    event(t, label, raw, kind) { inspectorEvent(events, t, label, raw, kind); },
  };
}

/** A WebSocket connection in the inspector: the messages of no turn (initialize, new_session, …). */
function inspectorConnection(url) {
  const status = h('span', { 'data-metric': 'status', text: 'connecting…' });
  const events = h('ol', { class: 'events', 'aria-label': 'Messages of the WebSocket connection' });
  inspectorEntry(h('details', { class: 'turn', open: true, 'data-ws-connection': '' },
    h('summary', {}, h('span', { class: 'turn-title', text: 'Connection' }), h('span', { class: 'turn-transport', text: 'WebSocket' })),
    h('p', { class: 'req' }, h('code', { text: `GET ${url}` }), ' → ', status),
    events));
  return {
    set(text) { status.textContent = text; },
    event(t, label, raw, kind) { inspectorEvent(events, t, label, raw, kind); },
  };
}

// ---- WebSocket transport -------------------------------------------------------------

// The client tools the page declares with a /ws session and answers itself when the
// server calls one (a client_tool request): name → {description, inputSchema, run}.
const CLIENT_TOOLS = {
  getLocation: {
    description: "The user's current location: the city set in the playground's client tools.",
    inputSchema: { type: 'object', properties: {} },
    run: () => ({ city: ui.toolCity.value.trim() }),
  },
};

const clientToolDeclarations = () =>
  Object.entries(CLIENT_TOOLS).map(([name, t]) => ({ name, description: t.description, inputSchema: t.inputSchema }));

const wsTransport = () => ui.transport.value === 'ws';

/** A JSON-RPC error as the page shows errors: its status (data.status) and code, its message. */
function rpcFailure(e) {
  return { status: `${e?.data?.status ?? 'ERROR'} (JSON-RPC ${e?.code})`, message: e?.message, details: e?.data };
}

/**
 * The page's connection to /ws, opened and initialized on first use. One connection
 * holds the conversation's session (session, its id); turn is the running turn's, which
 * gets the session's updates and shows the client_tool requests.
 */
async function wsConnection() {
  if (state.ws?.socket.isOpen) return state.ws;
  closeWs();
  const socket = new RpcSocket(wsURL('ws'));
  const t0 = performance.now();
  const insp = inspectorConnection(socket.url);
  const conn = { socket, session: null, turn: null, insp, t0 };
  conn.log = (label, raw, kind) => insp.event(performance.now() - t0, label, raw, kind);
  state.ws = conn;
  socket.onNotification = (msg, raw) => {
    const turn = conn.turn;
    if (msg.method === 'session_update' && turn && msg.params?.session_id === turn.sessionId) turn.update(msg, raw);
    else conn.log(`${msg.method} (no turn of this page waits for it)`, raw, 'other');
  };
  socket.onRequest = (msg, raw) => answerRequest(conn, msg, raw);
  socket.onStray = (raw, problem) => conn.log(problem, raw, 'error');
  socket.onClose = ({ code, reason }) => {
    insp.set(`closed (${code})`);
    conn.log(`closed ${code}${reason ? `: ${reason}` : ''}`, JSON.stringify({ code, reason }), 'error');
    if (state.ws !== conn) return; // the page closed it
    state.ws = null;
    note(`The WebSocket closed (${code}). The next message opens a new one, with a new session.`);
    if (state.format === 'genui') ui.sessionStatus.textContent = 'The WebSocket closed: no session.';
  };
  try {
    await socket.open();
  } catch (e) {
    insp.set('failed');
    conn.log(e.message, '', 'error');
    if (state.ws === conn) state.ws = null;
    throw e;
  }
  insp.set('101 open');
  await wsCall(conn, 'initialize', { protocol_version: 1 });
  return conn;
}

/** Closes the page's WebSocket, if open; the server deletes its idle sessions. */
function closeWs() {
  const conn = state.ws;
  if (!conn) return;
  state.ws = null;
  conn.socket.close(1000, 'new conversation');
}

/** Sends a request of no turn, shown with its response in the connection's entry; resolves with its result. */
async function wsCall(conn, method, params) {
  const { raw, response } = conn.socket.call(conn.socket.message(method, params));
  conn.log(method, raw, 'sent');
  const { message, raw: answer } = await response;
  if (message.error) {
    conn.log(`${method}: error ${message.error.code}`, answer, 'error');
    throw new RpcError(message.error);
  }
  conn.log(`${method}: result`, answer, 'result');
  return message.result;
}

/** Opens the conversation's session on the WebSocket (connecting first); resolves with its id. */
async function openWsSession(params) {
  const conn = await wsConnection();
  const result = await wsCall(conn, 'new_session', { ...params, clientTools: clientToolDeclarations() });
  conn.session = result?.session_id;
  if (typeof conn.session !== 'string') throw new Error('new_session answered no session_id');
  conn.insp.set(`101 open · session ${conn.session.slice(0, 8)}…`);
  return conn.session;
}

/** Answers a request of the server: client_tool runs the page's tool, any other method is unknown. */
function answerRequest(conn, msg, raw) {
  const turn = conn.turn && conn.turn.sessionId === msg.params?.session_id ? conn.turn : null;
  const log = turn ? turn.log : conn.log;
  const reply = (fn) => {
    try {
      return fn();
    } catch (e) {
      return `(not sent: ${e.message})`;
    }
  };
  if (msg.method !== 'client_tool') {
    log(`${msg.method} (not a method of this page)`, raw, 'error');
    log('answered: method not found', reply(() => conn.socket.respondError(msg.id, -32601, `method not found: "${msg.method}"`)), 'sent');
    return;
  }
  const { name, input } = msg.params ?? {};
  log(`client_tool ${name}`, raw, 'client');
  const tool = Object.hasOwn(CLIENT_TOOLS, name) ? CLIENT_TOOLS[name] : null;
  let output;
  let error = tool ? null : `this page has no client tool "${name}"`;
  if (tool) {
    try {
      output = tool.run(input ?? {});
    } catch (e) {
      error = e.message;
    }
  }
  const sent = reply(() => (error === null ? conn.socket.respond(msg.id, output) : conn.socket.respondError(msg.id, tool ? -32603 : -32601, error)));
  log(`answered client_tool ${name}${error === null ? '' : ' with an error'}`, sent, error === null ? 'client' : 'error');
  turn?.answered(name, error === null ? `answered ${JSON.stringify(output)}` : `could not answer: ${error}`);
}

/** The prompt of a turn on the conversation's session: the new message's parts as content blocks. */
function wsPrompt(parts) {
  const block = (p) => (p.type === 'uiEvent' ? { type: 'uiEvent', event: p.event }
    : p.type === 'a2ui' ? { type: 'a2ui', message: p.message } : { type: 'text', text: p.text });
  const params = { session_id: state.ws?.session ?? null, prompt: parts.map(block) };
  return state.ws ? state.ws.socket.message('prompt', params) : { jsonrpc: '2.0', id: null, method: 'prompt', params };
}

/**
 * Runs a turn over the WebSocket: sends prompt (from wsPrompt); each update of the
 * session goes to handle as the event an NDJSON line would be, each client_tool request
 * is answered (answered tells of it), and the prompt's response ends the turn as a
 * result event. Stopping the turn (signal) cancels it on the server.
 */
async function wsTurn(prompt, { insp, t0, signal, handle, fail, answered }) {
  const conn = state.ws;
  const sessionId = prompt.params.session_id;
  const since = () => performance.now() - t0;
  if (!conn?.socket.isOpen || !sessionId) {
    fail({ status: 'FAILED_PRECONDITION', message: 'no WebSocket session: send a message to start a new one' });
    return;
  }
  let first = true;
  const arrived = () => {
    if (first) insp.set('headers', ms(since()));
    first = false;
  };
  conn.turn = {
    sessionId,
    log: (label, raw, kind) => {
      arrived();
      insp.event(since(), label, raw, kind);
    },
    update: (msg, raw) => {
      arrived();
      handle(sessionUpdateEvent(msg.params?.update, raw), since());
    },
    answered,
  };
  const cancel = () => {
    try {
      const { raw, response } = conn.socket.call(conn.socket.message('cancel', { session_id: sessionId }));
      insp.event(since(), 'cancel', raw, 'sent');
      response.then(({ message, raw: answer }) => insp.event(since(), message.error ? `cancel: error ${message.error.code}` : 'cancel: result', answer, message.error ? 'error' : 'other'), () => {});
    } catch (e) {
      insp.event(since(), `cancel not sent: ${e.message}`, '', 'error');
    }
  };
  signal.addEventListener('abort', cancel, { once: true });
  try {
    const { response } = conn.socket.call(prompt);
    insp.set('status', 'sent');
    const { message, raw } = await response;
    arrived();
    if (message.error) {
      const e = message.error;
      insp.set('status', `error ${e.code}`);
      insp.event(since(), `error ${e.code}`, raw, 'error');
      if (e.code === -32001 || e.code === -32003) {
        conn.session = null; // unknown or expired: the next message starts a new session
        if (state.format === 'genui') ui.sessionStatus.textContent = 'The session ended. The next message starts a new one.';
      }
      fail(rpcFailure(e), undefined, e.data);
      return;
    }
    const reason = message.result?.stop_reason ?? '?';
    insp.set('status', `stop_reason ${reason}`);
    handle({ raw, label: `result ${reason}`, actions: [{ kind: 'result', result: { stopReason: reason } }] }, since());
    return reason;
  } finally {
    signal.removeEventListener('abort', cancel);
    if (conn.turn?.sessionId === sessionId) conn.turn = null;
  }
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
  const transport = wsTransport() ? 'ws' : ui.transport.value === 'sse' ? 'sse' : 'ndjson';
  state.history.push(userMessage);
  userBubble(display);

  const textEl = h('span', { class: 'body typing', text: '' });
  const notes = h('ul', { class: 'notes' });
  const modelLi = addToLog(h('li', { class: 'msg model', 'aria-busy': 'true' }, h('span', { class: 'who', text: 'Model' }), textEl, notes));
  const addNote = (text) => updateLog(() => notes.append(h('li', { text })));
  const setText = (t) => updateLog(() => { textEl.textContent = t; });

  let insp;
  let url;
  let requestBody;
  if (transport === 'ws') {
    // The server keeps the conversation: the prompt carries only the new message.
    requestBody = wsPrompt(userMessage.parts);
    insp = inspectorTurn(n, transportLabel('ws'), `WebSocket ${state.ws?.socket.url ?? wsURL('ws')} · prompt`, requestBody, true);
  } else {
    url = transport === 'sse' ? 'generateUi?stream=true' : 'generateUi?format=ndjson';
    requestBody = { data: { sessionId: state.sessionId, conversation: state.history } };
    insp = inspectorTurn(n, transportLabel(transport), `POST ${url}`, requestBody);
  }

  let text = '';
  let gap = false; // a client tool was answered: the next text continues after a space
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
  // One event of the stream, an NDJSON line or SSE block or a /ws session update.
  const handle = (ev, t) => {
    const kind = ev.invalid ? 'error' : (ev.actions[0]?.kind ?? 'other');
    insp.event(t, ev.invalid ? `not JSON (${ev.invalid})` : ev.label, ev.raw, kind);
    for (const a of ev.actions) {
      switch (a.kind) {
        case 'text':
          if (gap && text && !/\s$/.test(text)) text += ' ';
          gap = false;
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
  };

  try {
    if (transport === 'ws') {
      const reason = await wsTurn(requestBody, {
        insp, t0, signal: controller.signal, handle, fail,
        answered: (name, what) => {
          gap = true;
          addNote(`Client tool ${name}: ${what}`);
        },
      });
      if (reason === 'cancelled') addNote('Stopped.');
    } else {
      const res = await postTurn(url, requestBody, transport, controller, insp, t0, fail);
      if (!res) return;
      for await (const ev of readEvents(res.body, transport)) handle(ev, performance.now() - t0);
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

/** Opens an A2UI session over the WebSocket: new_session with the renderer's capabilities and the client tools. */
async function startA2uiWsSession() {
  const { version, renderer } = state.a2ui;
  const params = { a2uiVersion: version, a2uiClientCapabilities: renderer.capabilities() };
  const dataModel = renderer.dataModel();
  if (dataModel) params.a2uiClientDataModel = dataModel;
  try {
    const id = await openWsSession(params);
    note(`Session ${id.slice(0, 8)}… started over WebSocket (A2UI ${version}).`);
    return true;
  } catch (e) {
    errorBubble(e instanceof RpcError
      ? `The server refused the session. ${errorText(rpcFailure(e))}`
      : `Could not open the WebSocket: ${e.message}`, e.data);
    return false;
  }
}

function a2uiStatusText(version) {
  return wsTransport()
    ? `A2UI ${version}: messages go over the WebSocket (/ws) and render as they stream.`
    : `A2UI ${version}: messages go to /generateA2ui and render as they stream.`;
}

/**
 * Shows what the transport needs: the client tools with the WebSocket; no Genkit SSE in
 * A2UI mode (POST /generateA2ui streams NDJSON only).
 */
function syncTransport() {
  const a2ui = state.format !== 'genui';
  const sse = ui.transport.querySelector('option[value="sse"]');
  sse.disabled = a2ui;
  if (a2ui && ui.transport.value === 'sse') ui.transport.value = 'ndjson';
  ui.clientTools.hidden = !wsTransport();
  ui.transportHelp.hidden = !wsTransport();
  if (state.a2ui) ui.a2uiStatus.textContent = a2uiStatusText(state.a2ui.version);
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
  syncTransport();
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
  ui.a2uiStatus.textContent = a2uiStatusText(spec.version);
}

function formatURL(format) {
  const url = new URL(location.href);
  if (format === 'genui') url.searchParams.delete('ui');
  else url.searchParams.set('ui', format);
  return url.pathname + url.search + url.hash;
}

/**
 * One A2UI turn: POST /generateA2ui (or a prompt on the WebSocket's session), every A2UI
 * message to the renderer as it arrives.
 */
async function runA2uiTurn(userMessage, display) {
  const { version, renderer } = state.a2ui;
  const n = ++state.turnNo;
  const ws = wsTransport();
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
  let requestBody;
  let insp;
  if (ws) {
    // The server keeps the conversation: the prompt carries only the new message.
    requestBody = wsPrompt(userMessage.parts);
    insp = inspectorTurn(n, transportLabel('ws', version), `WebSocket ${state.ws?.socket.url ?? wsURL('ws')} · prompt`, requestBody, true);
  } else {
    requestBody = { version, a2uiClientCapabilities: renderer.capabilities(), conversation: state.history };
    const dataModel = renderer.dataModel();
    if (dataModel) requestBody.a2uiClientDataModel = dataModel;
    insp = inspectorTurn(n, transportLabel('ndjson', version), `POST ${url}`, requestBody);
  }

  let text = '';
  let gap = false; // a client tool was answered: the next text continues after a space
  let finished = false;
  let firstSurface = null;
  const parts = []; // the model message for the history: text and A2UI messages in arrival order
  const addText = (t) => {
    if (gap && text && !/\s$/.test(text)) t = ` ${t}`;
    gap = false;
    text += t;
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

  // One event of the stream, an NDJSON line or a /ws session update.
  const handle = (ev, t) => {
    let kind = ev.invalid ? 'error' : (ev.actions[0]?.kind ?? 'other');
    let label = ev.invalid ? `not JSON (${ev.invalid})` : ev.label;
    for (const a of ev.actions) {
      switch (a.kind) {
        case 'text':
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
            const said = (a.result?.message?.content ?? []).map((p) => p?.text ?? '').join('');
            if (said) addText(said);
            setText(text);
          }
          break;
        case 'error':
          fail(a.error);
          break;
      }
    }
    insp.event(t, label, ev.raw, kind);
  };

  try {
    if (ws) {
      const reason = await wsTurn(requestBody, {
        insp, t0, signal: controller.signal, handle, fail,
        answered: (name, what) => {
          gap = true;
          updateLog(() => notes.append(h('li', { text: `Client tool ${name}: ${what}` })));
        },
      });
      if (reason === 'cancelled') updateLog(() => notes.append(h('li', { text: 'Stopped.' })));
    } else {
      const res = await postTurn(url, requestBody, 'ndjson', controller, insp, t0, fail);
      if (!res) return;
      for await (const ev of readEvents(res.body, 'ndjson')) handle(ev, performance.now() - t0);
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
ui.transport.addEventListener('change', () => {
  syncTransport();
  const ws = wsTransport();
  if (ws === state.overWs) return; // NDJSON and SSE share the conversation the page keeps
  state.overWs = ws;
  state.controller?.abort();
  enqueue(() => {
    resetConversation();
    state.sessionId = null;
    ui.sessionStatus.textContent = 'No session yet. Start one, or just send a message.';
    note(ws ? 'Transport: WebSocket. A new conversation, kept by the server.' : 'Transport: HTTP. A new conversation.');
  });
});
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

syncTransport();
state.overWs = wsTransport(); // a reload may keep the select's value
loadModel();
state.sampleLoad = loadCatalogs(); // a session waits for the sample catalog
{
  const format = new URLSearchParams(location.search).get('ui');
  if (format in A2UI_FORMATS) enqueue(() => setFormat(format));
}
