// A run whose connection drops mid-surface, read again with Last-Event-ID from the other
// replica (the replicas share their durable streams through Redis): @ag-ui/client gets
// one whole run, no event lost or repeated, from one model call (counted by the Go test).
// @ag-ui/client does not reconnect by itself; the fetch below is the reconnecting
// transport an app puts under HttpAgent.
//
//   GENUI_REPLICA_A=… GENUI_REPLICA_B=… node --test replicas.test.mjs
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HttpAgent } from '@ag-ui/client';
import {
  Captures, REPLICA_A, REPLICA_B, checkFrames, clientActivities, componentIds, frames, newId, render, requireServers, surfaceStates, user,
} from './common.mjs';

requireServers(REPLICA_A, REPLICA_B);
const captures = new Captures('replicas');
after(() => captures.write());

// reconnectingFetch posts the run to first and, once an event matching dropAfter has
// come, drops that connection and asks second for the rest with Last-Event-ID. The
// client reads one body: the events before the drop, then those after. seen gets both
// bodies as the servers wrote them.
function reconnectingFetch(first, second, dropAfter, seen) {
  return async (url, init) => {
    const abort = new AbortController();
    const res = await fetch(first, { ...init, signal: abort.signal });
    assert.equal(res.status, 200);
    const decoder = new TextDecoder();
    const encoder = new TextEncoder();
    const body = new ReadableStream({
      async start(controller) {
        let buf = '';
        let lastID = '';
        const reader = res.body.getReader();
        for (;;) {
          const { value, done } = await reader.read();
          assert.ok(!done, 'the first replica ended the run before the drop');
          buf += decoder.decode(value, { stream: true });
          let i;
          let dropped = false;
          while ((i = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, i + 2);
            buf = buf.slice(i + 2);
            seen.first += block;
            controller.enqueue(encoder.encode(block));
            const id = /^id: (.+)$/m.exec(block);
            if (id) lastID = id[1];
            const data = /^data: (.+)$/m.exec(block);
            if (data && dropAfter(JSON.parse(data[1]))) {
              dropped = true;
              break;
            }
          }
          if (dropped) break;
        }
        abort.abort(); // the connection drops mid-run
        await reader.cancel().catch(() => {});
        seen.lastID = lastID;
        const rest = await fetch(second, { ...init, headers: { ...init.headers, 'Last-Event-ID': lastID } });
        assert.equal(rest.status, 200);
        assert.equal(rest.headers.get('content-type'), 'text/event-stream');
        for await (const chunk of rest.body) {
          seen.second += decoder.decode(chunk, { stream: true });
          controller.enqueue(chunk);
        }
        controller.close();
      },
    });
    return new Response(body, { status: 200, headers: res.headers });
  };
}

describe('a dropped run', () => {
  it('is read again on the other replica with Last-Event-ID, no event lost or repeated', async () => {
    const seen = { first: '', second: '', lastID: '' };
    // The connection drops once the surface has come in part: after its snapshot and a
    // delta.
    let acts = 0;
    const dropAfter = (ev) => (ev.type === 'ACTIVITY_SNAPSHOT' || ev.type === 'ACTIVITY_DELTA') && ++acts === 2;
    const agent = new HttpAgent({
      url: `${REPLICA_A}/ag-ui`,
      threadId: newId(),
      fetch: reconnectingFetch(`${REPLICA_A}/ag-ui`, `${REPLICA_B}/ag-ui`, dropAfter, seen),
    });
    agent.addMessage(user('A signup form'));
    const events = [];
    let failure = null;
    let outcome = null;
    await agent.runAgent({ runId: newId() }, {
      onEvent: ({ event }) => events.push(structuredClone(event)),
      onRunFailed: ({ error }) => { failure = error; },
      onRunFinishedEvent: (e) => { outcome = e.outcome; },
    });
    assert.equal(failure, null, String(failure));
    assert.equal(outcome, 'success');

    // The first replica's events, then the second's: ids counting up by one across the
    // drop, every frame valid, and the client saw exactly them.
    const before = frames(seen.first);
    const n = before.length;
    assert.equal(before.at(-1).id, seen.lastID);
    const rest = frames(seen.second, n + 1);
    assert.equal(rest[0].id.split('.')[0], seen.lastID.split('.')[0], 'the second replica read another stream');
    const all = [...before, ...rest];
    checkFrames(all);
    assert.deepEqual(events, all.map((f) => f.event));
    const types = events.map((e) => e.type);
    assert.equal(types[0], 'RUN_STARTED');
    assert.equal(types.filter((t) => t === 'RUN_STARTED').length, 1);
    assert.equal(types.at(-1), 'RUN_FINISHED');
    assert.ok(before.some((f) => f.event.type === 'ACTIVITY_SNAPSHOT'), 'the surface did not begin before the drop');
    assert.ok(rest.some((f) => f.event.type === 'ACTIVITY_DELTA'), 'the surface did not go on growing after the drop');
    assert.ok(!rest.some((f) => f.event.type === 'ACTIVITY_SNAPSHOT'), 'the surface was sent again whole after the drop');

    // The deltas of the second replica applied to what the client built from the first's:
    // its activity message holds every message of the surface, a whole surface.
    const activities = clientActivities(agent, events);
    captures.add('a run dropped and read again on the other replica', events, activities);
    const s = surfaceStates(events);
    assert.deepEqual(componentIds(s.at(-1)).sort(), ['email', 'root', 'submit', 'submit-label', 'title']);
    assert.deepEqual([...render(activities.get('a2ui-surface-form')).get('form').components.keys()].sort(), ['email', 'root', 'submit', 'submit-label', 'title']);
    assert.deepEqual(agent.messages.filter((m) => m.role === 'activity').map((m) => m.id), ['a2ui-surface-form']);
  });

  it('is refused with a 404 naming Last-Event-ID when its stream is unknown', async () => {
    const res = await fetch(`${REPLICA_B}/ag-ui`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Last-Event-ID': 'no-such-stream.3' },
      body: JSON.stringify({ threadId: 't', runId: 'r', messages: [] }),
    });
    assert.equal(res.status, 404);
    const { error } = await res.json();
    assert.equal(error.details.field, 'Last-Event-ID');
  });
});
