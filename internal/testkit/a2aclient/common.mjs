// What both test files share: the servers' URLs, the A2UI extensions, the capture of
// every A2UI message a conversation received (validated by a2aclient_test.go against the
// A2UI specification), the final state of A2UI messages (as a task holds its turn, and as
// a renderer shows it) and raw JSON-RPC requests for what the SDKs cannot send.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

// The server on the offline model (instant, deterministic turns).
export const GENUI_URL = (process.env.GENUI_URL ?? '').replace(/\/+$/, '');
// The server on the fake Gemini: every turn writes a form in paced chunks (about a
// second), so that it can be cancelled or dropped mid-stream.
export const PACED_URL = (process.env.GENUI_PACED_URL ?? '').replace(/\/+$/, '');
const CAPTURE_DIR = process.env.A2UI_CAPTURE_DIR ?? '';

export const EXT_V09 = 'https://a2ui.org/a2a-extension/a2ui/v0.9';
export const EXT_V08 = 'https://a2ui.org/a2a-extension/a2ui/v0.8';
export const EXT_V091 = 'https://a2ui.org/a2a-extension/a2ui/v0.9.1';
export const MIME_A2UI = 'application/json+a2ui';
export const BASIC_CATALOG = 'https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json';

// The client tool the tests declare, and the offline model calls when asked to.
export const GET_LOCATION = {
  name: 'getLocation',
  description: "The user's city",
  inputSchema: { type: 'object', properties: {} },
};

export function requireServers() {
  assert.ok(GENUI_URL, 'GENUI_URL must be set to the base URL of the server on the offline model');
  assert.ok(PACED_URL, 'GENUI_PACED_URL must be set to the base URL of the server on the paced model');
}

export const newId = () => randomUUID();

// An A2UI v0.9 action on the offline model's surface, as a renderer sends it.
export function sendAction(surfaceId, reply) {
  return {
    version: 'v0.9',
    action: {
      surfaceId,
      name: 'send',
      sourceComponentId: 'send',
      timestamp: new Date().toISOString(),
      context: { reply },
    },
  };
}

// Captures collects the A2UI messages of conversations, one entry per A2A context, and
// writes them to <A2UI_CAPTURE_DIR>/<file>.json for the Go side to validate.
export class Captures {
  constructor(file) {
    this.file = file;
    this.byName = new Map();
  }

  // conversation returns the capture named name (created on first use). Options:
  // createSurfaces, how many createSurface messages it must hold in all; components, ids
  // of components its surfaces must have got.
  conversation(name, { createSurfaces, components } = {}) {
    let c = this.byName.get(name);
    if (!c) {
      c = { name, messages: [], createSurfaces: createSurfaces ?? null, components: components ?? [] };
      this.byName.set(name, c);
    }
    return c;
  }

  add(name, messages, opts) {
    const c = this.conversation(name, opts);
    c.messages.push(...messages);
    return c;
  }

  async write() {
    if (!CAPTURE_DIR) {
      return;
    }
    await mkdir(CAPTURE_DIR, { recursive: true });
    const list = [...this.byName.values()].filter((c) => c.messages.length > 0 || c.createSurfaces !== null);
    await writeFile(join(CAPTURE_DIR, `${this.file}.json`), JSON.stringify(list, null, 1));
  }
}

// countCreateSurface counts the createSurface messages among A2UI messages.
export const countCreateSurface = (msgs) => msgs.filter((m) => m.createSurface).length;

// componentIds lists the ids of the components the updateComponents messages carry.
export const componentIds = (msgs) =>
  msgs.flatMap((m) => (m.updateComponents ? m.updateComponents.components.map((c) => c.id) : []));

// The operations of A2UI v0.9 server messages.
const OPS = ['createSurface', 'updateComponents', 'updateDataModel', 'deleteSurface'];

// opOf returns the operation of a v0.9 server message, or undefined for anything else.
const opOf = (m) => (m && typeof m === 'object' ? OPS.find((op) => m[op] && typeof m[op] === 'object') : undefined);

// dataReplaces reports whether a data-model update at path replaces an earlier one at q:
// q is path or under it (every path is under the root, "/" or none).
function dataReplaces(path, q) {
  if (path === '' || path === '/') {
    return true;
  }
  return q === path || q.startsWith(`${path.replace(/\/$/, '')}/`);
}

// finalA2UI returns the messages that bring a renderer to the state v0.9 messages leave it
// in, compacted the way the server compacts a turn for the task it leaves (a2ui.Final):
// for each surface, in the order the surfaces first come, its createSurface, its
// data-model updates but those a later one replaces (one at its path or above it), and one
// updateComponents holding the last version of each component, in the order the
// components first came. A surface the messages create and delete is left out; one they
// delete without creating it is its deleteSurface. Other messages stay where they are.
export function finalA2UI(msgs) {
  const entries = []; // surfaces, and the messages that are no surface's, in order
  const live = new Map();
  const surface = (id) => {
    let s = live.get(id);
    if (!s) {
      s = { id, create: null, data: [], comps: new Map(), created: false, deleted: false };
      live.set(id, s);
      entries.push({ s });
    }
    return s;
  };
  for (const m of msgs) {
    const op = opOf(m);
    if (!op) {
      entries.push({ raw: m });
      continue;
    }
    const body = m[op];
    const s = surface(body.surfaceId);
    switch (op) {
      case 'deleteSurface':
        Object.assign(s, { create: null, data: [], comps: new Map(), deleted: !s.created });
        live.delete(body.surfaceId); // what follows is a new surface
        break;
      case 'createSurface':
        s.create = body;
        s.created = true;
        break;
      case 'updateDataModel': {
        const path = typeof body.path === 'string' ? body.path : '';
        s.data = s.data.filter((u) => !dataReplaces(path, u.path));
        s.data.push({ path, body });
        break;
      }
      case 'updateComponents':
        for (const c of body.components ?? []) {
          s.comps.set(c.id, c); // a component keeps the place it first came in
        }
        break;
    }
  }
  const out = [];
  for (const { s, raw } of entries) {
    if (!s) {
      out.push(raw);
      continue;
    }
    if (s.deleted) {
      out.push({ version: 'v0.9', deleteSurface: { surfaceId: s.id } });
      continue;
    }
    if (s.create) {
      out.push({ version: 'v0.9', createSurface: s.create });
    }
    for (const u of s.data) {
      out.push({ version: 'v0.9', updateDataModel: u.body });
    }
    if (s.comps.size > 0) {
      out.push({ version: 'v0.9', updateComponents: { surfaceId: s.id, components: [...s.comps.values()] } });
    }
  }
  return out;
}

// pointer splits a JSON Pointer into its keys ([] for the root, "/" or none).
const pointer = (path) =>
  !path || path === '/' ? [] : path.replace(/^\//, '').split('/').map((k) => k.replaceAll('~1', '/').replaceAll('~0', '~'));

const clone = (v) => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));

// surfacesOf applies v0.9 messages, in order, as a renderer does, and returns the surfaces
// they leave it with, by id: each one's createSurface, its data model and its components
// by id. A deleted surface is gone.
export function surfacesOf(msgs) {
  const shown = {};
  for (const m of msgs) {
    const op = opOf(m);
    assert.ok(op, `not an A2UI v0.9 server message: ${JSON.stringify(m)}`);
    const body = m[op];
    const id = body.surfaceId;
    if (op === 'deleteSurface') {
      delete shown[id];
      continue;
    }
    if (op === 'createSurface') {
      assert.ok(!shown[id], `surface ${id} created twice`);
      shown[id] = { create: body, model: {}, components: {} };
      continue;
    }
    const s = shown[id];
    assert.ok(s, `${op} of surface ${id}, which no createSurface made`);
    if (op === 'updateComponents') {
      for (const c of body.components) {
        s.components[c.id] = c;
      }
      continue;
    }
    // updateDataModel: the value at path (the root when none), or its removal when there
    // is no value.
    const keys = pointer(body.path);
    const has = Object.hasOwn(body, 'value');
    if (keys.length === 0) {
      s.model = has ? clone(body.value) : {};
      continue;
    }
    let node = s.model;
    for (const k of keys.slice(0, -1)) {
      if (node[k] === null || typeof node[k] !== 'object') {
        node[k] = {};
      }
      node = node[k];
    }
    if (has) {
      node[keys.at(-1)] = clone(body.value);
    } else {
      delete node[keys.at(-1)];
    }
  }
  return shown;
}

// assertFinalState checks the A2UI messages that hand a turn over whole (the status
// message of the task it leaves: tasks/get, message/send's result) against what the turn
// streamed: they are its final state (finalA2UI), each surface once (one createSurface,
// the data-model updates no later one replaces, one updateComponents holding each
// component once), and they leave a renderer with the surfaces the stream built.
export function assertFinalState(held, streamed, what = 'the task') {
  assert.deepEqual(held, finalA2UI(streamed), `${what} does not hold the final state of the A2UI that streamed`);
  assertWhole(held, what);
  assert.deepEqual(surfacesOf(held), surfacesOf(streamed), `${what} does not build the surfaces the stream built`);
}

// assertWhole checks that A2UI messages hold each surface once, in its final state: per
// surface at most one createSurface and one updateComponents, no component twice, and
// nothing left to compact.
export function assertWhole(msgs, what = 'the task') {
  const creates = new Map();
  const updates = new Map();
  for (const m of msgs) {
    const op = opOf(m);
    const id = m[op]?.surfaceId;
    if (op === 'createSurface') {
      creates.set(id, (creates.get(id) ?? 0) + 1);
    }
    if (op === 'updateComponents') {
      updates.set(id, (updates.get(id) ?? 0) + 1);
      const ids = m.updateComponents.components.map((c) => c.id);
      assert.equal(new Set(ids).size, ids.length, `${what}: a component twice in ${JSON.stringify(ids)}`);
    }
  }
  for (const [id, n] of [...creates, ...updates]) {
    assert.equal(n, 1, `${what}: surface ${id} comes more than once in ${JSON.stringify(msgs)}`);
  }
  assert.deepEqual(finalA2UI(msgs), msgs, `${what}: not in its final state`);
}

// rawPost posts a body (a string, sent as is) to url and returns the HTTP status, the
// response's content type and its decoded JSON.
export async function rawPost(url, body, headers = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch (e) {
    assert.fail(`POST ${url}: not JSON (${res.status} ${res.headers.get('content-type')}): ${text}`);
  }
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', json };
}

// assertRpcError checks a JSON-RPC error response: its code, and that its message
// holds what it must (a field name, say).
export function assertRpcError(resp, code, contains = '') {
  assert.ok(resp.json.error, `no JSON-RPC error: ${JSON.stringify(resp.json)}`);
  assert.equal(resp.json.error.code, code, `code of ${JSON.stringify(resp.json.error)}`);
  assert.ok(
    resp.json.error.message.includes(contains),
    `error message ${JSON.stringify(resp.json.error.message)} does not name ${contains}`,
  );
}

// recordingFetch is a fetch that records the headers of every request and response.
export function recordingFetch() {
  const calls = [];
  const f = async (url, init = {}) => {
    const res = await fetch(url, init);
    calls.push({ url: String(url), method: init.method ?? 'GET', request: new Headers(init.headers), response: res.headers });
    return res;
  };
  f.calls = calls;
  return f;
}

// The components of the fake model's form (a2uitest.FormResponse), in order.
export const FORM_COMPONENTS = ['root', 'title', 'email', 'submit', 'submit-label'];
