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
  assert.equal(wrote[0].type, 'RUN_STARTED');
  assert.ok(['RUN_FINISHED', 'RUN_ERROR'].includes(wrote.at(-1).type), `the run ends with ${wrote.at(-1).type}`);
  assert.equal(wrote.filter((e) => e.type === 'RUN_FINISHED' || e.type === 'RUN_ERROR').length, 1);
  return r;
}

// snapshots returns the a2ui_operations of a run's a2ui-surface activity snapshots.
export const snapshots = (events) =>
  events.filter((e) => e.type === 'ACTIVITY_SNAPSHOT' && e.activityType === 'a2ui-surface').map((e) => e.content.a2ui_operations);

// componentIds returns the ids of the components a list of A2UI messages holds.
export const componentIds = (ops) => ops.flatMap((m) => (m.updateComponents?.components ?? []).map((c) => c.id));

// Captures collects the a2ui_operations of runs and writes them to
// <A2UI_CAPTURE_DIR>/<file>.json for the Go side to validate.
export class Captures {
  constructor(file) {
    this.file = file;
    this.runs = [];
  }

  add(name, events) {
    const s = snapshots(events);
    assert.ok(s.length > 0, `${name}: no a2ui-surface snapshot`);
    this.runs.push({ name, snapshots: s });
  }

  async write() {
    if (!CAPTURE_DIR) return;
    await mkdir(CAPTURE_DIR, { recursive: true });
    await writeFile(join(CAPTURE_DIR, `${this.file}.json`), JSON.stringify(this.runs));
  }
}
