// The ws package against GET /ws and GET /session/{id} with authentication: an upgrade
// without a valid credential is refused with 401 before it happens; a key in the
// access_token query parameter (what a browser can send) or in a header (what ws's
// headers option sends) opens the connection; and one caller's sessions are, to
// another, exactly what an unknown id is.
//
//   GENUI_URL=… GENUI_CATALOG_FILE=… GENUI_ALICE_KEY=… GENUI_BOB_KEY=… node --test auth.test.mjs
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import {
  GENUI_URL, GET_LOCATION, RPC, WHERE_AM_I, Yield, basicCatalog, checkUpdates, isError, isFatal,
  isGetLocationYield, promptTurn, requireServers, sleep, track, uiEvents, wsURL,
} from './common.mjs';

requireServers(GENUI_URL);
const ALICE = process.env.GENUI_ALICE_KEY ?? '';
const BOB = process.env.GENUI_BOB_KEY ?? '';
assert.ok(ALICE && BOB && ALICE !== BOB, 'GENUI_ALICE_KEY and GENUI_BOB_KEY must be two API keys');

const NO_CREDENTIALS = 'credentials required: send Authorization: Bearer <key or token>, or X-API-Key';
const UNKNOWN_KEY = 'invalid credentials: unknown API key';
const refusal = (message, field = 'Authorization') => ({ error: { status: 'UNAUTHENTICATED', message, details: { field } } });
const CHALLENGE = 'Bearer realm="genui"';
const BAD_TOKEN = 'Bearer realm="genui", error="invalid_token"';

const text = (t) => [{ type: 'text', text: t }];
const user = (t) => ({ role: 'user', parts: text(t) });
const query = (key) => `?access_token=${encodeURIComponent(key)}`;
const bearer = (key) => ({ headers: { Authorization: `Bearer ${key}` } });
const NOT_FOUND = (sid) => `session not found: "${sid}" is unknown, expired, closed or another connection's`;

// dial opens a connection of class cls (RPC or Yield) to url with ws's options.
function dial(cls, url, options) {
  return new Promise((resolve, reject) => {
    const ws = track(new WebSocket(url, options));
    const s = new cls(ws);
    ws.once('open', () => resolve(s));
    ws.once('error', reject);
    ws.once('unexpected-response', (_, res) => reject(new Error(`${url}: HTTP ${res.statusCode}`)));
  });
}
const rpc = (key, how = 'query') =>
  how === 'query' ? dial(RPC, wsURL(GENUI_URL, `/ws${query(key)}`)) : dial(RPC, wsURL(GENUI_URL, '/ws'), bearer(key));
async function session(id, key, how = 'query') {
  const s = await (how === 'query'
    ? dial(Yield, wsURL(GENUI_URL, `/session/${id}${query(key)}`))
    : dial(Yield, wsURL(GENUI_URL, `/session/${id}`), bearer(key)));
  s.id = id;
  return s;
}

// refused opens a WebSocket that the server refuses before the upgrade, and returns the
// response as ws's unexpected-response event hands it over.
function refused(url, options) {
  return new Promise((resolve, reject) => {
    const ws = track(new WebSocket(url, options));
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

// isRefused checks a refusal: 401, the challenge, and the JSON error.
function isRefused(r, challenge, message, field = 'Authorization') {
  assert.equal(r.status, 401);
  assert.equal(r.headers['www-authenticate'], challenge);
  assert.equal(r.headers['content-type'], 'application/json');
  assert.deepEqual(JSON.parse(r.body), refusal(message, field));
}

// startSession starts a genui session as the caller of key and returns its id.
async function startSession(key) {
  const res = await fetch(`${GENUI_URL}/startSession`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${key}` },
    body: JSON.stringify({ data: { protocolVersion: '0.1.0', catalog: basicCatalog() } }),
  });
  assert.equal(res.status, 200);
  return (await res.json()).result;
}

describe('an upgrade without a valid credential', () => {
  it('to /ws is refused with 401 before the upgrade', async () => {
    const url = wsURL(GENUI_URL, '/ws');
    isRefused(await refused(url), CHALLENGE, NO_CREDENTIALS);
    isRefused(await refused(url + query('not-a-key-0123456789')), BAD_TOKEN, UNKNOWN_KEY, 'access_token');
    isRefused(await refused(url, bearer('not-a-key-0123456789')), BAD_TOKEN, UNKNOWN_KEY);
    isRefused(await refused(url, { headers: { 'X-API-Key': ALICE.slice(0, -1) } }), BAD_TOKEN, UNKNOWN_KEY, 'X-API-Key');
    isRefused(await refused(url, { headers: { Authorization: `Basic ${Buffer.from(`alice:${ALICE}`).toString('base64')}` } }),
      BAD_TOKEN, 'invalid credentials: the Authorization scheme must be Bearer');
    // A header is the credential when there is one, even beside a good access_token.
    isRefused(await refused(url + query(ALICE), bearer('not-a-key-0123456789')), BAD_TOKEN, UNKNOWN_KEY);
  });

  it('fails as ws reports it to a client that listens for errors only', async () => {
    const err = await new Promise((resolve, reject) => {
      const ws = track(new WebSocket(wsURL(GENUI_URL, '/ws')));
      ws.once('open', () => reject(new Error('the upgrade succeeded')));
      ws.once('error', resolve);
    });
    assert.equal(err.message, 'Unexpected server response: 401');
  });

  it('to /session/{id} is refused with 401 before the upgrade', async () => {
    const url = wsURL(GENUI_URL, '/session/abcdefgh-1234');
    isRefused(await refused(url), CHALLENGE, NO_CREDENTIALS);
    isRefused(await refused(url + query(`${BOB}x`)), BAD_TOKEN, UNKNOWN_KEY, 'access_token');
    // Credentials come before the id's checks: a bad id is a 401 too.
    isRefused(await refused(wsURL(GENUI_URL, '/session/short')), CHALLENGE, NO_CREDENTIALS);
  });

  it('of HTTP: the query parameter counts only on an upgrade', async () => {
    const res = await fetch(`${GENUI_URL}/ws${query(ALICE)}`);
    assert.equal(res.status, 401);
    assert.deepEqual(await res.json(), refusal(NO_CREDENTIALS));
    // With the key in a header it gets past the guard, to the endpoint's own answer.
    assert.equal((await fetch(`${GENUI_URL}/ws`, { headers: { 'X-API-Key': ALICE } })).status, 426);
  });
});

describe('/ws with a key', () => {
  for (const how of ['query', 'header']) {
    it(`in the ${how === 'query' ? 'access_token query parameter' : 'Authorization header'}: initialize, new_session, a prompt to its end`, async () => {
      const c = await rpc(ALICE, how);
      const init = await c.result('initialize', { protocol_version: 1 });
      assert.equal(init.protocol_version, 1);
      assert.equal(init.agent_info.name, 'genui');
      const sid = await c.newSession({ cwd: '/tmp', mcp_servers: [] });
      const { updates, result } = await promptTurn(c, sid, 'Hello!');
      assert.deepEqual(result, { stop_reason: 'end_turn' });
      assert.deepEqual(updates[0], { type: 'agent_message_chunk', chunk: 'Here is a surface for your message.\n' });
      assert.equal(uiEvents(updates)[0].createSurface.surfaceId, 'surface-1');
      assert.match(JSON.stringify(uiEvents(updates)), /You said: Hello!/);
      await c.close();
    });
  }

  it("as bob, finds alice's waiting session exactly as an unknown one (-32001), and leaves it to her", async () => {
    // Alice's session waits for getLocation when her connection drops.
    const a = await rpc(ALICE, 'query');
    const sid = await a.newSession({ clientTools: [GET_LOCATION] });
    a.request('prompt', { session_id: sid, prompt: text(WHERE_AM_I) });
    const { msg: req } = await a.until((m) => m.method === 'client_tool');
    await a.drop();
    await sleep(100);

    const b = await rpc(BOB, 'header');
    const unknown = 'abcdefgh-unknown-1';
    for (const [method, params] of [
      ['load_session', (s) => ({ session_id: s, cwd: '/tmp', mcp_servers: [] })],
      ['resume_session', (s) => ({ session_id: s })],
      ['prompt', (s) => ({ session_id: s, prompt: text('mine now') })],
      ['cancel', (s) => ({ session_id: s })],
      ['session/load', (s) => ({ sessionId: s })],
    ]) {
      const answers = [];
      for (const s of [unknown, sid]) {
        const id = b.request(method, params(s));
        const { res, before } = await b.response(id);
        assert.deepEqual(before, []);
        isError(res, id, -32001, { message: NOT_FOUND(s) });
        assert.deepEqual(res.error.data, { status: 'NOT_FOUND', session_id: s });
        answers.push(JSON.stringify(res).replaceAll(s, '<id>').replace(/"id":\d+/, ''));
      }
      assert.equal(answers[1], answers[0], `${method}: alice's session and an unknown one differ`);
    }
    assert.deepEqual(await b.result('list_sessions', {}), { sessions: [] });

    // Alice, with her key in the header now, loads it: the same request, and the turn
    // goes on with her answer.
    const a2 = await rpc(ALICE, 'header');
    const load = await a2.reattach({ session_id: sid });
    const again = await a2.nextRaw();
    assert.deepEqual(again.msg, req);
    a2.send({ jsonrpc: '2.0', id: again.msg.id, result: { city: 'Lisbon' } });
    const { res, before } = await a2.response(load);
    assert.deepEqual(res.result, { stop_reason: 'end_turn' });
    assert.match(JSON.stringify(uiEvents(checkUpdates(before, sid))), /getLocation returned city: Lisbon/);
    // Bob heard nothing of it.
    await b.silent(100);
    await Promise.all([a2.close(), b.close()]);
  });

  it("as bob, cannot start a session on alice's startSession id (-32001, as an unknown id)", async () => {
    const sid = await startSession(ALICE);
    const b = await rpc(BOB, 'query');
    const answers = [];
    for (const s of ['abcdefgh-unknown-2', sid]) {
      const id = b.request('new_session', { sessionId: s });
      const { res } = await b.response(id);
      isError(res, id, -32001);
      answers.push(JSON.stringify(res).replaceAll(s, '<id>').replace(/"id":\d+/, ''));
    }
    assert.equal(answers[1], answers[0]);
    await b.close();
    // Alice can: its turns are genui turns, of the startSession session's catalog.
    const a = await rpc(ALICE, 'query');
    const mine = await a.newSession({ sessionId: sid });
    const { updates, result } = await promptTurn(a, mine, 'Hello!');
    assert.deepEqual(result, { stop_reason: 'end_turn' });
    assert.equal(uiEvents(updates)[0].type, 'toolRequest');
    await a.close();
  });
});

describe('/session/{id} with a key', () => {
  const initTool = { type: 'init', graphId: 'generateUi', input: { conversation: [user(WHERE_AM_I)], clientTools: [GET_LOCATION] } };

  it('in the access_token query parameter: init, yield, resume, done', async () => {
    const id = await startSession(ALICE);
    const s = await session(id, ALICE, 'query');
    s.send(initTool);
    const { end } = await s.turn();
    isGetLocationYield(end, id);
    s.send({ type: 'resume', result: { type: 'success', value: { city: 'Porto' } } });
    const done = await s.turn();
    assert.equal(done.end.type, 'done', JSON.stringify(done.end));
    assert.match(JSON.stringify(done.progress), /getLocation returned city: Porto/);
    await s.close();
  });

  it("as bob, finds alice's waiting session exactly as an unknown one, and leaves it to her", async () => {
    const id = await startSession(ALICE);
    const first = await session(id, ALICE, 'header');
    first.send(initTool);
    const { end: y } = await first.turn();
    isGetLocationYield(y, id);
    await first.drop();
    await sleep(100);

    // Each of bob's messages gets, on alice's id, what it gets on an id that never was.
    for (const sid of ['abcdefgh-never-1', id]) {
      const b = await session(sid, BOB, 'query');
      b.send({ type: 'reconnect', sessionId: sid });
      isFatal(await b.next(), 'reconnect: the session is unknown or expired');
      b.send({ type: 'resume', result: { type: 'success', value: { city: 'Paris' } } });
      isFatal(await b.next(), 'resume: the session is unknown or expired');
      b.send({ type: 'init', graphId: 'generateUi', input: { conversation: [user('Hello')] } });
      isFatal(await b.next(), "input.catalog: give a catalog or a sessionId (the path's id is no session of startSession)");
      await b.silent(50);
      await b.close();
    }

    // Alice reconnects: the same yield, then her answer ends the turn.
    const again = await session(id, ALICE, 'query');
    again.send({ type: 'reconnect', sessionId: id });
    assert.deepEqual(await again.next(), y);
    again.send({ type: 'resume', result: { type: 'success', value: { city: 'Lisbon' } } });
    const { progress, end } = await again.turn();
    assert.equal(end.type, 'done', JSON.stringify(end));
    assert.match(JSON.stringify(progress), /getLocation returned city: Lisbon/);
    await again.close();
  });

  it('startSession needs the key too', async () => {
    const res = await fetch(`${GENUI_URL}/startSession`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ data: { protocolVersion: '0.1.0', catalog: basicCatalog() } }),
    });
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('www-authenticate'), CHALLENGE);
    assert.deepEqual(await res.json(), refusal(NO_CREDENTIALS));
  });
});
