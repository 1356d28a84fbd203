// @ag-ui/client (HttpAgent) against POST /ag-ui with authentication: without a key a run
// fails with the client's HTTP error (401); with a key in the agent's headers it runs to
// its end; and what one caller's runs leave on the server (their durable streams, read
// again with Last-Event-ID) is, to another caller, what a stream that never existed is.
// Runs are otherwise stateless: a thread's conversation travels in each run's messages.
//
//   GENUI_URL=… GENUI_ALICE_KEY=… GENUI_BOB_KEY=… node --test auth.test.mjs
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HttpAgent, buildResumeArray } from '@ag-ui/client';
import { BASIC_CATALOG, GENUI_URL, GET_LOCATION, Wire, checkedRun, componentIds, frames, newId, requireServers, surfaceStates, user } from './common.mjs';

requireServers(GENUI_URL);
const ALICE = process.env.GENUI_ALICE_KEY ?? '';
const BOB = process.env.GENUI_BOB_KEY ?? '';
assert.ok(ALICE && BOB && ALICE !== BOB, 'GENUI_ALICE_KEY and GENUI_BOB_KEY must be two API keys');

const NO_CREDENTIALS = 'credentials required: send Authorization: Bearer <key or token>, or X-API-Key';
const refusal = (message, field = 'Authorization') => ({ error: { status: 'UNAUTHENTICATED', message, details: { field } } });
const STREAM_GONE = { status: 'NOT_FOUND', message: "Last-Event-ID: the run's stream is unknown or expired: start the run again", details: { field: 'Last-Event-ID' } };

// agentOf is an HttpAgent on the endpoint sending headers, its exchanges kept by wire.
const agentOf = (headers, wire, config = {}) => new HttpAgent({ url: `${GENUI_URL}/ag-ui`, threadId: newId(), headers, fetch: wire?.fetch, ...config });
const asAlice = { Authorization: `Bearer ${ALICE}` };
const asBob = { 'X-API-Key': BOB };

// rejectsHTTP checks that a run fails with HttpAgent's HTTP error: status, and payload.
async function rejectsHTTP(promise, status, payload) {
  await assert.rejects(promise, (err) => {
    assert.equal(err.status, status, String(err));
    assert.match(err.message, new RegExp(`^HTTP ${status}: `));
    assert.deepEqual(err.payload, payload);
    return true;
  });
}

// A failed run also reaches onRunFailed, which the client logs with console.error; quiet
// for the runs meant to fail.
async function quietly(f) {
  const error = console.error;
  console.error = () => {};
  try {
    return await f();
  } finally {
    console.error = error;
  }
}

describe('a run without credentials', () => {
  it('fails with a 401 HTTP error carrying the JSON error', async () => {
    for (const headers of [undefined, {}, { Authorization: 'Bearer not-a-key-0123456789' }]) {
      const agent = agentOf(headers);
      agent.addMessage(user('Hello'));
      let failed;
      const message = headers?.Authorization ? 'invalid credentials: unknown API key' : NO_CREDENTIALS;
      await quietly(() => rejectsHTTP(agent.runAgent({ runId: newId() }, { onRunFailed: ({ error }) => { failed = error; } }), 401, refusal(message)));
      assert.equal(failed?.status, 401, 'onRunFailed was not told');
      // Nothing of the run reached the agent.
      assert.deepEqual(agent.messages.map((m) => m.role), ['user']);
    }
  });

  it('is refused before the body is read: 401 and the challenge', async () => {
    const res = await fetch(`${GENUI_URL}/ag-ui`, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' }, body: 'not json' });
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="genui"');
    assert.deepEqual(await res.json(), refusal(NO_CREDENTIALS));
  });
});

describe('a run with a key in the agent\'s headers', () => {
  for (const [name, headers] of [['Authorization: Bearer', asAlice], ['X-API-Key', { 'X-API-Key': ALICE }]]) {
    it(`(${name}) runs to RUN_FINISHED with the surface`, async () => {
      const wire = new Wire();
      const agent = agentOf(headers, wire);
      agent.addMessage(user('Hello'));
      const r = await checkedRun(agent, wire);
      assert.equal(r.types.at(-1), 'RUN_FINISHED');
      assert.equal(r.finished.outcome, 'success');
      const ops = surfaceStates(r.events).at(-1);
      assert.deepEqual(ops[0], { version: 'v0.9', createSurface: { catalogId: BASIC_CATALOG, surfaceId: 'surface-1' } });
      assert.ok(componentIds(ops).includes('root'));
      assert.match(JSON.stringify(ops), /You said: Hello/);
      assert.equal(agent.messages.filter((m) => m.role === 'activity').length, 1);
    });
  }
});

describe("alice's thread, as bob", () => {
  it("reading alice's run again with Last-Event-ID: 404, as for a stream that never existed", async () => {
    const wire = new Wire();
    const alice = agentOf(asAlice, wire);
    alice.addMessage(user('Hello'));
    const r = await checkedRun(alice, wire);
    const [stream] = r.frames[0].id.split('.');
    const input = { messages: structuredClone(alice.messages.filter((m) => m.role !== 'activity')) };

    // Bob sends alice's thread and messages, and the id of the event before her run's
    // first (the whole run again).
    for (const last of [`${stream}.0`, `no-such-stream-${newId()}.0`]) {
      const bob = agentOf({ ...asBob, 'Last-Event-ID': last }, undefined, { threadId: alice.threadId, initialMessages: structuredClone(input.messages) });
      await quietly(() => rejectsHTTP(bob.runAgent({ runId: r.request.runId }), 404, { error: STREAM_GONE }));
    }

    // Alice's agent gets her whole run again, event for event.
    const again = new Wire();
    const mine = agentOf({ ...asAlice, 'Last-Event-ID': `${stream}.0` }, again, { threadId: alice.threadId, initialMessages: structuredClone(input.messages) });
    const replay = await checkedRun(mine, again, { runId: r.request.runId });
    assert.deepEqual(replay.frames, r.frames);
    // And the rest of it after its second event, as a reconnecting transport asks.
    const rest = await fetch(`${GENUI_URL}/ag-ui`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream', ...asAlice, 'Last-Event-ID': `${stream}.2` },
      body: JSON.stringify(r.request),
    });
    assert.equal(rest.status, 200);
    assert.deepEqual(frames(await rest.text(), 3), r.frames.slice(2));
  });

  it('a run on her thread id is a fresh run of his own messages', async () => {
    const wire = new Wire();
    const alice = agentOf(asAlice, wire);
    alice.addMessage(user('Alice wants a table for two'));
    await checkedRun(alice, wire);

    const bobWire = new Wire();
    const bob = agentOf(asBob, bobWire, { threadId: alice.threadId });
    bob.addMessage(user('Bob wants a bike'));
    const r = await checkedRun(bob, bobWire);
    assert.equal(r.events.at(-1).threadId, alice.threadId);
    assert.equal(r.finished.outcome, 'success');
    const ops = surfaceStates(r.events).at(-1);
    assert.equal(ops[0].createSurface.surfaceId, 'surface-1');
    assert.match(JSON.stringify(r.events), /You said: Bob wants a bike/);
    assert.doesNotMatch(JSON.stringify(r.events), /Alice/);
  });

  it("answering alice's pending frontend tool call is refused as an answer to an unknown call", async () => {
    const wire = new Wire();
    const alice = agentOf(asAlice, wire);
    alice.addMessage(user('Where am I? Use getLocation.'));
    const asked = await checkedRun(alice, wire, { tools: [GET_LOCATION] });
    assert.equal(asked.finished.outcome, 'interrupt');
    const [pending] = alice.pendingInterrupts;

    // Bob, on her thread, answers her call by its id. The server knows a call only from
    // the run's own messages, never from another run of the thread: 400 naming the
    // field, exactly as for a call that never was.
    const answers = [];
    for (const id of [pending.id, 'no-such-call']) {
      const bob = agentOf(asBob, undefined, { threadId: alice.threadId });
      bob.addMessage(user('Where am I? Use getLocation.'));
      await quietly(() => assert.rejects(bob.runAgent({ tools: [GET_LOCATION], resume: [{ interruptId: id, status: 'resolved', payload: { city: 'Paris' } }] }), (err) => {
        assert.equal(err.status, 400, String(err));
        assert.equal(err.payload.error.status, 'INVALID_ARGUMENT');
        assert.equal(err.payload.error.details.field, 'resume[0].interruptId');
        answers.push(err.payload.error.message.replaceAll(id, '<id>'));
        return true;
      }));
    }
    assert.equal(answers[0], answers[1]);

    // Alice's answer continues her run.
    const resume = buildResumeArray(alice.pendingInterrupts, { [pending.id]: { status: 'resolved', payload: { city: 'Porto' } } });
    const r = await checkedRun(alice, wire, { tools: [GET_LOCATION], resume });
    assert.equal(r.finished.outcome, 'success');
    assert.match(JSON.stringify(r.events), /Porto/);
  });
});
