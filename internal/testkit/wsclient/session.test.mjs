// The ws package against GET /session/{id} (seed 004's yield and resume): init, progress,
// a yield of a client tool, resume, done; reconnect on a new connection within the
// window and after it; every row of the seed's error table; ping during a turn; the
// HTTP errors before the upgrade.
//
//   GENUI_URL=… GENUI_PACED_URL=… GENUI_EXPIRY_URL=… GENUI_CATALOG_FILE=… node --test session.test.mjs
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import {
  captureA2UI, EXPIRY_URL, EXPIRY_WINDOW_MS, GENUI_URL, GET_LOCATION, OFFLINE_MODEL, PACED_MODEL, PACED_URL, RPC,
  WHERE_AM_I, Yield, isFatal, isGetLocationYield, ndjson, refused, requireServers, sleep, startSession, wsURL,
} from './common.mjs';

requireServers(GENUI_URL, PACED_URL, EXPIRY_URL);
captureA2UI('session');

const user = (text) => ({ role: 'user', parts: [{ type: 'text', text }] });
// An id for /session/{id} that no other test uses.
const freshID = () => `t-${randomUUID()}`;

const initTool = { type: 'init', graphId: 'generateUi', input: { conversation: [user(WHERE_AM_I)], clientTools: [GET_LOCATION] } };
const initHello = { type: 'init', graphId: 'generateUi', input: { conversation: [user('Hello')] } };
const lisbon = { type: 'resume', result: { type: 'success', value: { city: 'Lisbon' } } };

const modelCall = (model) => ({ type: 'progress', effect: { type: 'LlmComplete', model }, status: 'executing' });
const progressOf = (event) => ({ type: 'progress', effect: { type: 'LlmComplete', event }, status: 'executing' });
const events = (progress) => progress.filter((p) => p.effect.event).map((p) => p.effect.event);
// a2ui returns the A2UI messages among events (the service's own have a type).
const a2ui = (evs) => evs.filter((e) => !('type' in e));

// isDone asserts that m is done with a turn's result that stopped normally.
function isDone(m) {
  assert.deepEqual(Object.keys(m).sort(), ['result', 'type'], JSON.stringify(m));
  assert.equal(m.type, 'done');
  assert.equal(m.result.finishReason, 'stop', JSON.stringify(m));
  assert.equal(m.result.message.role, 'model');
  assert.ok(m.result.usage.modelCalls >= 1);
}

// yielded runs initTool on s: the model call, its text, then the yield of getLocation.
async function yielded(s, id, model = OFFLINE_MODEL) {
  s.send(initTool);
  const { progress, end } = await s.turn();
  assert.deepEqual(progress, [modelCall(model), progressOf({ type: 'text', text: 'Calling getLocation.' })]);
  const callId = isGetLocationYield(end, id);
  return { callId, yield: end };
}

// resumed reads the turn a resume with Lisbon continues: the model call, its text, the
// surface showing the answer, then done.
async function resumed(s) {
  const { progress, end } = await s.turn();
  assert.deepEqual(progress[0], modelCall(OFFLINE_MODEL));
  assert.deepEqual(progress[1], progressOf({ type: 'text', text: 'Here is what the client returned.' }));
  assert.equal(progress.length, 3);
  assert.equal(progress[2].effect.event.type, 'toolRequest');
  assert.match(JSON.stringify(progress[2]), /getLocation returned city: Lisbon/);
  isDone(end);
  assert.deepEqual(end.result.message.content, [{ text: 'Here is what the client returned.' }]);
  return end;
}

describe('a session', () => {
  it('hears nothing before its first message; ping is answered with pong', async () => {
    const id = await startSession(GENUI_URL);
    const s = await Yield.dial(GENUI_URL, id);
    await s.silent(300);
    s.send({ type: 'ping' });
    assert.deepEqual(await s.next(), { type: 'pong' });
    await s.silent(100);
    await s.close();
  });

  it('yields a client tool, resumes with its result, ends with done, and stays open for the next init', async () => {
    const id = await startSession(GENUI_URL);
    const s = await Yield.dial(GENUI_URL, id);
    s.send(initTool);
    const { progress, end } = await s.turn();
    // The model call, then each event of its output as /generateUi streams it.
    assert.deepEqual(progress[0], modelCall(OFFLINE_MODEL));
    const lines = await ndjson(GENUI_URL, '/generateUi', { sessionId: id, ...initTool.input });
    assert.deepEqual(lines.map((l) => l.type), ['text', 'toolCall', 'result']);
    assert.deepEqual(events(progress), [lines[0]]);
    const callId = isGetLocationYield(end, id);
    // The turn waits for the client.
    await s.silent(150);

    s.send(lisbon);
    await resumed(s);
    await s.silent(100);

    // The connection stays open: the conversation goes on.
    s.send(initHello);
    const next = await s.turn();
    assert.deepEqual(next.progress[0], modelCall(OFFLINE_MODEL));
    assert.deepEqual(next.progress[1], progressOf({ type: 'text', text: 'Here is a surface for your message.' }));
    assert.match(JSON.stringify(next.progress[2]), /You said: Hello/);
    isDone(next.end);
    assert.ok(callId);
    await s.close();
  });

  it('without a client tool ends with done; its events are those of /generateA2ui', async () => {
    const id = freshID();
    const s = await Yield.dial(GENUI_URL, id);
    s.send({ type: 'init', graphId: 'generateA2ui', input: { conversation: [user('Hello!')] } });
    const { progress, end } = await s.turn();
    assert.deepEqual(progress[0], modelCall(OFFLINE_MODEL));
    const lines = await ndjson(GENUI_URL, '/generateA2ui', { conversation: [user('Hello!')] });
    assert.equal(lines.at(-1).type, 'result');
    assert.deepEqual(events(progress.slice(1)), lines.slice(0, -1));
    assert.equal(progress.length, lines.length);
    isDone(end);
    await s.close();
  });

  it('resumed with an error tells the model of it', async () => {
    const id = await startSession(GENUI_URL);
    const s = await Yield.dial(GENUI_URL, id);
    await yielded(s, id);
    s.send({ type: 'resume', result: { type: 'error', message: 'location denied' } });
    const { progress, end } = await s.turn();
    assert.match(JSON.stringify(progress), /getLocation failed: location denied/);
    isDone(end);
    await s.close();
  });

  it('yields the same effect again on a new connection after reconnect, then resumes', async () => {
    const id = await startSession(GENUI_URL);
    const first = await Yield.dial(GENUI_URL, id);
    const { yield: y } = await yielded(first, id);
    await first.close();

    const again = await Yield.dial(GENUI_URL, id);
    await again.silent(100);
    again.send({ type: 'reconnect', sessionId: id });
    assert.deepEqual(await again.next(), y); // the same callId
    await again.silent(150);
    again.send(lisbon);
    await resumed(again);
    await again.close();
  });

  it('whose connection dropped mid-turn is followed again from the turn\'s start', async () => {
    const id = freshID();
    const first = await Yield.dial(PACED_URL, id);
    first.send({ type: 'init', graphId: 'generateA2ui', input: { conversation: [user('A signup form')] } });
    const seen = [await first.next(), await first.next(), await first.next()];
    assert.deepEqual(seen[0], modelCall(PACED_MODEL));
    await first.drop();

    const again = await Yield.dial(PACED_URL, id);
    again.send({ type: 'reconnect', sessionId: id });
    const { progress, end } = await again.turn();
    isDone(end);
    // The whole turn, once: the model call, the text, the form's five A2UI messages.
    assert.deepEqual(progress.slice(0, 3), seen);
    assert.equal(progress.length, 7);
    const msgs = a2ui(events(progress));
    assert.equal(msgs.length, 5);
    assert.deepEqual(msgs.at(-1).updateComponents.components.map((c) => c.id).sort(), ['root', 'submit', 'submit-label']);
    await again.close();
  });

  it('whose connection dropped mid-turn, reconnected after the turn ended, gets the whole turn, then done', async () => {
    const id = freshID();
    const first = await Yield.dial(PACED_URL, id);
    first.send({ type: 'init', graphId: 'generateA2ui', input: { conversation: [user('A signup form')] } });
    const seen = [await first.next(), await first.next()];
    await first.drop();
    await sleep(1500); // the turn (about 800 ms) ends with no connection; the session is kept
    const again = await Yield.dial(PACED_URL, id);
    again.send({ type: 'reconnect', sessionId: id });
    const { progress, end } = await again.turn();
    isDone(end);
    assert.deepEqual(progress.slice(0, 2), seen);
    assert.equal(progress.length, 7);
    // Nothing waits now.
    again.send({ type: 'reconnect', sessionId: id });
    isFatal(await again.next(), 'reconnect: the session waits for no effect (not suspended): send init');
    await again.close();
  });

  it('answers ping during a running turn, and refuses other messages then, recoverably', async () => {
    const id = freshID();
    const s = await Yield.dial(PACED_URL, id);
    s.send({ type: 'init', graphId: 'generateA2ui', input: { conversation: [user('A signup form')] } });
    const got = [await s.next(), await s.next()];
    s.send({ type: 'ping' });
    s.send({ type: 'init', graphId: 'generateA2ui', input: { conversation: [user('Another')] } });
    s.send(lisbon);
    const busy = { type: 'error', message: 'a turn of the session is running: wait for its yield, done or error', recoverable: true, sessionId: id };
    const { msg: done, before } = await s.until((m) => m.type === 'done');
    got.push(...before);
    isDone(done);
    const others = got.filter((m) => m.type !== 'progress');
    assert.deepEqual(others, [{ type: 'pong' }, busy, busy]);
    // The pong came while the turn ran: progress followed it.
    assert.ok(got.findIndex((m) => m.type === 'pong') < got.length - 1);
    const progress = got.filter((m) => m.type === 'progress');
    assert.deepEqual(progress[0], modelCall(PACED_MODEL));
    assert.equal(progress.length, 7);
    await s.silent(100);
    s.send({ type: 'ping' });
    assert.deepEqual(await s.next(), { type: 'pong' });
    await s.close();
  });

  it('of /ws is continued here: the waiting call is yielded, resumed, and ends with done', async () => {
    const rpc = await RPC.dial(GENUI_URL);
    const sid = await rpc.newSession({ clientTools: [GET_LOCATION] });
    rpc.request('prompt', { session_id: sid, prompt: [{ type: 'text', text: WHERE_AM_I }] });
    const { msg: req } = await rpc.until((m) => m.method === 'client_tool');
    // While /ws holds it, init here is refused.
    const s = await Yield.dial(GENUI_URL, sid);
    s.send({ type: 'init', graphId: 'generateA2ui', input: { conversation: [user('Hello')] } });
    isFatal(await s.next(), 'the session is attached to another connection; reconnect to take it over');
    // reconnect takes it over.
    s.send({ type: 'reconnect', sessionId: sid });
    const y = await s.next();
    assert.equal(isGetLocationYield(y, sid), req.params.call_id);
    await rpc.silent(100); // the /ws connection hears nothing of it
    s.send(lisbon);
    const { progress, end } = await s.turn();
    isDone(end);
    const msgs = a2ui(events(progress));
    assert.match(JSON.stringify(msgs), /getLocation returned city: Lisbon/);
    await Promise.all([s.close(), rpc.close()]);
  });
});

describe('expiry', { concurrency: true }, () => {
  it('a reconnect after the window is an error, not recoverable', async () => {
    const id = await startSession(EXPIRY_URL);
    const first = await Yield.dial(EXPIRY_URL, id);
    await yielded(first, id);
    const since = Date.now();
    await first.close();
    // Within the window: the same yield.
    const within = await Yield.dial(EXPIRY_URL, id);
    within.send({ type: 'reconnect', sessionId: id });
    isGetLocationYield(await within.next(), id);
    await within.close();
    await sleep(EXPIRY_WINDOW_MS + 300 - (Date.now() - since));
    const late = await Yield.dial(EXPIRY_URL, id);
    late.send({ type: 'reconnect', sessionId: id });
    isFatal(await late.next(), 'reconnect: the session is unknown or expired');
    await late.close();
  });

  it('a resume after the window, on the connection that waited, is an error, not recoverable', async () => {
    const id = await startSession(EXPIRY_URL);
    const s = await Yield.dial(EXPIRY_URL, id);
    await yielded(s, id);
    await sleep(EXPIRY_WINDOW_MS + 300);
    s.send(lisbon);
    isFatal(await s.next(), `resume: the session expired: it waited longer than ${EXPIRY_WINDOW_MS / 1000}s`);
    s.send({ type: 'reconnect', sessionId: id });
    isFatal(await s.next(), 'reconnect: the session is unknown or expired');
    await s.close();
  });
});

describe("seed 004's error table", () => {
  it('answers each error with recoverable false, and the connection goes on', async () => {
    const id = await startSession(GENUI_URL);
    const s = await Yield.dial(GENUI_URL, id);
    const table = [
      // Invalid JSON.
      ['nope', /^invalid JSON: /],
      ['{"type":"init"', /^invalid JSON: /],
      ['[]', /^invalid JSON: /],
      // Unknown message type.
      ['{"type":"launch"}', 'type: unknown message type "launch": send "init", "resume", "reconnect" or "ping"'],
      ['{}', 'type: required: "init", "resume", "reconnect" or "ping"'],
      // Invalid or empty graph id.
      [{ type: 'init', graphId: 'TestGraph', input: {} }, 'graphId: unknown graph "TestGraph": "generateUi" or "generateA2ui"'],
      [{ type: 'init', graphId: '', input: {} }, 'graphId: required: "generateUi" or "generateA2ui"'],
      [{ type: 'init', input: {} }, 'graphId: required: "generateUi" or "generateA2ui"'],
      // A bad input, naming the field.
      [{ type: 'init', graphId: 'generateUi' }, 'input: required: the generateUi request, a JSON object'],
      [{ type: 'init', graphId: 'generateUi', input: { catalog: 5, conversation: [user('Hi')] } }, 'input.catalog: got number, want object'],
      [{ type: 'init', graphId: 'generateUi', input: { conversation: [{ role: 'user', parts: [{ type: 'text', text: 5 }] }] } }, 'input.conversation[0].parts[0].text: got number, want string'],
      // A resume with nothing waiting, or no result.
      [lisbon, 'resume: the session is unknown or expired'],
      [{ type: 'resume' }, 'result: required: {"type":"success","value":…} or {"type":"error","message":"…"}'],
      [{ type: 'resume', result: { type: 'maybe' } }, 'result.type: must be "success" or "error"'],
      // A reconnect with another session's id, or none.
      [{ type: 'reconnect', sessionId: 'another-session-1' }, `sessionId: not the session of this path (/session/${id})`],
      [{ type: 'reconnect' }, 'sessionId: required: the sessionId of the last yield or error'],
    ];
    for (const [msg, want] of table) {
      s.send(msg);
      isFatal(await s.next(), want);
    }
    s.ws.send(Buffer.from('{"type":"ping"}'), { binary: true });
    isFatal(await s.next(), 'messages are JSON text frames, not binary');

    // After all that, the session works.
    s.send(initHello);
    isDone((await s.turn()).end);
    // Nothing waits now: resume and reconnect say so.
    s.send(lisbon);
    isFatal(await s.next(), 'resume: the session waits for no effect (not suspended): send init');
    s.send({ type: 'reconnect', sessionId: id });
    isFatal(await s.next(), 'reconnect: the session waits for no effect (not suspended): send init');
    s.send({ type: 'ping' });
    assert.deepEqual(await s.next(), { type: 'pong' });
    await s.close();
  });

  it('refuses an invalid id with HTTP 400 before the upgrade, and a plain GET with 426', async () => {
    for (const bad of ['short', 'x'.repeat(129), 'bad%20id-123']) {
      const r = await refused(wsURL(GENUI_URL, `/session/${bad}`));
      assert.equal(r.status, 400, bad);
      assert.equal(r.headers['content-type'], 'application/json');
      assert.deepEqual(JSON.parse(r.body), { error: { status: 'INVALID_ARGUMENT', message: 'id: the session id in /session/{id} must be 8 to 128 characters of A-Z a-z 0-9 . _ -' } });
    }
    const plain = await fetch(`${GENUI_URL}/session/valid-id-123`);
    assert.equal(plain.status, 426);
    assert.equal(plain.headers.get('content-type'), 'application/json');
    assert.equal(plain.headers.get('upgrade'), 'websocket');
    assert.deepEqual(await plain.json(), { error: { status: 'FAILED_PRECONDITION', message: '/session/{id} is a WebSocket endpoint: connect with a WebSocket client and send {"type":"init",…}' } });
    const ws = await fetch(`${GENUI_URL}/ws`);
    assert.equal(ws.status, 426);
    assert.equal(ws.headers.get('content-type'), 'application/json');
    assert.deepEqual(await ws.json(), { error: { status: 'FAILED_PRECONDITION', message: '/ws is a WebSocket endpoint of JSON-RPC 2.0: connect with a WebSocket client' } });
  });
});
