// The MCP App (ui://genui/surface-v09) that shows generate_ui's A2UI inside an MCP host:
// a View of the MCP Apps extension (SEP-1865, protocol 2026-01-26) written against its
// postMessage JSON-RPC directly, so that it needs no SDK, and @a2ui/lit's <a2ui-surface>
// (through v09.js) for the rendering. Bundled by build.mjs into static/mcp-app.js, an
// IIFE the server inlines into the resource's HTML: the host's default CSP allows inline
// scripts and styles only, and no network.
//
// It initialises (ui/initialize, then ui/notifications/initialized), adopts the host's
// theme variables, shows the surface growing while generate_ui runs (from the tool's
// input it finds the running turn with tools/call ui_stream), then the rest of the
// tool's result, sends each user action back with tools/call ui_action and shows the
// answer's messages on the same surfaces, reports its size, and answers teardown.
import { createRenderer } from './v09.js';

const APP_PROTOCOL = '2026-01-26';
const host = window.parent;
const root = document.getElementById('surfaces');
const status = document.getElementById('status');

// JSON-RPC 2.0 over postMessage.
let nextId = 1;
const pending = new Map();
const send = (msg) => host.postMessage({ jsonrpc: '2.0', ...msg }, '*');
const notify = (method, params = {}) => send({ method, params });
const request = (method, params = {}) =>
  new Promise((resolve, reject) => {
    const id = nextId++;
    pending.set(id, { resolve, reject });
    send({ id, method, params });
  });

// The conversation the app shows, from the tool's input or result.
let conversationId = '';
// The streams whose messages were shown, so that a result given twice is shown once.
const shownStreams = new Set();
const hosts = new Map(); // surfaceId → its element

const renderer = createRenderer({
  onAction: (action) => act(action),
  onSurfaceCreated: (id) => {
    const el = document.createElement('section');
    el.className = 'surface';
    el.dataset.surfaceId = id;
    root.append(el);
    hosts.set(id, el);
    renderer.mount(id, el);
  },
  onSurfaceDeleted: (id) => {
    hosts.get(id)?.remove();
    hosts.delete(id);
  },
});

function say(text, kind = '') {
  status.textContent = text;
  status.className = kind;
  status.hidden = !text;
}

function apply(m) {
  try {
    renderer.process(m);
  } catch (err) {
    console.warn('A2UI message not shown:', err);
  }
}

// The turn the app follows while its generate_ui call runs: {streamId, applied, done}.
let following = null;

// follow shows a generate_ui call's A2UI as the model writes it: MCP has no partial tool
// results, so the app asks ui_stream (long polls, through the host) for the messages of
// the call that runs with these arguments, until the turn ends or its result arrives.
async function follow(args) {
  const me = { streamId: '', applied: 0, done: false };
  following = me;
  let cursor = 0;
  while (following === me && !me.done) {
    const callArgs = { prompt: args.prompt, after: cursor, waitMs: 10000 };
    if (args.conversationId) callArgs.conversationId = args.conversationId;
    let res;
    try {
      res = await request('tools/call', { name: 'ui_stream', arguments: callArgs });
    } catch {
      return; // a host that does not let the app call it: the result shows the whole turn
    }
    const out = res?.structuredContent;
    if (res?.isError || !out || following !== me) return;
    if (out.streamId) me.streamId = out.streamId;
    for (const m of out.messages ?? []) {
      apply(m);
      me.applied++;
    }
    if (me.applied) say('');
    cursor = out.cursor ?? cursor;
    me.done = !!out.done;
  }
}

// show applies a turn's structuredContent: {conversationId, streamId, messages}, less
// what following it showed already.
function show(out) {
  if (!out || !Array.isArray(out.messages)) return;
  if (out.conversationId) conversationId = out.conversationId;
  let skip = 0;
  if (following && out.streamId && following.streamId === out.streamId) skip = following.applied;
  following = null;
  if (out.streamId) {
    if (shownStreams.has(out.streamId)) return;
    shownStreams.add(out.streamId);
  }
  for (const m of out.messages.slice(skip)) apply(m);
  say('');
}

async function act(action) {
  if (!conversationId) return;
  say('Sending…', 'busy');
  try {
    const res = await request('tools/call', { name: 'ui_action', arguments: { conversationId, ...action } });
    if (res?.isError) {
      say(res.content?.map((c) => c.text).join(' ') || 'The action failed.', 'error');
      return;
    }
    show(res?.structuredContent);
  } catch (err) {
    say(err?.message || 'The action failed.', 'error');
  }
}

function theme(ctx) {
  if (!ctx) return;
  const vars = ctx.styles?.variables;
  if (vars) for (const [k, v] of Object.entries(vars)) if (k.startsWith('--') && v) document.documentElement.style.setProperty(k, v);
  if (ctx.theme) document.documentElement.dataset.theme = ctx.theme;
}

const handlers = {
  'ui/notifications/tool-input': (p) => {
    const args = p?.arguments ?? {};
    if (args.conversationId) conversationId = args.conversationId;
    if (!hosts.size) say('Composing the UI…', 'busy');
    if (typeof args.prompt === 'string' && args.prompt.trim()) follow(args);
  },
  'ui/notifications/tool-input-partial': () => {},
  'ui/notifications/tool-result': (p) => {
    if (p?.isError) {
      say(p.content?.map((c) => c.text).join(' ') || 'The UI could not be made.', 'error');
      return;
    }
    show(p?.structuredContent);
  },
  'ui/notifications/tool-cancelled': (p) => say(p?.reason ? `Cancelled: ${p.reason}` : 'Cancelled.', 'error'),
  'ui/notifications/host-context-changed': (p) => theme(p),
  'ui/resource-teardown': () => {
    renderer.dispose();
    return {};
  },
  ping: () => ({}),
};

window.addEventListener('message', (event) => {
  if (event.source !== host) return;
  const msg = event.data;
  if (!msg || msg.jsonrpc !== '2.0') return;
  if (msg.method === undefined) {
    const p = pending.get(msg.id);
    if (!p) return;
    pending.delete(msg.id);
    if (msg.error) p.reject(Object.assign(new Error(msg.error.message), { code: msg.error.code }));
    else p.resolve(msg.result);
    return;
  }
  const h = handlers[msg.method];
  if (msg.id === undefined) {
    h?.(msg.params);
    return;
  }
  if (!h) {
    send({ id: msg.id, error: { code: -32601, message: `method not found: ${msg.method}` } });
    return;
  }
  Promise.resolve()
    .then(() => h(msg.params))
    .then((result) => send({ id: msg.id, result: result ?? {} }))
    .catch((err) => send({ id: msg.id, error: { code: -32603, message: String(err?.message || err) } }));
});

// The size the host should give the frame, whenever it changes.
let lastSize = '';
new ResizeObserver(() => {
  const width = Math.ceil(document.documentElement.scrollWidth);
  const height = Math.ceil(document.documentElement.scrollHeight);
  const size = `${width}x${height}`;
  if (size === lastSize) return;
  lastSize = size;
  notify('ui/notifications/size-changed', { width, height });
}).observe(document.documentElement);

(async () => {
  try {
    const init = await request('ui/initialize', {
      appInfo: { name: 'genui', version: '1.0.0' },
      appCapabilities: {},
      protocolVersion: APP_PROTOCOL,
    });
    theme(init?.hostContext);
    notify('ui/notifications/initialized');
  } catch (err) {
    say(`The host did not initialise the app: ${err?.message || err}`, 'error');
  }
})();
