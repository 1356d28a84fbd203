// What the test files share: the servers' URLs, a connection of the ws package whose
// messages the tests take one by one, in order, the JSON-RPC calls of /ws, the messages
// of /session/{id}, and the capture of every A2UI message the sessions received
// (validated by wsclient_test.go against the A2UI specification).
import assert from 'node:assert/strict';
import { after, beforeEach } from 'node:test';
import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import WebSocket from 'ws';

const base = (v) => (v ?? '').replace(/\/+$/, '');
// The server on the offline model (instant, deterministic turns; it calls a declared
// client tool when the user's text names it, and shows the tool's answer in a surface).
export const GENUI_URL = base(process.env.GENUI_URL);
// The same, with a reconnect window of EXPIRY_WINDOW_MS.
export const EXPIRY_URL = base(process.env.GENUI_EXPIRY_URL);
export const EXPIRY_WINDOW_MS = Number(process.env.GENUI_EXPIRY_WINDOW_MS ?? 2000);
// The server on the fake Gemini: every turn writes an A2UI form in paced chunks (about
// 800 ms).
export const PACED_URL = base(process.env.GENUI_PACED_URL);
// The same model, with small limits on /ws: two sessions a connection, one turn at a
// time, four messages a batch.
export const LIMITS_URL = base(process.env.GENUI_LIMITS_URL);
// Two replicas on the offline model sharing sessions, conversations and durable streams
// through Redis.
export const REPLICA_A = base(process.env.GENUI_REPLICA_A);
export const REPLICA_B = base(process.env.GENUI_REPLICA_B);
// Sessions whose stored state in Redis cannot be read (one for each endpoint: the first
// read deletes it).
export const CORRUPT_SESSION = process.env.GENUI_CORRUPT_SESSION ?? '';
export const CORRUPT_SESSION_2 = process.env.GENUI_CORRUPT_SESSION_2 ?? '';
const CAPTURE_DIR = process.env.A2UI_CAPTURE_DIR ?? '';

export function requireServers(...urls) {
  for (const u of urls) assert.ok(u, 'the servers must be set: see wsclient_test.go');
}

export const BASIC_CATALOG = 'https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json';
export const OFFLINE_MODEL = 'genui/offline';
export const PACED_MODEL = 'googleai/gemini-2.5-flash';

// The client tool the tests declare, and the offline model calls when the user's text
// names it.
export const GET_LOCATION = {
  name: 'getLocation',
  description: "The user's city",
  inputSchema: { type: 'object', properties: {} },
};
export const WHERE_AM_I = 'Where am I? Use getLocation';

// The genui catalog the tests start sessions with (the service's basic sample catalog).
export function basicCatalog() {
  const file = process.env.GENUI_CATALOG_FILE;
  assert.ok(file, 'GENUI_CATALOG_FILE must name the genui catalog of the tests');
  return JSON.parse(readFileSync(file, 'utf8'));
}

export const wsURL = (httpURL, path) => httpURL.replace(/^http/, 'ws') + path;

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// The connections the tests opened are cut when they end, passed or failed, so that
// none keeps the process alive.
const open = new Set();
export const track = (ws) => {
  open.add(ws);
  return ws;
};
after(() => {
  for (const ws of open) ws.terminate();
  open.clear();
});

// Socket is one WebSocket connection; the tests take the server's messages in the order
// they came. Every message must be a JSON text frame.
export class Socket {
  static open(url) {
    return new Promise((resolve, reject) => {
      const ws = track(new WebSocket(url));
      const s = new this(ws);
      ws.once('open', () => resolve(s));
      ws.once('error', reject);
      ws.once('unexpected-response', (_, res) => reject(new Error(`${url}: HTTP ${res.statusCode}`)));
    });
  }

  constructor(ws) {
    this.ws = ws;
    this.queue = [];
    this.wake = null;
    this.closed = new Promise((resolve) => {
      ws.on('close', (code, reason) => {
        this.closedWith = { code, reason: reason.toString() };
        this.wake?.();
        resolve(this.closedWith);
      });
    });
    ws.on('error', () => {}); // reported by close
    ws.on('message', (data, isBinary) => {
      const raw = data.toString('utf8');
      let msg;
      try {
        msg = JSON.parse(raw);
      } catch {
        msg = undefined;
      }
      this.queue.push({ raw, msg, isBinary });
      this.keep(msg);
      this.wake?.();
    });
  }

  // keep records the A2UI messages of msg (a subclass knows its endpoint's messages).
  keep() {}

  send(m) {
    this.ws.send(typeof m === 'string' ? m : JSON.stringify(m));
  }

  // nextRaw returns the next message as the server wrote it, within ms.
  async nextRaw(ms = 5000) {
    await this.peek(ms);
    const m = this.queue.shift();
    assert.equal(m.isBinary, false, `a binary frame: ${m.raw}`);
    assert.ok(m.msg !== undefined, `not JSON: ${m.raw}`);
    return m;
  }

  // peek returns the next message, parsed, and leaves it to be read, within ms.
  async peek(ms = 5000) {
    const deadline = Date.now() + ms;
    while (this.queue.length === 0) {
      if (this.closedWith) assert.fail(`the connection closed (${this.closedWith.code} ${this.closedWith.reason}) while a message was awaited`);
      const left = deadline - Date.now();
      if (left <= 0) assert.fail(`no message within ${ms} ms`);
      await new Promise((resolve) => {
        const t = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.wake = null;
    }
    return this.queue[0].msg;
  }

  // next returns the next message, parsed.
  async next(ms = 5000) {
    return (await this.nextRaw(ms)).msg;
  }

  // silent asserts that no message comes within ms.
  async silent(ms = 300) {
    await sleep(ms);
    assert.deepEqual(this.queue.map((m) => m.raw), [], `the server sent a message within ${ms} ms`);
  }

  // until returns the first message pred holds for, and the messages before it.
  async until(pred, ms = 5000) {
    const before = [];
    for (;;) {
      const m = await this.next(ms);
      if (pred(m)) return { msg: m, before };
      before.push(m);
    }
  }

  // close closes the connection with the closing handshake.
  async close() {
    this.ws.close(1000);
    return this.closed;
  }

  // drop cuts the connection, as a network failure does.
  async drop() {
    this.ws.terminate();
    return this.closed;
  }
}

// refused opens a WebSocket to url that the server refuses before the upgrade, and
// returns the HTTP response.
export function refused(url) {
  return new Promise((resolve, reject) => {
    const ws = track(new WebSocket(url));
    ws.on('error', () => {});
    ws.once('open', () => reject(new Error(`${url}: the upgrade succeeded`)));
    ws.once('unexpected-response', (req, res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => { body += c; });
      res.on('end', () => {
        req.destroy();
        resolve({ status: res.statusCode, headers: res.headers, body });
      });
    });
  });
}

// RPC is a connection to /ws.
export class RPC extends Socket {
  lastID = 0;

  static dial(httpURL) {
    return RPC.open(wsURL(httpURL, '/ws'));
  }

  keep(msg) {
    keepUpdate(msg);
  }

  // request sends a request and returns its id.
  request(method, params) {
    const id = ++this.lastID;
    this.send({ jsonrpc: '2.0', id, method, params });
    return id;
  }

  notify(method, params) {
    this.send({ jsonrpc: '2.0', method, params });
  }

  // response returns the response to request id and the messages before it.
  async response(id, ms = 5000) {
    const { msg, before } = await this.until((m) => m.id === id && !('method' in m), ms);
    return { res: msg, before };
  }

  // call sends a request and returns its response, asserting that nothing came before
  // it.
  async call(method, params) {
    const { res, before } = await this.response(this.request(method, params));
    assert.deepEqual(before, [], `messages before the response to ${method}`);
    return res;
  }

  // result calls method and returns its result, asserting the response's form.
  async result(method, params) {
    const res = await this.call(method, params);
    assert.deepEqual(Object.keys(res).sort(), ['id', 'jsonrpc', 'result'], JSON.stringify(res));
    return res.result;
  }

  // reattach sends method (load_session by default) for a session whose connection was
  // just dropped, and returns the request's id; its response, and whatever comes before
  // it, are left to be read. The server notices a dropped connection only when its read
  // of it fails; until then the session is still that connection's, and the request is
  // answered -32001 (session not found). Such an answer is taken, and the request sent
  // again, for up to a second after the first.
  async reattach(params, method = 'load_session') {
    const deadline = Date.now() + 1000;
    for (;;) {
      const id = this.request(method, params);
      const m = await this.peek();
      if (m.id !== id || m.error?.code !== -32001 || Date.now() > deadline) return id;
      await this.next();
      await sleep(20);
    }
  }

  // settled returns the connection's sessions and their states (list_sessions, or ACP's
  // session/list) once they are want ({id: state}), failing after 2 s. The server
  // records a turn's end just after it sent the turn's last message, so a session's
  // state may lag that message by a moment.
  async settled(want, { acp = false } = {}) {
    const deadline = Date.now() + 2000;
    for (;;) {
      const { sessions } = await this.result(acp ? 'session/list' : 'list_sessions', {});
      const key = acp ? 'sessionId' : 'session_id';
      for (const s of sessions) assert.deepEqual(Object.keys(s), [key, 'state']);
      const got = Object.fromEntries(sessions.map((s) => [s[key], s.state]));
      assert.equal(Object.keys(got).length, sessions.length, 'a session listed twice');
      if (isDeepStrictEqual(got, want) || Date.now() > deadline) {
        assert.deepEqual(got, want);
        return sessions;
      }
      await sleep(20);
    }
  }

  async newSession(params = {}) {
    const r = await this.result('new_session', params);
    assert.deepEqual(Object.keys(r), ['session_id']);
    assert.match(r.session_id, /^[A-Za-z0-9_-]{22}$/);
    return r.session_id;
  }
}

// isError asserts that res is the error response to id with code; given field, that
// the error names it (data.field, and the message's head, as -32602 does); given
// message, that the message is it (or matches it).
export function isError(res, id, code, { field, message } = {}) {
  assert.deepEqual(Object.keys(res).sort(), ['error', 'id', 'jsonrpc'], JSON.stringify(res));
  assert.equal(res.jsonrpc, '2.0');
  assert.equal(res.id, id, JSON.stringify(res));
  assert.equal(res.error.code, code, JSON.stringify(res));
  assert.equal(typeof res.error.message, 'string');
  if (field !== undefined) {
    assert.equal(res.error.data?.field, field, JSON.stringify(res));
    assert.ok(res.error.message.startsWith(`${field}: `), `the message does not name ${field}: ${res.error.message}`);
  }
  if (message !== undefined) {
    if (message instanceof RegExp) assert.match(res.error.message, message);
    else assert.equal(res.error.message, message);
  }
}

// checkUpdates asserts that updates are session_update (ACP: session/update)
// notifications of session sid whose seqs count up by one from 1, and returns their
// update objects.
export function checkUpdates(updates, sid, { acp = false } = {}) {
  return updates.map((m, i) => {
    assert.equal(m.jsonrpc, '2.0');
    assert.equal(m.method, acp ? 'session/update' : 'session_update', JSON.stringify(m));
    assert.ok(!('id' in m), `a notification with an id: ${JSON.stringify(m)}`);
    assert.equal(acp ? m.params.sessionId : m.params.session_id, sid, `another session's update: ${JSON.stringify(m)}`);
    assert.equal(m.params.seq, 1 + i, `updates out of order or missing: ${JSON.stringify(updates.map((u) => u.params.seq))}`);
    assert.deepEqual(Object.keys(m.params).sort(), [acp ? 'sessionId' : 'session_id', 'seq', 'update'].sort());
    return m.params.update;
  });
}

// uiEvents returns the events of the ui_update updates.
export const uiEvents = (updates, acp = false) =>
  updates.filter((u) => (acp ? u.sessionUpdate : u.type) === 'ui_update').map((u) => u.event);

// texts returns the text of the agent_message_chunk updates.
export const texts = (updates, acp = false) =>
  updates.filter((u) => (acp ? u.sessionUpdate : u.type) === 'agent_message_chunk').map((u) => (acp ? u.content.text : u.chunk));

// promptTurn sends a prompt on rpc and returns the updates of the turn (checked) and its
// result: the turn must send nothing but its session's updates, then the response.
export async function promptTurn(rpc, sid, text, { ms = 5000 } = {}) {
  const id = rpc.request('prompt', { session_id: sid, prompt: [{ type: 'text', text }] });
  const { res, before } = await rpc.response(id, ms);
  const updates = checkUpdates(before, sid);
  assert.deepEqual(Object.keys(res).sort(), ['id', 'jsonrpc', 'result'], JSON.stringify(res));
  return { updates, result: res.result };
}

// ndjson posts body to a streaming endpoint of the server and returns its lines.
export async function ndjson(httpURL, path, body) {
  const res = await fetch(`${httpURL}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/x-ndjson' },
    body: JSON.stringify(body),
  });
  assert.equal(res.status, 200);
  const text = await res.text();
  return text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));
}

// startSession starts a genui session with the basic catalog and returns its id.
export async function startSession(httpURL) {
  const res = await fetch(`${httpURL}/startSession`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ data: { protocolVersion: '0.1.0', catalog: basicCatalog() } }),
  });
  assert.equal(res.status, 200);
  const { result } = await res.json();
  assert.match(result, /^[A-Za-z0-9_-]{22}$/);
  return result;
}

// Yield is a connection to /session/{id}.
export class Yield extends Socket {
  static async dial(httpURL, id) {
    const s = await Yield.open(wsURL(httpURL, `/session/${id}`));
    s.id = id;
    return s;
  }

  keep(msg) {
    if (msg?.type === 'progress' && msg.effect?.event) keepA2UI(this.id, msg.effect.event);
  }

  // turn reads the messages up to the turn's end (yield, done or error), asserting that
  // every one before it is a progress message, and returns them.
  async turn(ms = 5000) {
    const { msg, before } = await this.until((m) => m.type !== 'progress', ms);
    for (const p of before) {
      assert.equal(p.status, 'executing', JSON.stringify(p));
      assert.equal(p.effect.type, 'LlmComplete', JSON.stringify(p));
      assert.deepEqual(Object.keys(p).sort(), ['effect', 'status', 'type']);
    }
    return { progress: before, end: msg };
  }
}

// isFatal asserts that m is an error with recoverable false (and no sessionId).
export function isFatal(m, message) {
  assert.deepEqual(Object.keys(m).sort(), ['message', 'recoverable', 'type'], JSON.stringify(m));
  assert.equal(m.type, 'error');
  assert.equal(m.recoverable, false);
  if (message instanceof RegExp) assert.match(m.message, message);
  else assert.equal(m.message, message);
}

// isGetLocationYield asserts that m yields a call of getLocation in session id, and returns
// its callId.
export function isGetLocationYield(m, id) {
  assert.deepEqual(Object.keys(m).sort(), ['effect', 'sessionId', 'type'], JSON.stringify(m));
  assert.equal(m.type, 'yield');
  assert.equal(m.sessionId, id);
  assert.deepEqual(Object.keys(m.effect).sort(), ['callId', 'input', 'name', 'type']);
  assert.equal(m.effect.type, 'ClientTool');
  assert.equal(m.effect.name, 'getLocation');
  assert.deepEqual(m.effect.input, {});
  assert.match(m.effect.callId, /^[A-Za-z0-9_.-]+$/);
  return m.effect.callId;
}

// Every A2UI message a connection of the tests received (a ui_update's event on /ws, a
// progress event on /session/{id}; the service's own events, text and genui tool
// requests, have a type and are not A2UI), by session, in the order received, with the
// name of the test that received the session's first one. captureA2UI writes them to
// <A2UI_CAPTURE_DIR>/<file>.json when the file's tests end, for the Go side to validate.
const a2uiBySession = new Map();
let testName = '';
beforeEach((t) => {
  testName = t.name;
});

function keepA2UI(sessionId, event) {
  if (event === null || typeof event !== 'object' || Array.isArray(event) || 'type' in event) return;
  let s = a2uiBySession.get(sessionId);
  if (!s) {
    // v0.9 messages name their version; v0.8 messages do not.
    s = { name: `${testName} [${sessionId}]`, version: event.version ?? 'v0.8', messages: [] };
    a2uiBySession.set(sessionId, s);
  }
  s.messages.push(event);
}

// keepUpdate records the A2UI message of a session_update (or ACP's session/update)
// that a client of /ws received.
export function keepUpdate(msg) {
  const p = msg?.params;
  if ((msg?.method === 'session_update' || msg?.method === 'session/update') && (p?.update?.type ?? p?.update?.sessionUpdate) === 'ui_update') {
    keepA2UI(p.session_id ?? p.sessionId, p.update.event);
  }
}

export function captureA2UI(file) {
  after(async () => {
    if (!CAPTURE_DIR) return;
    await mkdir(CAPTURE_DIR, { recursive: true });
    await writeFile(join(CAPTURE_DIR, `${file}.json`), JSON.stringify([...a2uiBySession.values()]));
  });
}
