// Two replicas sharing their sessions, conversations and durable streams through Redis:
// a session that waits for its client on replica A, its connection dropped, is taken
// up on replica B, over /session/{id} and over /ws; a stored session that cannot be read
// is an internal error on /ws, and on /session/{id} seed 004's "session state
// inconsistent": an error with recoverable false.
//
//   GENUI_REPLICA_A=… GENUI_REPLICA_B=… GENUI_CORRUPT_SESSION=… node --test replicas.test.mjs
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  captureA2UI, CORRUPT_SESSION, CORRUPT_SESSION_2, GET_LOCATION, OFFLINE_MODEL, REPLICA_A, REPLICA_B, RPC, WHERE_AM_I, Yield,
  checkUpdates, isError, isGetLocationYield, requireServers, startSession, uiEvents,
} from './common.mjs';

requireServers(REPLICA_A, REPLICA_B, CORRUPT_SESSION, CORRUPT_SESSION_2);
captureA2UI('replicas');

const modelCall = { type: 'progress', effect: { type: 'LlmComplete', model: OFFLINE_MODEL }, status: 'executing' };

describe('a session waiting on replica A', () => {
  it('/session/{id}: reconnect on replica B yields the same effect; resume there ends with done', async () => {
    const id = await startSession(REPLICA_A);
    const a = await Yield.dial(REPLICA_A, id);
    a.send({ type: 'init', graphId: 'generateUi', input: { conversation: [{ role: 'user', parts: [{ type: 'text', text: WHERE_AM_I }] }], clientTools: [GET_LOCATION] } });
    const first = await a.turn();
    assert.deepEqual(first.progress[0], modelCall);
    const callId = isGetLocationYield(first.end, id);
    await a.drop();

    const b = await Yield.dial(REPLICA_B, id);
    b.send({ type: 'reconnect', sessionId: id });
    const y = await b.next();
    assert.deepEqual(y, first.end);
    assert.equal(y.effect.callId, callId);
    b.send({ type: 'resume', result: { type: 'success', value: { city: 'Lisbon' } } });
    const { progress, end } = await b.turn();
    assert.deepEqual(progress[0], modelCall);
    assert.match(JSON.stringify(progress), /getLocation returned city: Lisbon/);
    assert.deepEqual(Object.keys(end).sort(), ['result', 'type']);
    assert.equal(end.type, 'done');
    assert.equal(end.result.finishReason, 'stop');
    // Nothing waits any more, on either replica.
    b.send({ type: 'reconnect', sessionId: id });
    assert.equal((await b.next()).message, 'reconnect: the session waits for no effect (not suspended): send init');
    const a2 = await Yield.dial(REPLICA_A, id);
    a2.send({ type: 'reconnect', sessionId: id });
    assert.equal((await a2.next()).message, 'reconnect: the session waits for no effect (not suspended): send init');
    await Promise.all([b.close(), a2.close()]);
  });

  it('/ws: load_session on replica B sends the same client_tool request; the answer ends the interaction there', async () => {
    const a = await RPC.dial(REPLICA_A);
    const sid = await a.newSession({ clientTools: [GET_LOCATION] });
    a.request('prompt', { session_id: sid, prompt: [{ type: 'text', text: WHERE_AM_I }] });
    const { msg: req, before } = await a.until((m) => m.method === 'client_tool');
    assert.deepEqual(checkUpdates(before, sid), [{ type: 'agent_message_chunk', chunk: 'Calling getLocation.' }]);
    const raw = JSON.stringify(req);
    await a.drop();

    const b = await RPC.dial(REPLICA_B);
    const load = b.request('load_session', { session_id: sid, cwd: '/tmp', mcp_servers: [] });
    const again = await b.nextRaw();
    assert.equal(again.raw, raw);
    await b.settled({ [sid]: 'waiting' });
    b.send({ jsonrpc: '2.0', id: again.msg.id, result: { city: 'Lisbon' } });
    const { res, before: updates } = await b.response(load);
    assert.deepEqual(res, { jsonrpc: '2.0', id: load, result: { stop_reason: 'end_turn' } });
    const ups = checkUpdates(updates, sid);
    assert.deepEqual(ups[0], { type: 'agent_message_chunk', chunk: 'Here is what the client returned.\n' });
    assert.match(JSON.stringify(uiEvents(ups)), /getLocation returned city: Lisbon/);
    await b.close();
  });
});

describe('a stored session that cannot be read', () => {
  it('/ws: -32603, an internal error', async () => {
    const rpc = await RPC.dial(REPLICA_B);
    const id = rpc.request('load_session', { session_id: CORRUPT_SESSION });
    const { res } = await rpc.response(id);
    isError(res, id, -32603, { message: 'session: the stored session cannot be read' });
    assert.deepEqual(res.error.data, { status: 'INTERNAL' });
    // It is deleted: on either replica, the session is unknown now.
    for (const server of [REPLICA_B, REPLICA_A]) {
      const other = server === REPLICA_B ? rpc : await RPC.dial(server);
      const again = other.request('session/load', { sessionId: CORRUPT_SESSION });
      const { res: gone } = await other.response(again);
      assert.equal(gone.error?.code, -32001, JSON.stringify(gone));
      if (other !== rpc) await other.close();
    }
    // The connection goes on.
    assert.deepEqual(await rpc.settled({}), []);
    await rpc.close();
  });

  it('/session/{id}: session state inconsistent, an error with recoverable false', async () => {
    const s = await Yield.dial(REPLICA_A, CORRUPT_SESSION_2);
    s.send({ type: 'reconnect', sessionId: CORRUPT_SESSION_2 });
    assert.deepEqual(await s.next(), { type: 'error', message: 'session: the stored session cannot be read', recoverable: false });
    // The session is cleaned up: what comes next finds it gone; never recoverable.
    s.send({ type: 'resume', result: { type: 'success', value: { city: 'Lisbon' } } });
    assert.deepEqual(await s.next(), { type: 'error', message: 'resume: the session is unknown or expired', recoverable: false });
    s.send({ type: 'ping' });
    assert.deepEqual(await s.next(), { type: 'pong' });
    await s.close();
  });
});
