// What the test files share: the servers' URLs, a fetch that keeps what crossed the
// wire, the checks every run's raw SSE frames must pass (@ag-ui/core 1.0's EventSchemas,
// unchanged by the client), and the capture of every a2ui_operations list (validated by
// aguiclient_test.go against the A2UI specification).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EventSchemas } from '@ag-ui/core/schemas';

const base = (v) => (v ?? '').replace(/\/+$/, '');
// The server on the offline model (instant, deterministic runs; it calls getLocation
// when asked to).
export const GENUI_URL = base(process.env.GENUI_URL);
// The server on the fake Gemini: every run writes a form in paced chunks (about a
// second); a run asked to "please fail" breaks off with a model error.
export const PACED_URL = base(process.env.GENUI_PACED_URL);
// Two replicas sharing their durable streams through Redis, on a paced model.
export const REPLICA_A = base(process.env.GENUI_REPLICA_A);
export const REPLICA_B = base(process.env.GENUI_REPLICA_B);
const CAPTURE_DIR = process.env.A2UI_CAPTURE_DIR ?? '';

export const BASIC_CATALOG = 'https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json';

// The basic catalog's components under a catalog id of the test's own, as an app hands
// it to @ag-ui/a2ui-middleware ({catalogId, components}).
export function customCatalog() {
  const file = process.env.A2UI_CATALOG_FILE;
  assert.ok(file, 'A2UI_CATALOG_FILE must name the catalog the tests send');
  const doc = JSON.parse(readFileSync(file, 'utf8'));
  return { catalogId: doc.catalogId, components: doc.components };
}

// The frontend tool the tests declare, and the offline model calls when asked to.
export const GET_LOCATION = {
  name: 'getLocation',
  description: "The user's city",
  parameters: { type: 'object', properties: {} },
};

export function requireServers(...urls) {
  for (const u of urls) assert.ok(u, 'the servers must be set: GENUI_URL, GENUI_PACED_URL, GENUI_REPLICA_A, GENUI_REPLICA_B');
}

export const newId = () => randomUUID();

export const user = (content) => ({ id: newId(), role: 'user', content });

// An A2UI v0.9 action on the offline model's surface, as a renderer emits it.
export const sendAction = (reply) => ({
  name: 'send',
  surfaceId: 'surface-1',
  sourceComponentId: 'send',
  timestamp: new Date().toISOString(),
  context: { reply },
});

// Wire keeps every exchange a fetch made: the request's body and the response's status,
// headers and whole body (read beside the client, which gets the same bytes).
export class Wire {
  constructor() {
    this.exchanges = [];
  }

  // fetch is a fetch for HttpAgent's config that records the exchange.
  get fetch() {
    return async (url, init) => {
      const res = await fetch(url, init);
      const x = { request: JSON.parse(init.body), status: res.status, headers: res.headers };
      this.exchanges.push(x);
      if (!res.body) {
        x.body = Promise.resolve('');
        return res;
      }
      const [mine, theirs] = res.body.tee();
      x.body = new Response(mine).text();
      return new Response(theirs, { status: res.status, statusText: res.statusText, headers: res.headers });
    };
  }

  get last() {
    return this.exchanges.at(-1);
  }
}

// frames parses an SSE body as this endpoint writes it: LF-only events, each "id: <stream>.<n>"
// and one "data: <json>" line (keepalive comments aside), ids counting up from first.
export function frames(body, first = 1) {
  assert.ok(!body.includes('\r'), 'the stream holds a CR');
  assert.ok(body.endsWith('\n\n'), 'the stream does not end with a whole event');
  const out = [];
  let stream;
  for (const block of body.slice(0, -2).split('\n\n')) {
    if (block.startsWith(':')) continue;
    const m = /^id: ([A-Za-z0-9_-]+)\.(\d+)\ndata: (.+)$/.exec(block);
    assert.ok(m, `not an event of this endpoint: ${JSON.stringify(block)}`);
    stream ??= m[1];
    assert.equal(m[1], stream, 'the events of one run name different streams');
    assert.equal(Number(m[2]), first + out.length, `event ids do not count up by one: ${block}`);
    out.push({ id: `${m[1]}.${m[2]}`, data: m[3], event: JSON.parse(m[3]) });
  }
  return out;
}

// checkFrames checks a run's frames: each passes EventSchemas, holds no null, and
// parses to itself (nothing the schema does not know).
export function checkFrames(fs) {
  for (const f of fs) {
    assert.ok(!hasNull(f.event), `a null in ${f.data}`);
    const parsed = EventSchemas.parse(f.event);
    assert.deepEqual(parsed, f.event, `EventSchemas changed ${f.data}`);
  }
}

function hasNull(v) {
  if (v === null) return true;
  if (typeof v !== 'object') return false;
  return Object.values(v).some(hasNull);
}

// run runs agent once, keeping the events its subscribers see and when, and the errors.
export async function run(agent, params = {}) {
  const r = { events: [], at: [], runErrors: [], finished: null, failure: null };
  const t0 = performance.now();
  r.result = await agent.runAgent({ runId: newId(), ...params }, {
    onEvent: ({ event }) => {
      r.events.push(structuredClone(event));
      r.at.push(performance.now() - t0);
    },
    onRunErrorEvent: ({ event }) => r.runErrors.push(event),
    onRunFinishedEvent: (e) => {
      r.finished = { outcome: e.outcome, interrupts: e.interrupts, result: e.result };
    },
    onRunFailed: ({ error }) => {
      r.failure = error;
    },
  });
  r.types = r.events.map((e) => e.type);
  return r;
}

// checkedRun runs agent over wire and checks the run end to end: what the client saw is
// exactly what the server wrote (unless a middleware sits in between), every frame
// passes the schemas, and the run begins and ends as AG-UI requires.
export async function checkedRun(agent, wire, params = {}, { middleware = false } = {}) {
  const r = await run(agent, params);
  assert.equal(r.failure, null, `the run failed: ${r.failure}`);
  const x = wire.last;
  assert.equal(x.status, 200);
  assert.equal(x.headers.get('content-type'), 'text/event-stream');
  r.frames = frames(await x.body);
  checkFrames(r.frames);
  r.request = x.request;
  const wrote = r.frames.map((f) => f.event);
  if (!middleware) assert.deepEqual(r.events, wrote, 'the client saw other events than the server wrote');
  // The client's activity messages hold what the server's snapshots and deltas build.
  r.activities = clientActivities(agent, wrote);
  assert.equal(wrote[0].type, 'RUN_STARTED');
  assert.ok(['RUN_FINISHED', 'RUN_ERROR'].includes(wrote.at(-1).type), `the run ends with ${wrote.at(-1).type}`);
  assert.equal(wrote.filter((e) => e.type === 'RUN_FINISHED' || e.type === 'RUN_ERROR').length, 1);
  return r;
}

// activityStates applies a run's a2ui-surface activity events as @ag-ui/client does (a
// snapshot replaces the activity message's content, a delta applies its JSON Patch to
// it), checking what the server sends: a snapshot that replaces the content with
// operations, then deltas that each append one A2UI message to them. It returns the
// content after each of those events: {messageId, type, operations}.
export function activityStates(events) {
  const held = new Map();
  const out = [];
  for (const e of events) {
    if (e.type === 'ACTIVITY_SNAPSHOT') {
      assert.equal(e.activityType, 'a2ui-surface', JSON.stringify(e));
      assert.equal(e.replace, true, `a snapshot that does not replace the content: ${JSON.stringify(e)}`);
      const ops = e.content?.a2ui_operations;
      assert.ok(Array.isArray(ops) && ops.length > 0, `a snapshot without operations: ${JSON.stringify(e)}`);
      held.set(e.messageId, structuredClone(ops));
    } else if (e.type === 'ACTIVITY_DELTA') {
      assert.equal(e.activityType, 'a2ui-surface', JSON.stringify(e));
      assert.ok(held.has(e.messageId), `a delta of an activity the run has not sent: ${JSON.stringify(e)}`);
      assert.equal(e.patch.length, 1, JSON.stringify(e));
      const [{ op, path, value }] = e.patch;
      assert.deepEqual([op, path], ['add', '/a2ui_operations/-'], JSON.stringify(e));
      assert.ok(value && typeof value === 'object', JSON.stringify(e));
      held.set(e.messageId, [...held.get(e.messageId), structuredClone(value)]);
    } else {
      continue;
    }
    out.push({ messageId: e.messageId, type: e.type, operations: held.get(e.messageId) });
  }
  return out;
}

// surfaceStates returns the a2ui_operations an a2ui-surface activity holds after each of a
// run's activity events: the surface as the client shows it, state by state.
export const surfaceStates = (events) => activityStates(events).map((s) => s.operations);

// componentIds returns the ids of the components a list of A2UI messages holds, each once.
export const componentIds = (ops) => [...new Set(ops.flatMap((m) => (m.updateComponents?.components ?? []).map((c) => c.id)))];

// render applies A2UI v0.9 messages in order, as a renderer does, and returns the surfaces
// they leave: surfaceId → {catalogId, components: Map(id → component), data}. It fails on
// a message a renderer refuses: an update of a surface that does not exist, a second
// createSurface.
export function render(ops) {
  const surfaces = new Map();
  const surfaceOf = (id) => {
    const s = surfaces.get(id);
    assert.ok(s, `a message of surface ${id}, which does not exist`);
    return s;
  };
  for (const m of ops) {
    assert.equal(m.version, 'v0.9', JSON.stringify(m));
    if (m.createSurface) {
      const { surfaceId, catalogId } = m.createSurface;
      assert.ok(!surfaces.has(surfaceId), `surface ${surfaceId} created twice`);
      surfaces.set(surfaceId, { catalogId, components: new Map(), data: {} });
    } else if (m.updateComponents) {
      const s = surfaceOf(m.updateComponents.surfaceId);
      for (const c of m.updateComponents.components) s.components.set(c.id, c);
    } else if (m.updateDataModel) {
      const s = surfaceOf(m.updateDataModel.surfaceId);
      const path = (m.updateDataModel.path ?? '/').split('/').filter(Boolean);
      if (path.length === 0) {
        s.data = structuredClone(m.updateDataModel.value ?? {});
      } else {
        let at = s.data;
        for (const k of path.slice(0, -1)) at = (at[k] ??= {});
        at[path.at(-1)] = structuredClone(m.updateDataModel.value);
      }
    } else if (m.deleteSurface) {
      surfaceOf(m.deleteSurface.surfaceId);
      surfaces.delete(m.deleteSurface.surfaceId);
    } else {
      assert.fail(`not an A2UI v0.9 server message: ${JSON.stringify(m)}`);
    }
  }
  return surfaces;
}

// checkSurface checks a surface as render leaves it: it has a root, and every component a
// component refers to (child, children) is there.
export function checkSurface(surface, what) {
  assert.ok(surface.components.has('root'), `${what}: no root`);
  for (const c of surface.components.values()) {
    const refs = [c.child, ...(Array.isArray(c.children) ? c.children : [c.children?.componentId])].filter((r) => typeof r === 'string');
    for (const r of refs) assert.ok(surface.components.has(r), `${what}: ${c.id} refers to ${r}, which is not there`);
  }
}

// clientActivities checks the activity messages the client holds after a run against
// what the server wrote: the content of each activity the run sent is the operations the
// run's events build (the last of activityStates), and a renderer applying them gets a
// whole surface. It returns messageId → operations.
export function clientActivities(agent, wrote) {
  const last = new Map(activityStates(wrote).map((s) => [s.messageId, s.operations]));
  const out = new Map();
  for (const [id, ops] of last) {
    const held = agent.messages.filter((m) => m.id === id);
    assert.equal(held.length, 1, `the client holds ${held.length} messages ${id}`);
    assert.equal(held[0].role, 'activity');
    assert.equal(held[0].activityType, 'a2ui-surface');
    assert.deepEqual(held[0].content, { a2ui_operations: ops }, `the client's content of ${id} is not what the events build`);
    for (const [sid, surface] of render(ops)) checkSurface(surface, `${id}: surface ${sid}`);
    out.set(id, ops);
  }
  return out;
}

// Captures collects the a2ui_operations of runs, state by state and as the client held
// them at the end, and writes them to <A2UI_CAPTURE_DIR>/<file>.json for the Go side to
// validate.
export class Captures {
  constructor(file) {
    this.file = file;
    this.runs = [];
  }

  // add keeps a run's surface states, and the operations the client's activity
  // messages held after it (checkedRun's r.activities).
  add(name, events, activities) {
    const s = surfaceStates(events);
    assert.ok(s.length > 0, `${name}: no a2ui-surface activity`);
    assert.ok(activities?.size > 0, `${name}: no activity message in the client`);
    this.runs.push({ name, states: s, final: Object.fromEntries(activities) });
  }

  async write() {
    if (!CAPTURE_DIR) return;
    await mkdir(CAPTURE_DIR, { recursive: true });
    await writeFile(join(CAPTURE_DIR, `${this.file}.json`), JSON.stringify(this.runs));
  }
}
