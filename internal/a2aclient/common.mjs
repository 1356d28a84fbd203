// What both test files share: the servers' URLs, the A2UI extensions, the capture of
// every A2UI message a conversation received (validated by a2aclient_test.go against the
// A2UI specification) and raw JSON-RPC requests for what the SDKs cannot send.
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
