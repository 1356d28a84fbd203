// The ws package against GET /ws (JSON-RPC 2.0 sessions): seed 003's example clients,
// sessions of many clients and of one connection, every error code, batches, cancel,
// ACP's names, client tools across a reconnect, expiry and limits.
//
//   GENUI_URL=… GENUI_PACED_URL=… GENUI_EXPIRY_URL=… GENUI_LIMITS_URL=… node --test ws.test.mjs
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import {
  BASIC_CATALOG, EXPIRY_URL, EXPIRY_WINDOW_MS, GENUI_URL, GET_LOCATION, LIMITS_URL, PACED_URL, RPC, WHERE_AM_I,
  basicCatalog, captureA2UI, checkUpdates, isError, keepUpdate, ndjson, promptTurn, requireServers, sleep, texts,
  track, uiEvents, wsURL,
} from './common.mjs';

requireServers(GENUI_URL, PACED_URL, EXPIRY_URL, LIMITS_URL);
captureA2UI('ws');

// What initialize answers in seed 003's spelling.
const INITIALIZED = {
  protocol_version: 1,
  agent_capabilities: {
    load_session: true,
    prompt_capabilities: { image: true, embedded_context: true },
    client_tools: true,
    ui: ['genui', 'a2ui/v0.8', 'a2ui/v0.9'],
  },
  agent_info: { name: 'genui', title: 'GenUI server', version: '1.0.0' },
};

const UNKNOWN = 'abcdefgh-unknown-1';
const text = (t) => [{ type: 'text', text: t }];

const withTimeout = (p, ms, what) =>
  Promise.race([p, sleep(ms).then(() => assert.fail(`${what}: nothing within ${ms} ms`))]);

// The A2UI lines /generateA2ui streams for a first message of text t: what a fresh
// session's first prompt must send as its updates.
async function a2uiLines(t, version) {
  const lines = await ndjson(GENUI_URL, '/generateA2ui', { ...(version ? { version } : {}), conversation: [{ role: 'user', parts: text(t) }] });
  assert.equal(lines.at(-1).type, 'result');
  return lines.slice(0, -1);
}

// updatesAsLines maps updates to the NDJSON lines they stand for.
const updatesAsLines = (updates) =>
  updates.map((u) => (u.type === 'agent_message_chunk' ? { type: 'text', text: u.chunk } : u.event));

describe('seed 003', () => {
  it('runs the JavaScript example client verbatim: initialize, new_session, prompt', async () => {
    const logged = [];
    const received = [];
    let client;
    const finished = new Promise((resolve, reject) => {
      // The example logs with console.log; the test keeps what it logs.
      const console = { log: (...args) => logged.push(args) };

      // ---- seed 003, "Example Client (JavaScript)", with the test server's URL ----
      const ws = new WebSocket(wsURL(GENUI_URL, '/ws'));

      let requestId = 0;

      function sendRequest(method, params) {
        const id = ++requestId;
        ws.send(JSON.stringify({
          jsonrpc: '2.0',
          id,
          method,
          params
        }));
        return id;
      }

      ws.onopen = () => {
        // Initialize
        sendRequest('initialize', { protocol_version: 1 });
      };

      ws.onmessage = (event) => {
        const msg = JSON.parse(event.data);

        if (msg.method === 'session_update') {
          // Notification from server
          console.log('Update:', msg.params);
        } else if (msg.result) {
          // Response to request
          console.log('Result:', msg.result);

          if (msg.id === 1) {
            // After initialize, create session
            sendRequest('new_session', { cwd: '/tmp', mcp_servers: [] });
          } else if (msg.id === 2) {
            // After new_session, send prompt
            const sessionId = msg.result.session_id;
            sendRequest('prompt', {
              session_id: sessionId,
              prompt: [{ type: 'text', text: 'Hello!' }]
            });
          }
        }
      };
      // ---- end of the example ----

      client = track(ws);
      ws.addEventListener('message', (event) => {
        const msg = JSON.parse(event.data);
        received.push(msg);
        keepUpdate(msg);
        if (msg.id === 3) resolve();
      });
      ws.addEventListener('error', reject);
    });
    await withTimeout(finished, 5000, 'the example');
    client.close();

    // Everything the server sent was logged, in order: the two results, the updates of
    // the prompt, its result.
    assert.equal(logged.length, received.length);
    assert.deepEqual(logged[0], ['Result:', INITIALIZED]);
    assert.equal(logged[1][0], 'Result:');
    const sid = logged[1][1].session_id;
    assert.deepEqual(logged[1][1], { session_id: sid });
    assert.deepEqual(logged.at(-1), ['Result:', { stop_reason: 'end_turn' }]);
    const updates = logged.slice(2, -1);
    assert.ok(updates.length > 1);
    for (const [label] of updates) assert.equal(label, 'Update:');
    const ups = checkUpdates(received.slice(2, -1), sid);
    assert.deepEqual(updates.map(([, params]) => params.update), ups);
    assert.deepEqual(updatesAsLines(ups), await a2uiLines('Hello!'));
    assert.match(JSON.stringify(uiEvents(ups)), /You said: Hello!/);
  });

  it("runs the Python example's flow: the prompt's updates, then the result with id 3", async () => {
    const websocket = await RPC.dial(GENUI_URL);
    // Initialize
    websocket.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocol_version: 1 } });
    let response = await websocket.next();
    assert.deepEqual(response, { jsonrpc: '2.0', id: 1, result: INITIALIZED });
    // Create session
    websocket.send({ jsonrpc: '2.0', id: 2, method: 'new_session', params: { cwd: '/tmp', mcp_servers: [] } });
    response = await websocket.next();
    const session_id = response.result.session_id;
    assert.deepEqual(response, { jsonrpc: '2.0', id: 2, result: { session_id } });
    // Send prompt
    websocket.send({
      jsonrpc: '2.0', id: 3, method: 'prompt',
      params: { session_id, prompt: [{ type: 'text', text: 'Hello!' }] },
    });
    // Receive updates and response
    const notifications = [];
    let done;
    for (;;) {
      const msg = await websocket.next();
      if ('method' in msg && msg.method === 'session_update') {
        notifications.push(msg);
      } else if ('result' in msg && msg.id === 3) {
        done = msg;
        break;
      } else {
        assert.fail(`neither an update nor the result: ${JSON.stringify(msg)}`);
      }
    }
    assert.deepEqual(done, { jsonrpc: '2.0', id: 3, result: { stop_reason: 'end_turn' } });
    const ups = checkUpdates(notifications, session_id);
    // Model text is agent_message_chunk, every UI event a ui_update whose event is the
    // line /generateA2ui streams for it.
    assert.deepEqual(ups[0], { type: 'agent_message_chunk', chunk: 'Here is a surface for your message.\n' });
    for (const u of ups.slice(1)) assert.deepEqual(Object.keys(u), ['type', 'event']);
    assert.deepEqual(updatesAsLines(ups), await a2uiLines('Hello!'));
    assert.deepEqual(uiEvents(ups)[0], { version: 'v0.9', createSurface: { catalogId: BASIC_CATALOG, surfaceId: 'surface-1' } });
    await websocket.silent(100);
    await websocket.close();
  });
});

describe('sessions', () => {
  it('carry only the new content: a second prompt continues the conversation', async () => {
    const rpc = await RPC.dial(GENUI_URL);
    const sid = await rpc.newSession();
    const one = await promptTurn(rpc, sid, 'Hello!');
    const two = await promptTurn(rpc, sid, 'And again');
    assert.deepEqual(one.result, { stop_reason: 'end_turn' });
    assert.deepEqual(two.result, { stop_reason: 'end_turn' });
    // The second turn made a surface of its own, the conversation's second.
    assert.equal(uiEvents(two.updates)[0].createSurface.surfaceId, 'surface-2');
    assert.match(JSON.stringify(uiEvents(two.updates)), /You said: And again/);
    await rpc.close();
  });

  it('of a genui catalog send the events of /generateUi', async () => {
    const rpc = await RPC.dial(GENUI_URL);
    const catalog = basicCatalog();
    const sid = await rpc.newSession({ catalog });
    const { updates, result } = await promptTurn(rpc, sid, 'Hello!');
    assert.deepEqual(result, { stop_reason: 'end_turn' });
    const lines = await ndjson(GENUI_URL, '/generateUi', { catalog, conversation: [{ role: 'user', parts: text('Hello!') }] });
    assert.deepEqual(updatesAsLines(updates), lines.slice(0, -1));
    assert.equal(uiEvents(updates)[0].type, 'toolRequest');
    await rpc.close();
  });

  it('of A2UI v0.8 send the A2UI v0.8 messages of /generateA2ui', async () => {
    const rpc = await RPC.dial(GENUI_URL);
    const sid = await rpc.newSession({ a2uiVersion: 'v0.8' });
    const { updates, result } = await promptTurn(rpc, sid, 'Hello!');
    assert.deepEqual(result, { stop_reason: 'end_turn' });
    assert.deepEqual(updatesAsLines(updates), await a2uiLines('Hello!', 'v0.8'));
    assert.ok(uiEvents(updates).some((e) => e.beginRendering), 'no beginRendering');
    await rpc.close();
  });

  it('map the content blocks of a prompt to the user message', async () => {
    const rpc = await RPC.dial(GENUI_URL);
    const sid = await rpc.newSession();
    const id = rpc.request('prompt', { session_id: sid, prompt: [
      { type: 'text', text: 'See' },
      { type: 'resource_link', uri: 'https://example.com/a.txt', name: 'a.txt' },
      { type: 'resource', resource: { uri: 'file:///b.txt', text: 'the text of b' } },
    ] });
    const { res, before } = await rpc.response(id);
    assert.deepEqual(res.result, { stop_reason: 'end_turn' });
    const events = uiEvents(checkUpdates(before, sid));
    assert.match(JSON.stringify(events), /You said: See\\n\[a\.txt\]\(https:\/\/example\.com\/a\.txt\)\\nthe text of b/);
    await rpc.close();
  });

  it('of two clients on two connections never reach the other client', async () => {
    const [a, b] = await Promise.all([RPC.dial(PACED_URL), RPC.dial(PACED_URL)]);
    const [sa, sb] = await Promise.all([a.newSession(), b.newSession()]);
    assert.notEqual(sa, sb);
    // Both prompts run at once.
    const pa = a.request('prompt', { session_id: sa, prompt: text('A signup form') });
    const pb = b.request('prompt', { session_id: sb, prompt: text('A signup form') });
    // While b's turn runs, a cannot use b's session, whatever the method.
    const { msg: firstB, before: early } = await b.until((m) => m.method === 'session_update');
    assert.deepEqual(early, []);
    const seenA = [];
    for (const [method, params] of [
      ['prompt', { session_id: sb, prompt: text('mine now') }],
      ['load_session', { session_id: sb }],
      ['resume_session', { session_id: sb }],
      ['cancel', { session_id: sb }],
      ['session/prompt', { sessionId: sb, prompt: text('mine now') }],
      ['session/load', { sessionId: sb }],
      ['session/cancel', { sessionId: sb }],
    ]) {
      const id = a.request(method, params);
      const { res, before } = await a.response(id);
      seenA.push(...before);
      isError(res, id, -32001, { message: `session not found: "${sb}" is unknown, expired, closed or another connection's` });
      assert.deepEqual(res.error.data, { status: 'NOT_FOUND', session_id: sb });
    }
    const ra = await a.response(pa);
    const rb = await b.response(pb);
    assert.deepEqual(ra.res.result, { stop_reason: 'end_turn' });
    assert.deepEqual(rb.res.result, { stop_reason: 'end_turn' });
    // Each saw its own session's updates only, none lost or repeated.
    const ua = checkUpdates([...seenA, ...ra.before], sa);
    const ub = checkUpdates([firstB, ...rb.before], sb);
    assert.equal(ua.length, 6);
    assert.deepEqual(ua, ub);
    await a.settled({ [sa]: 'idle' });
    await b.settled({ [sb]: 'idle' });
    await Promise.all([a.silent(100), b.silent(100)]);
    await Promise.all([a.close(), b.close()]);
  });

  it('of one connection run at once, their updates routed by session_id', async () => {
    const rpc = await RPC.dial(PACED_URL);
    const s1 = await rpc.newSession();
    const s2 = await rpc.newSession({ cwd: '/tmp', mcp_servers: [] });
    const p1 = rpc.request('prompt', { session_id: s1, prompt: text('A signup form') });
    const p2 = rpc.request('prompt', { session_id: s2, prompt: text('A signup form') });
    const list = await rpc.response(rpc.request('list_sessions', {}));
    const got = [...list.before];
    assert.deepEqual(list.res.result.sessions.sort((x, y) => x.session_id.localeCompare(y.session_id)),
      [{ session_id: s1, state: 'running' }, { session_id: s2, state: 'running' }].sort((x, y) => x.session_id.localeCompare(y.session_id)));
    const results = {};
    while (Object.keys(results).length < 2) {
      const m = await rpc.next();
      if (m.id === p1 || m.id === p2) results[m.id] = { at: got.length, res: m };
      else got.push(m);
    }
    assert.deepEqual(results[p1].res.result, { stop_reason: 'end_turn' });
    assert.deepEqual(results[p2].res.result, { stop_reason: 'end_turn' });
    const u1 = checkUpdates(got.filter((m) => m.params.session_id === s1), s1);
    const u2 = checkUpdates(got.filter((m) => m.params.session_id === s2), s2);
    assert.equal(u1.length + u2.length, got.length, 'an update of neither session');
    assert.deepEqual(u1, u2);
    assert.deepEqual(uiEvents(u1).at(-1).updateComponents.components.map((c) => c.id).sort(), ['root', 'submit', 'submit-label']);
    // The turns overlapped: each session had updates before the other's result.
    const firstOf = (sid) => got.findIndex((m) => m.params.session_id === sid);
    assert.ok(firstOf(s2) < results[p1].at && firstOf(s1) < results[p2].at, 'the turns ran one after the other');
    await rpc.close();
  });

  it('list the connection\'s sessions with their state', async () => {
    const rpc = await RPC.dial(GENUI_URL);
    assert.deepEqual(await rpc.result('list_sessions', {}), { sessions: [] });
    const idle = await rpc.newSession();
    const waiting = await rpc.newSession({ clientTools: [GET_LOCATION] });
    const id = rpc.request('prompt', { session_id: waiting, prompt: text(WHERE_AM_I) });
    await rpc.until((m) => m.method === 'client_tool');
    await rpc.settled({ [idle]: 'idle', [waiting]: 'waiting' });
    // ACP's spelling.
    await rpc.settled({ [idle]: 'idle', [waiting]: 'waiting' }, { acp: true });
    assert.ok(id);
    await rpc.close();
  });

  it('with nothing running are gone when their connection closes', async () => {
    const a = await RPC.dial(GENUI_URL);
    const sid = await a.newSession();
    await promptTurn(a, sid, 'Hello!');
    await a.close();
    await sleep(200);
    const b = await RPC.dial(GENUI_URL);
    for (const [method, params] of [
      ['load_session', { session_id: sid, cwd: '/tmp', mcp_servers: [] }],
      ['prompt', { session_id: sid, prompt: text('Hello?') }],
      ['session/load', { sessionId: sid }],
    ]) {
      const id = b.request(method, params);
      isError((await b.response(id)).res, id, -32001);
    }
    assert.deepEqual(await b.result('list_sessions', {}), { sessions: [] });
    await b.close();
  });
});

describe('client tools', () => {
  // ask starts a session declaring getLocation and asks where the user is: the turn's
  // text, then the client_tool request, nothing else.
  async function ask(rpc, params = {}) {
    const sid = await rpc.newSession({ clientTools: [GET_LOCATION], ...params });
    const prompt = rpc.request('prompt', { session_id: sid, prompt: text(WHERE_AM_I) });
    const first = await rpc.nextRaw();
    assert.deepEqual(checkUpdates([first.msg], sid), [{ type: 'agent_message_chunk', chunk: 'Calling getLocation.' }]);
    const req = await rpc.nextRaw();
    const callId = req.msg.params?.call_id;
    assert.ok(callId, req.raw);
    assert.deepEqual(req.msg, {
      jsonrpc: '2.0', id: `call:${callId}`, method: 'client_tool',
      params: { session_id: sid, call_id: callId, name: 'getLocation', input: {} },
    });
    await rpc.silent(150); // the prompt waits for the tool
    return { sid, prompt, req };
  }

  // answered reads the turn the answer continued, up to the response to id.
  async function answered(rpc, sid, id) {
    const { res, before } = await rpc.response(id);
    assert.deepEqual(res, { jsonrpc: '2.0', id, result: { stop_reason: 'end_turn' } });
    const ups = checkUpdates(before, sid);
    assert.deepEqual(ups[0], { type: 'agent_message_chunk', chunk: 'Here is what the client returned.\n' });
    return ups;
  }

  it('are requests to the client, whose result continues the turn', async () => {
    const rpc = await RPC.dial(GENUI_URL);
    const { sid, prompt, req } = await ask(rpc);
    rpc.send({ jsonrpc: '2.0', id: req.msg.id, result: { city: 'Lisbon' } });
    const ups = await answered(rpc, sid, prompt);
    const events = uiEvents(ups);
    assert.match(JSON.stringify(events), /getLocation returned city: Lisbon/);
    await rpc.settled({ [sid]: 'idle' });
    await rpc.close();
  });

  it('answered with an error tell the model of it', async () => {
    const rpc = await RPC.dial(GENUI_URL);
    const { sid, prompt, req } = await ask(rpc);
    rpc.send({ jsonrpc: '2.0', id: req.msg.id, error: { code: -32000, message: 'location denied' } });
    const events = uiEvents(await answered(rpc, sid, prompt));
    assert.match(JSON.stringify(events), /getLocation failed: location denied/);
    await rpc.close();
  });

  it('are requested again after a reconnect, and load_session ends with the interaction', async () => {
    const a = await RPC.dial(GENUI_URL);
    const { sid, req } = await ask(a);
    await a.drop();
    const b = await RPC.dial(GENUI_URL);
    const load = await b.reattach({ session_id: sid, cwd: '/tmp', mcp_servers: [] });
    // The same request, byte for byte, and nothing before it.
    const again = await b.nextRaw();
    assert.equal(again.raw, req.raw);
    await b.silent(150);
    assert.deepEqual(await b.result('list_sessions', {}), { sessions: [{ session_id: sid, state: 'waiting' }] });
    b.send({ jsonrpc: '2.0', id: again.msg.id, result: { city: 'Lisbon' } });
    const events = uiEvents(await answered(b, sid, load));
    assert.match(JSON.stringify(events), /getLocation returned city: Lisbon/);
    // The session goes on on the new connection.
    const next = await promptTurn(b, sid, 'Thanks');
    assert.deepEqual(next.result, { stop_reason: 'end_turn' });
    await b.close();
  });

  it('waiting keep a second prompt and a second load of the connection off (-32004)', async () => {
    const rpc = await RPC.dial(GENUI_URL);
    const { sid, prompt, req } = await ask(rpc);
    const second = rpc.request('prompt', { session_id: sid, prompt: text('Hello!') });
    const { res } = await rpc.response(second);
    isError(res, second, -32004, { message: 'session busy: a prompt of the session is running or waits for its client tools; wait for its end, or cancel it' });
    assert.deepEqual(res.error.data, { status: 'ABORTED', session_id: sid });
    const load = rpc.request('load_session', { session_id: sid });
    isError((await rpc.response(load)).res, load, -32004);
    rpc.send({ jsonrpc: '2.0', id: req.msg.id, result: { city: 'Lisbon' } });
    await answered(rpc, sid, prompt);
    await rpc.close();
  });

  it('stop being waited for on cancel; the next prompt goes on', async () => {
    const rpc = await RPC.dial(GENUI_URL);
    const { sid, prompt, req } = await ask(rpc);
    const cancel = rpc.request('cancel', { session_id: sid });
    const replies = [await rpc.next(), await rpc.next()].sort((x, y) => x.id === prompt ? -1 : y.id === prompt ? 1 : 0);
    assert.deepEqual(replies, [
      { jsonrpc: '2.0', id: prompt, result: { stop_reason: 'cancelled' } },
      { jsonrpc: '2.0', id: cancel, result: {} },
    ]);
    await rpc.settled({ [sid]: 'idle' });
    // An answer that comes too late is dropped.
    rpc.send({ jsonrpc: '2.0', id: req.msg.id, result: { city: 'Lisbon' } });
    await rpc.silent(150);
    const next = await promptTurn(rpc, sid, 'Hello!');
    assert.deepEqual(next.result, { stop_reason: 'end_turn' });
    assert.doesNotMatch(JSON.stringify(next.updates), /Lisbon/);
    await rpc.close();
  });
});

describe('ACP names', () => {
  it('answer in ACP spelling: session/new, session/prompt, session/update, client_tool, stopReason', async () => {
    const rpc = await RPC.dial(GENUI_URL);
    const init = await rpc.result('initialize', { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false } } });
    assert.deepEqual(init, {
      protocolVersion: 1,
      agentCapabilities: { loadSession: true, promptCapabilities: { image: true, embeddedContext: true } },
      agentInfo: { name: 'genui', title: 'GenUI server', version: '1.0.0' },
      authMethods: [],
    });
    const created = await rpc.result('session/new', { cwd: '/tmp', mcpServers: [], clientTools: [GET_LOCATION] });
    assert.deepEqual(Object.keys(created), ['sessionId']);
    const sid = created.sessionId;

    let id = rpc.request('session/prompt', { sessionId: sid, prompt: [{ type: 'text', text: 'Hello!' }] });
    let { res, before } = await rpc.response(id);
    assert.deepEqual(res, { jsonrpc: '2.0', id, result: { stopReason: 'end_turn' } });
    let ups = checkUpdates(before, sid, { acp: true });
    assert.deepEqual(ups[0], { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'Here is a surface for your message.\n' } });
    for (const u of ups.slice(1)) assert.deepEqual(Object.keys(u), ['sessionUpdate', 'event']);
    assert.deepEqual(ups.slice(1).map((u) => u.event), (await a2uiLines('Hello!')).slice(1));

    // A client tool, in ACP spelling.
    id = rpc.request('session/prompt', { sessionId: sid, prompt: [{ type: 'text', text: WHERE_AM_I }] });
    const { msg: req, before: first } = await rpc.until((m) => m.method === 'client_tool');
    assert.deepEqual(texts(checkUpdates(first, sid, { acp: true }), true), ['Calling getLocation.']);
    const callId = req.params.callId;
    assert.deepEqual(req, { jsonrpc: '2.0', id: `call:${callId}`, method: 'client_tool', params: { sessionId: sid, callId, name: 'getLocation', input: {} } });
    rpc.send({ jsonrpc: '2.0', id: req.id, result: { city: 'Lisbon' } });
    ({ res, before } = await rpc.response(id));
    assert.deepEqual(res, { jsonrpc: '2.0', id, result: { stopReason: 'end_turn' } });
    ups = checkUpdates(before, sid, { acp: true });
    assert.match(JSON.stringify(uiEvents(ups, true)), /getLocation returned city: Lisbon/);

    await rpc.settled({ [sid]: 'idle' }, { acp: true });
    assert.deepEqual(await rpc.result('session/load', { sessionId: sid, cwd: '/tmp', mcpServers: [] }), { sessionId: sid });
    // A missing session id is named as ACP spells it.
    id = rpc.request('session/prompt', { prompt: [{ type: 'text', text: 'Hello!' }] });
    isError((await rpc.response(id)).res, id, -32602, { field: 'params.sessionId' });
    await rpc.close();
  });

  it('session/cancel as a notification cancels the running prompt, and gets no response', async () => {
    const rpc = await RPC.dial(PACED_URL);
    const { sessionId } = await rpc.result('session/new', { cwd: '/tmp', mcpServers: [] });
    const id = rpc.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'A signup form' }] });
    const { msg: first, before } = await rpc.until((m) => m.method === 'session/update' && m.params.update.sessionUpdate === 'ui_update');
    rpc.notify('session/cancel', { sessionId });
    const { res, before: rest } = await rpc.response(id);
    assert.deepEqual(res, { jsonrpc: '2.0', id, result: { stopReason: 'cancelled' } });
    const ups = checkUpdates([...before, first, ...rest], sessionId, { acp: true });
    assert.ok(ups.length < 6, `the cancelled turn ran to its end: ${ups.length} updates`);
    await rpc.silent(300);
    await rpc.close();
  });
});

describe('cancel', () => {
  it('stops a running prompt: its result is stop_reason "cancelled", and the session goes on', async () => {
    const rpc = await RPC.dial(PACED_URL);
    const sid = await rpc.newSession();
    const prompt = rpc.request('prompt', { session_id: sid, prompt: text('A signup form') });
    const { msg: first, before } = await rpc.until((m) => m.params?.update?.type === 'ui_update');
    const busy = rpc.request('prompt', { session_id: sid, prompt: text('Another') });
    const cancel = rpc.request('cancel', { session_id: sid });
    const got = [...before, first];
    const answers = {};
    while (Object.keys(answers).length < 3) {
      const m = await rpc.next();
      if ([prompt, busy, cancel].includes(m.id)) answers[m.id] = m;
      else got.push(m);
    }
    assert.deepEqual(answers[prompt], { jsonrpc: '2.0', id: prompt, result: { stop_reason: 'cancelled' } });
    assert.deepEqual(answers[cancel], { jsonrpc: '2.0', id: cancel, result: {} });
    isError(answers[busy], busy, -32004);
    const ups = checkUpdates(got, sid);
    assert.ok(ups.length < 6, `the cancelled turn ran to its end: ${ups.length} updates`);
    await rpc.silent(300);
    // The next prompt runs in full.
    const next = await promptTurn(rpc, sid, 'A signup form');
    assert.deepEqual(next.result, { stop_reason: 'end_turn' });
    assert.equal(next.updates.length, 6);
    // Nothing runs: cancel is a no-op.
    assert.deepEqual(await rpc.result('cancel', { session_id: sid }), {});
    await rpc.close();
  });

  it('of a turn dropped mid-stream: load_session replays the rest from the durable stream', async () => {
    const a = await RPC.dial(PACED_URL);
    const sid = await a.newSession();
    a.request('prompt', { session_id: sid, prompt: text('A signup form') });
    const seen = [];
    while (seen.length < 2) seen.push(await a.next());
    await a.drop();
    const b = await RPC.dial(PACED_URL);
    const load = await b.reattach({ session_id: sid, after: 2 });
    const { res, before } = await b.response(load);
    assert.deepEqual(res, { jsonrpc: '2.0', id: load, result: { stop_reason: 'end_turn' } });
    // Nothing lost, nothing repeated: seq 1, 2 on the first connection, the rest on the
    // second.
    const ups = checkUpdates([...seen, ...before], sid);
    assert.equal(ups.length, 6);
    assert.deepEqual(uiEvents(ups).at(-1).updateComponents.components.map((c) => c.id).sort(), ['root', 'submit', 'submit-label']);
    await b.close();
  });

  it('of a turn dropped mid-stream that ended before the reconnect: load_session replays the rest, then the end', async () => {
    const a = await RPC.dial(PACED_URL);
    const sid = await a.newSession();
    a.request('prompt', { session_id: sid, prompt: text('A signup form') });
    const seen = [await a.next(), await a.next()];
    await a.drop();
    // The turn (about 800 ms) ends with no connection holding its session; the session
    // is kept for the grace period after that.
    await sleep(1500);
    const b = await RPC.dial(PACED_URL);
    const load = b.request('load_session', { session_id: sid, after: 2 });
    const { res, before } = await b.response(load);
    assert.deepEqual(res, { jsonrpc: '2.0', id: load, result: { stop_reason: 'end_turn' } });
    const ups = checkUpdates([...seen, ...before], sid);
    assert.equal(ups.length, 6);
    assert.deepEqual(uiEvents(ups).at(-1).updateComponents.components.map((c) => c.id).sort(), ['root', 'submit', 'submit-label']);
    // Replayed once: loaded again, it is idle.
    assert.deepEqual(await b.result('load_session', { session_id: sid }), { session_id: sid });
    await b.settled({ [sid]: 'idle' });
    await b.close();
  });
});

describe('seed 003\'s other methods', () => {
  it('authenticate, set_session_mode, set_session_model, fork_session', async () => {
    const rpc = await RPC.dial(GENUI_URL);
    const sid = await rpc.newSession();
    assert.deepEqual(await rpc.result('authenticate', {}), {});
    assert.deepEqual(await rpc.result('set_session_model', { session_id: sid, model_id: 'genui/offline' }), {});
    assert.deepEqual(await rpc.result('session/set_model', { sessionId: sid, modelId: 'genui/offline' }), {});
    let res = await rpc.call('set_session_model', { session_id: sid, model_id: 'gpt-9' });
    isError(res, rpc.lastID, -32602, { field: 'params.model_id', message: 'params.model_id: "gpt-9" is not a model this server lets you choose; expected one of: genui/offline' });
    res = await rpc.call('set_session_mode', { session_id: sid, mode_id: 'code' });
    isError(res, rpc.lastID, -32602, { field: 'params.mode_id', message: 'params.mode_id: unknown mode "code": this agent has no session modes' });
    res = await rpc.call('session/set_mode', { sessionId: sid, modeId: 'ask' });
    isError(res, rpc.lastID, -32602, { field: 'params.modeId' });
    res = await rpc.call('fork_session', { session_id: sid });
    isError(res, rpc.lastID, -32601, { message: "fork_session is not available: this server cannot copy a session's conversation; start a new_session" });
    assert.deepEqual(res.error.data, { status: 'UNIMPLEMENTED', session_id: sid });
    res = await rpc.call('set_session_model', { session_id: UNKNOWN, model_id: 'genui/offline' });
    isError(res, rpc.lastID, -32001);
    // The session goes on.
    assert.deepEqual((await promptTurn(rpc, sid, 'Hello!')).result, { stop_reason: 'end_turn' });
    await rpc.close();
  });
});

describe('errors', () => {
  it('-32700: a parse error answers with id null, and the connection goes on', async () => {
    const rpc = await RPC.dial(GENUI_URL);
    for (const bad of ['{"jsonrpc":"2.0","id":1,"method":"initialize"', '[{"jsonrpc":"2.0","id":1,"method":"initialize"},', 'nope']) {
      rpc.send(bad);
      const res = await rpc.next();
      isError(res, null, -32700, { message: /^parse error: / });
    }
    assert.deepEqual(await rpc.result('initialize', { protocol_version: 1 }), INITIALIZED);
    await rpc.close();
  });

  it('-32600: an invalid request', async () => {
    const rpc = await RPC.dial(GENUI_URL);
    const cases = [
      ['{"id":1,"method":"initialize","params":{}}', 1, 'invalid request: jsonrpc must be "2.0"'],
      ['{"jsonrpc":"1.0","id":2,"method":"initialize"}', 2, 'invalid request: jsonrpc must be "2.0"'],
      ['{"jsonrpc":"2.0","id":3}', 3, 'invalid request: method is missing'],
      ['{"jsonrpc":"2.0","id":4,"method":7}', 4, 'invalid request: method must be a string'],
      ['{"jsonrpc":"2.0","id":{"n":5},"method":"initialize"}', null, 'invalid request: id must be a string, a number or null'],
      ['5', null, 'invalid request: a message must be a JSON object'],
      ['[]', null, 'an empty batch: send at least one request'],
    ];
    for (const [raw, id, message] of cases) {
      rpc.send(raw);
      isError(await rpc.next(), id, -32600, { message });
    }
    // A non-object in a batch: an error in the batch's array.
    rpc.send('[1]');
    const arr = await rpc.next();
    assert.ok(Array.isArray(arr));
    assert.equal(arr.length, 1);
    isError(arr[0], null, -32600, { message: 'invalid request: a message must be a JSON object' });
    // A binary frame.
    rpc.ws.send(Buffer.from('{"jsonrpc":"2.0","id":9,"method":"initialize"}'), { binary: true });
    isError(await rpc.next(), null, -32600, { message: 'binary frames are not JSON-RPC: send each message as a text frame' });
    assert.deepEqual(await rpc.result('initialize', { protocol_version: 1 }), INITIALIZED);
    await rpc.close();
  });

  it('-32601: an unknown method; as a notification, no response', async () => {
    const rpc = await RPC.dial(GENUI_URL);
    rpc.notify('foo', {});
    const id = rpc.request('foo', {});
    const { res, before } = await rpc.response(id);
    assert.deepEqual(before, []);
    isError(res, id, -32601, { message: 'method not found: "foo"' });
    const id2 = rpc.request('session/fly', {});
    isError((await rpc.response(id2)).res, id2, -32601, { message: 'method not found: "session/fly"' });
    await rpc.close();
  });

  it('-32602: invalid params, the message naming the field', async () => {
    const rpc = await RPC.dial(GENUI_URL);
    const sid = await rpc.newSession();
    const cases = [
      ['prompt', { session_id: sid, prompt: [{ text: 'no type' }] }, 'params.prompt[0].type'],
      ['prompt', { session_id: sid, prompt: [{ type: 'text', text: 'a' }, { type: 'video', uri: 'x' }] }, 'params.prompt[1].type'],
      ['prompt', { session_id: sid, prompt: [{ type: 'text', text: 'a' }, { type: 'image' }] }, 'params.prompt[1].data'],
      ['prompt', { session_id: sid, prompt: [{ type: 'resource', resource: { uri: 'file:///x' } }] }, 'params.prompt[0].resource'],
      ['prompt', { session_id: sid, prompt: [] }, 'params.prompt'],
      ['prompt', { prompt: [{ type: 'text', text: 'a' }] }, 'params.session_id'],
      ['load_session', {}, 'params.session_id'],
      ['load_session', { session_id: 5 }, 'params.session_id'],
      ['cancel', { session_id: 5 }, 'params.session_id'],
      ['cancel', {}, 'params.session_id'],
      ['load_session', { session_id: sid, after: -1 }, 'params.after'],
      ['new_session', { a2uiVersion: 'v9' }, 'params.a2uiVersion'],
      ['new_session', { catalog: {} }, 'params.catalog'],
      ['new_session', { catalog: basicCatalog(), a2uiClientCapabilities: {} }, 'params.catalog'],
      ['new_session', { clientTools: [{ name: '' }] }, 'params.clientTools[0].name'],
      ['new_session', { clientTools: [{ name: 'getLocation', inputSchema: 5 }] }, 'params.clientTools[0].inputSchema'],
      ['new_session', { catalog: 5 }, 'params.catalog'],
    ];
    for (const [method, params, field] of cases) {
      const id = rpc.request(method, params);
      const { res } = await rpc.response(id);
      isError(res, id, -32602, { field });
      assert.equal(res.error.data.status, 'INVALID_ARGUMENT');
    }
    const id = rpc.request('prompt', [sid]);
    isError((await rpc.response(id)).res, id, -32602, { message: 'params: expected an object' });
    // None of them ran a turn.
    assert.deepEqual(await rpc.result('list_sessions', {}), { sessions: [{ session_id: sid, state: 'idle' }] });
    await rpc.close();
  });

  it('-32001: an unknown session', async () => {
    const rpc = await RPC.dial(GENUI_URL);
    for (const [method, params] of [
      ['prompt', { session_id: UNKNOWN, prompt: text('Hello!') }],
      ['cancel', { session_id: UNKNOWN }],
      ['load_session', { session_id: UNKNOWN }],
      ['resume_session', { session_id: UNKNOWN }],
      ['session/resume', { sessionId: UNKNOWN }],
    ]) {
      const id = rpc.request(method, params);
      const { res } = await rpc.response(id);
      isError(res, id, -32001, { message: `session not found: "${UNKNOWN}" is unknown, expired, closed or another connection's` });
      assert.deepEqual(res.error.data, { status: 'NOT_FOUND', session_id: UNKNOWN });
    }
    // A startSession session that does not exist.
    const id = rpc.request('new_session', { sessionId: UNKNOWN });
    isError((await rpc.response(id)).res, id, -32001);
    await rpc.close();
  });

  it('-32002: resume_session of a session waiting for nothing', async () => {
    const rpc = await RPC.dial(GENUI_URL);
    const sid = await rpc.newSession();
    for (const [method, params] of [['resume_session', { session_id: sid }], ['session/resume', { sessionId: sid }]]) {
      const id = rpc.request(method, params);
      const { res } = await rpc.response(id);
      isError(res, id, -32002, { message: 'session not waiting: nothing runs and it waits for no client tool; send a prompt' });
      assert.deepEqual(res.error.data, { status: 'FAILED_PRECONDITION', session_id: sid });
    }
    // load_session of the same session answers at once.
    assert.deepEqual(await rpc.result('load_session', { session_id: sid }), { session_id: sid });
    await rpc.close();
  });

  it('-32004: a second prompt on a session whose turn runs', async () => {
    const rpc = await RPC.dial(PACED_URL);
    const sid = await rpc.newSession();
    const prompt = rpc.request('prompt', { session_id: sid, prompt: text('A signup form') });
    const second = rpc.request('prompt', { session_id: sid, prompt: text('Another') });
    const { res, before } = await rpc.response(second);
    isError(res, second, -32004);
    assert.deepEqual(res.error.data, { status: 'ABORTED', session_id: sid });
    const { res: done, before: rest } = await rpc.response(prompt);
    assert.deepEqual(done.result, { stop_reason: 'end_turn' });
    assert.equal(checkUpdates([...before, ...rest], sid).length, 6);
    await rpc.close();
  });
});

describe('expiry', { concurrency: true }, () => {
  // waitingSession starts a session on the expiry server that waits for getLocation.
  async function waitingSession(rpc) {
    const sid = await rpc.newSession({ clientTools: [GET_LOCATION] });
    const prompt = rpc.request('prompt', { session_id: sid, prompt: text(WHERE_AM_I) });
    const { msg: req } = await rpc.until((m) => m.method === 'client_tool');
    return { sid, prompt, req };
  }

  it('-32003: load_session of a session that waited longer than the reconnect window', async () => {
    const rpc = await RPC.dial(EXPIRY_URL);
    const { sid, req } = await waitingSession(rpc);
    await sleep(EXPIRY_WINDOW_MS + 300);
    assert.deepEqual(await rpc.result('list_sessions', {}), { sessions: [{ session_id: sid, state: 'waiting' }] });
    const id = rpc.request('load_session', { session_id: sid });
    const { res } = await rpc.response(id);
    isError(res, id, -32003, { message: `session expired: it waited for its client tools longer than ${EXPIRY_WINDOW_MS / 1000}s` });
    assert.deepEqual(res.error.data, { status: 'NOT_FOUND', session_id: sid });
    // The session is gone.
    assert.deepEqual(await rpc.result('list_sessions', {}), { sessions: [] });
    const again = rpc.request('load_session', { session_id: sid });
    isError((await rpc.response(again)).res, again, -32001);
    // An answer to its request goes nowhere.
    rpc.send({ jsonrpc: '2.0', id: req.id, result: { city: 'Lisbon' } });
    await rpc.silent(200);
    await rpc.close();
  });

  it('a session dropped while waiting is gone after the window (-32001), not before', async () => {
    const a = await RPC.dial(EXPIRY_URL);
    const { sid, req } = await waitingSession(a);
    const started = Date.now();
    await a.drop();
    // Within the window a new connection loads it, and lets it go again.
    const b = await RPC.dial(EXPIRY_URL);
    await b.reattach({ session_id: sid });
    assert.deepEqual(await b.next(), req);
    await b.close();
    // After the window (counted from the moment it began to wait), it is gone.
    await sleep(EXPIRY_WINDOW_MS + 300 - (Date.now() - started));
    const c = await RPC.dial(EXPIRY_URL);
    const id = c.request('load_session', { session_id: sid });
    isError((await c.response(id)).res, id, -32001);
    await c.close();
  });
});

describe('limits', () => {
  it('-32005: sessions of a connection, turns at once, messages in a batch', async () => {
    const rpc = await RPC.dial(LIMITS_URL);
    const s1 = await rpc.newSession();
    const s2 = await rpc.newSession();
    let id = rpc.request('new_session', {});
    let { res } = await rpc.response(id);
    isError(res, id, -32005, { message: 'a connection holds at most 2 sessions' });
    assert.deepEqual(res.error.data, { status: 'RESOURCE_EXHAUSTED', limit: 2 });

    // One turn at a time.
    const p1 = rpc.request('prompt', { session_id: s1, prompt: text('A signup form') });
    id = rpc.request('prompt', { session_id: s2, prompt: text('A signup form') });
    ({ res } = await rpc.response(id));
    isError(res, id, -32005, { message: 'a connection runs at most 1 turns at once' });
    assert.deepEqual(res.error.data, { status: 'RESOURCE_EXHAUSTED', limit: 1 });
    const done = await rpc.response(p1);
    assert.deepEqual(done.res.result, { stop_reason: 'end_turn' });
    await rpc.settled({ [s1]: 'idle', [s2]: 'idle' });
    // The refused session was not left busy.
    const p2 = rpc.request('prompt', { session_id: s2, prompt: text('A signup form') });
    await rpc.until((m) => m.params?.session_id === s2);
    rpc.notify('cancel', { session_id: s2 });
    assert.deepEqual((await rpc.response(p2)).res.result, { stop_reason: 'cancelled' });

    // A batch of five: one error, no array; of four: four responses.
    const req = (n) => ({ jsonrpc: '2.0', id: 100 + n, method: 'list_sessions', params: {} });
    rpc.send([1, 2, 3, 4, 5].map(req));
    isError(await rpc.next(), null, -32005, { message: 'a batch of 5 messages: at most 4 per batch' });
    rpc.send([1, 2, 3, 4].map(req));
    const arr = await rpc.next();
    assert.deepEqual(arr.map((r) => r.id).sort(), [101, 102, 103, 104]);
    await rpc.close();
  });
});

describe('batches', () => {
  it('get one response array; notifications in it get none', async () => {
    const rpc = await RPC.dial(GENUI_URL);
    rpc.send([
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocol_version: 1 } },
      { jsonrpc: '2.0', method: 'initialize', params: { protocol_version: 1 } },
      { jsonrpc: '2.0', id: 'two', method: 'list_sessions', params: {} },
      { jsonrpc: '2.0', id: 3, method: 'nope' },
      5,
      { id: 4, method: 'initialize' },
    ]);
    const arr = await rpc.next();
    assert.ok(Array.isArray(arr), JSON.stringify(arr));
    const byID = (r) => JSON.stringify(r.id);
    assert.deepEqual(arr.map(byID).sort(), ['"two"', '1', '3', '4', 'null'].sort());
    const get = (id) => arr.find((r) => r.id === id);
    assert.deepEqual(get(1), { jsonrpc: '2.0', id: 1, result: INITIALIZED });
    assert.deepEqual(get('two'), { jsonrpc: '2.0', id: 'two', result: { sessions: [] } });
    isError(get(3), 3, -32601);
    isError(get(4), 4, -32600);
    isError(get(null), null, -32600);
    await rpc.silent(100);
    await rpc.close();
  });

  it('of more than 64 messages get one -32005 error, and none of them runs', async () => {
    const rpc = await RPC.dial(GENUI_URL);
    rpc.send(Array.from({ length: 65 }, (_, i) => ({ jsonrpc: '2.0', id: i + 1, method: 'new_session', params: {} })));
    isError(await rpc.next(), null, -32005, { message: 'a batch of 65 messages: at most 64 per batch' });
    await rpc.settled({});
    rpc.send(Array.from({ length: 64 }, (_, i) => ({ jsonrpc: '2.0', id: i + 1, method: 'initialize', params: { protocol_version: 1 } })));
    const arr = await rpc.next();
    assert.deepEqual(arr.map((r) => r.id).sort((x, y) => x - y), Array.from({ length: 64 }, (_, i) => i + 1));
    for (const r of arr) assert.deepEqual(r.result, INITIALIZED);
    await rpc.close();
  });

  it('of notifications only get no response', async () => {
    const rpc = await RPC.dial(GENUI_URL);
    rpc.send([
      { jsonrpc: '2.0', method: 'initialize', params: { protocol_version: 1 } },
      { jsonrpc: '2.0', method: 'cancel', params: { session_id: UNKNOWN } },
      { jsonrpc: '2.0', method: 'nope' },
    ]);
    await rpc.silent(300);
    assert.deepEqual(await rpc.result('list_sessions', {}), { sessions: [] });
    await rpc.close();
  });

  it('holding a prompt answer when its turn ends: the updates, then the array', async () => {
    const rpc = await RPC.dial(GENUI_URL);
    const sid = await rpc.newSession();
    rpc.send([
      { jsonrpc: '2.0', id: 'p', method: 'prompt', params: { session_id: sid, prompt: text('Hello!') } },
      { jsonrpc: '2.0', id: 'l', method: 'list_sessions', params: {} },
    ]);
    const { msg: arr, before } = await rpc.until(Array.isArray);
    const ups = checkUpdates(before, sid);
    assert.deepEqual(updatesAsLines(ups), await a2uiLines('Hello!'));
    assert.deepEqual(arr.map((r) => r.id).sort(), ['l', 'p']);
    assert.deepEqual(arr.find((r) => r.id === 'p'), { jsonrpc: '2.0', id: 'p', result: { stop_reason: 'end_turn' } });
    assert.deepEqual(arr.find((r) => r.id === 'l').result.sessions.map((s) => s.session_id), [sid]);
    await rpc.silent(100);
    await rpc.close();
  });
});
