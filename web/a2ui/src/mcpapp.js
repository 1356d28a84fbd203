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
// answer's messages on the same surfaces, runs the calls of its tools a turn ends with
// (the user's context, their location) and answers them with tools/call ui_tool_result,
// tells the host's model what the user now sees (ui/update-model-context, where the host
// takes it), reports its size, and answers teardown.
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
// What the host said of itself in ui/initialize, and its context as it changes.
let hostContext = {};
let hostCapabilities = {};
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

// The turn the app follows while its generate_ui call runs: {streamId, applied, done,
// surfaces} (the surfaces its messages created).
let following = null;

// follow shows a generate_ui call's A2UI as the model writes it: MCP has no partial tool
// results, so the app asks ui_stream (long polls, through the host) for the messages of
// the call that runs with these arguments, until the turn ends or its result arrives.
async function follow(args) {
  const me = { streamId: '', applied: 0, done: false, surfaces: new Set() };
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
      if (m.createSurface?.surfaceId) me.surfaces.add(m.createSurface.surfaceId);
    }
    if (me.applied) say('');
    cursor = out.cursor ?? cursor;
    me.done = !!out.done;
  }
}

// show applies a turn's structuredContent: {conversationId, streamId, messages}. The
// result holds each surface's final state (its createSurface, its data model, each
// component once), not the growing updates that streamed; over what following the same
// turn showed already it is applied as updates: a surface already drawn is not created
// again, and one the turn created but its result no longer holds was deleted.
function show(out) {
  if (!out || !Array.isArray(out.messages)) return;
  if (out.conversationId) conversationId = out.conversationId;
  const followed = following && out.streamId && following.streamId === out.streamId && following.applied ? following : null;
  following = null;
  if (out.streamId) {
    if (shownStreams.has(out.streamId)) return;
    shownStreams.add(out.streamId);
  }
  if (followed) {
    const kept = new Set(out.messages.map((m) => m.createSurface?.surfaceId).filter(Boolean));
    for (const id of followed.surfaces) {
      if (!kept.has(id) && hosts.has(id)) apply({ version: renderer.version, deleteSurface: { surfaceId: id } });
    }
  }
  for (const m of out.messages) {
    if (followed && m.createSurface && hosts.has(m.createSurface.surfaceId)) continue;
    apply(m);
  }
  say('');
}

// The app's tools: what a turn may ask the app, which only it knows. Each returns the
// call's output or throws why it could not run.
const appTools = {
  get_user_context: async () => {
    const locale = hostContext.locale || navigator.language;
    const timeZone = hostContext.timeZone || Intl.DateTimeFormat().resolvedOptions().timeZone;
    const now = new Date();
    return {
      locale,
      timeZone,
      now: now.toISOString(),
      localTime: now.toLocaleString(locale, { timeZone, dateStyle: 'full', timeStyle: 'short' }),
      theme: hostContext.theme || (matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light'),
      displayMode: hostContext.displayMode || 'inline',
      platform: hostContext.platform || 'web',
    };
  },
  get_location: () =>
    new Promise((resolve, reject) => {
      if (!navigator.geolocation) return reject(new Error('this host gives the app no location'));
      navigator.geolocation.getCurrentPosition(
        (p) => resolve({ latitude: p.coords.latitude, longitude: p.coords.longitude, accuracyMeters: p.coords.accuracy }),
        (err) => reject(new Error(`no location: ${err.message || 'denied'}`)),
        { timeout: 10000, maximumAge: 60000 },
      );
    }),
};

async function runTool(call) {
  const tool = appTools[call.name];
  if (!tool) return { callId: call.callId, name: call.name, error: `the app has no tool ${call.name}` };
  try {
    const output = await tool(call.input ?? {});
    return { callId: call.callId, name: call.name, output: output ?? null };
  } catch (err) {
    return { callId: call.callId, name: call.name, error: String(err?.message || err) };
  }
}

const resultText = (res) => (res?.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join(' ');

// answered shows the result of a tools/call the app made (ui_action, ui_tool_result),
// runs the calls it ended with, and tells the host's model what the user sees now.
async function answered(res, failure) {
  if (res?.isError) {
    say(resultText(res) || failure, 'error');
    return;
  }
  await handle(res?.structuredContent);
  if (hostCapabilities.updateModelContext && !res?.structuredContent?.toolCalls?.length) {
    request('ui/update-model-context', { content: [{ type: 'text', text: resultText(res) }] }).catch(() => {});
  }
}

// handle shows a turn, then runs the calls of the app's tools it ended with and answers
// them, which continues the conversation.
async function handle(out) {
  show(out);
  const calls = out?.toolCalls;
  if (!Array.isArray(calls) || !calls.length || !out.conversationId) return;
  say('Getting what the UI needs…', 'busy');
  try {
    const results = await Promise.all(calls.map(runTool));
    const res = await request('tools/call', { name: 'ui_tool_result', arguments: { conversationId: out.conversationId, results } });
    await answered(res, 'The UI could not go on.');
  } catch (err) {
    say(err?.message || 'The UI could not go on.', 'error');
  }
}

async function act(action) {
  if (!conversationId) return;
  say('Sending…', 'busy');
  try {
    const res = await request('tools/call', { name: 'ui_action', arguments: { conversationId, ...action } });
    await answered(res, 'The action failed.');
  } catch (err) {
    say(err?.message || 'The action failed.', 'error');
  }
}

function theme(ctx) {
  if (!ctx) return;
  hostContext = { ...hostContext, ...ctx };
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
      say(resultText(p) || 'The UI could not be made.', 'error');
      return;
    }
    handle(p?.structuredContent);
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
    hostCapabilities = init?.hostCapabilities ?? {};
    theme(init?.hostContext);
    notify('ui/notifications/initialized');
  } catch (err) {
    say(`The host did not initialise the app: ${err?.message || err}`, 'error');
  }
})();
