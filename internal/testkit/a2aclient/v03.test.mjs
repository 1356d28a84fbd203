// Compatibility test: the official JavaScript A2A SDK, its v0.3 line (@a2a-js/sdk 0.3.x,
// installed as a2a-v03), against the genui A2A agent's A2A v0.3 JSON-RPC interface:
// the current ClientFactory / Client API and the legacy A2AClient.
// a2aclient_test.go starts the servers and runs this file with `node --test`.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import {
  A2AClient,
  ClientFactory,
  ClientFactoryOptions,
  ContentTypeNotSupportedError,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  PushNotificationNotSupportedError,
  ServiceParameters,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
  withA2AExtensions,
} from 'a2a-v03/client';

import {
  BASIC_CATALOG,
  Captures,
  EXT_V08,
  EXT_V09,
  EXT_V091,
  FORM_COMPONENTS,
  GENUI_URL,
  GET_LOCATION,
  MIME_A2UI,
  PACED_URL,
  assertFinalState,
  assertRpcError,
  assertWhole,
  componentIds,
  countCreateSurface,
  newId,
  rawPost,
  recordingFetch,
  requireServers,
  sendAction,
} from './common.mjs';

const captures = new Captures('v03');

// The A2UI v0.9 extension, as a v0.3 client activates it (X-A2A-Extensions).
const a2ui = () => ({ serviceParameters: ServiceParameters.create(withA2AExtensions(EXT_V09)) });

function userMessage(parts, extra = {}) {
  return { kind: 'message', role: 'user', messageId: newId(), parts, ...extra };
}
const text = (t) => ({ kind: 'text', text: t });
const data = (d) => ({ kind: 'data', data: d });

// a2uiOf returns the A2UI messages of status-update events (or of a task's status), each
// checked to be ONE A2UI message object per DataPart, marked with the A2UI MIME type.
function a2uiOf(statusHolders) {
  const out = [];
  for (const ev of statusHolders) {
    for (const p of ev.status?.message?.parts ?? []) {
      if (p.kind !== 'data' || p.metadata?.mimeType !== MIME_A2UI) {
        continue;
      }
      assert.ok(
        p.data && typeof p.data === 'object' && !Array.isArray(p.data),
        `a v0.3 DataPart must hold one A2UI message, not ${JSON.stringify(p.data)}`,
      );
      assert.equal(p.data.version, 'v0.9', `A2UI message ${JSON.stringify(p.data)}`);
      out.push(p.data);
    }
  }
  return out;
}

const textOf = (events) =>
  events
    .flatMap((ev) => ev.status?.message?.parts ?? [])
    .filter((p) => p.kind === 'text')
    .map((p) => p.text)
    .join('');

// idsOf returns the ids of the status messages of status-update events.
const idsOf = (events) => events.map((ev) => ev.status?.message?.messageId);

// untilState reads a task until it is in state want.
async function untilState(c, id, want) {
  for (let i = 0; i < 500; i++) {
    if ((await c.getTask({ id })).status.state === want) {
      return;
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.fail(`task ${id} is not ${want}`);
}

// drain reads an iterator of events to its end.
async function drain(it) {
  const out = [];
  for (let r = await it.next(); !r.done; r = await it.next()) {
    out.push(r.value);
  }
  return out;
}

// checkTurn checks the events of a whole turn: the task first (submitted, or working
// when the turn continues a task), working status updates of one part each, then the
// final status, final:true; it returns what the turn holds.
function checkTurn(events, { finalState = 'input-required', continues } = {}) {
  assert.ok(events.length >= 2, `a turn of ${events.length} events: ${JSON.stringify(events)}`);
  const [task, ...updates] = events;
  assert.equal(task.kind, 'task', `first event ${JSON.stringify(task)}`);
  assert.ok(task.id && task.contextId, `task ${JSON.stringify(task)}`);
  if (continues) {
    assert.equal(task.id, continues);
  } else {
    assert.equal(task.status.state, 'submitted');
  }
  const final = updates.at(-1);
  for (const ev of updates) {
    assert.equal(ev.kind, 'status-update', `event ${JSON.stringify(ev)}`);
    assert.equal(ev.taskId, task.id);
    assert.equal(ev.contextId, task.contextId);
    if (ev !== final) {
      assert.equal(ev.status.state, 'working', `event ${JSON.stringify(ev)}`);
      assert.equal(ev.final, false);
      assert.equal(ev.status.message.parts.length, 1, `event ${JSON.stringify(ev)}`);
      assert.equal(ev.status.message.role, 'agent');
    }
  }
  assert.equal(final.status.state, finalState, `final event ${JSON.stringify(final)}`);
  assert.equal(final.final, true, `final event ${JSON.stringify(final)}`);
  return { task, final, a2ui: a2uiOf(updates), text: textOf(updates) };
}

// turn sends a message with message/stream and reads the whole turn.
async function turn(client, message, opts = a2ui()) {
  const events = [];
  for await (const ev of client.sendMessageStream({ message }, opts)) {
    events.push(ev);
  }
  return events;
}

// rejectsWith checks that a call fails with an error of class cls (directly, or as the
// cause of a stream's error).
async function rejectsWith(promise, cls, check = () => {}) {
  try {
    await promise;
  } catch (e) {
    const err = e instanceof cls ? e : e?.cause;
    assert.ok(err instanceof cls, `want ${cls.name}, got ${e?.constructor?.name}: ${e?.message} (cause ${e?.cause?.constructor?.name})`);
    check(err);
    return err;
  }
  assert.fail(`want ${cls.name}, the call succeeded`);
}

// rpcErrorOf returns the JSON-RPC error a call failed with (the SDK keeps the response of
// errors it has no class for).
async function rpcErrorOf(promise) {
  try {
    await promise;
  } catch (e) {
    const resp = e?.errorResponse ?? e?.cause?.errorResponse;
    assert.ok(resp?.error, `no JSON-RPC error response in ${e?.constructor?.name}: ${e?.message}`);
    return resp.error;
  }
  assert.fail('the call succeeded');
}

let client; // on the offline model
let paced; // on the paced model

before(async () => {
  requireServers();
  client = await new ClientFactory().createFromUrl(GENUI_URL);
  paced = await new ClientFactory().createFromUrl(PACED_URL);
});

after(() => captures.write());

describe('@a2a-js/sdk 0.3 ClientFactory/Client', () => {
  test('reads the agent card and talks to its v0.3 JSON-RPC url', async () => {
    const card = await client.getAgentCard();
    assert.equal(card.url, `${GENUI_URL}/a2a`);
    assert.equal(card.protocolVersion, '0.3');
    assert.equal(card.preferredTransport, 'JSONRPC');
    assert.equal(card.capabilities.streaming, true);
    assert.ok(card.name && card.version && card.description, `card ${JSON.stringify(card)}`);
    const uris = card.capabilities.extensions.map((e) => e.uri);
    for (const uri of [EXT_V09, EXT_V08, EXT_V091]) {
      assert.ok(uris.includes(uri), `extension ${uri} not in ${uris}`);
    }
    const v09 = card.capabilities.extensions.find((e) => e.uri === EXT_V09);
    assert.ok(v09.params.supportedCatalogIds.includes(BASIC_CATALOG), JSON.stringify(v09));
    assert.ok(card.skills.length > 0 && card.skills[0].examples.length > 0, JSON.stringify(card.skills));
    // The client posts to the card's url.
    assert.equal(client.transport.endpoint, `${GENUI_URL}/a2a`);

    // The same card under the agent's path, through the card resolver.
    const resolver = new DefaultAgentCardResolver();
    const under = await resolver.resolve(GENUI_URL, '/a2a/.well-known/agent-card.json');
    assert.equal(under.url, card.url);
    assert.deepEqual(under.capabilities.extensions.map((e) => e.uri), uris);

    // The card offers v0.3 over JSON-RPC only: a client preferring HTTP+JSON gets it too.
    const rest = await new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { preferredTransports: ['HTTP+JSON'] })).createFromUrl(
      GENUI_URL,
    );
    assert.equal(rest.transport.constructor.name, client.transport.constructor.name);
    assert.equal(rest.transport.endpoint, `${GENUI_URL}/a2a`);
  });

  test('message/stream with the A2UI v0.9 extension: the task, A2UI in status updates, input-required', async () => {
    const fetchImpl = recordingFetch();
    const recorded = await new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl })] }),
    ).createFromUrl(GENUI_URL);
    const events = await turn(recorded, userMessage([text('Book a table for two')]));
    const { a2ui: msgs } = checkTurn(events);
    captures.add('v0.3 Client stream', msgs, { createSurfaces: 1 });

    // The extension went in X-A2A-Extensions and the server activated it.
    const call = fetchImpl.calls.at(-1);
    assert.equal(call.request.get('X-A2A-Extensions'), EXT_V09);
    assert.equal(call.response.get('X-A2A-Extensions'), EXT_V09);
    assert.match(call.response.get('Content-Type'), /^text\/event-stream/);

    assert.ok(msgs.length >= 3, `${msgs.length} A2UI messages`);
    assert.ok(msgs[0].createSurface, `first A2UI message ${JSON.stringify(msgs[0])}`);
    assert.equal(msgs[0].createSurface.catalogId, BASIC_CATALOG);
    assert.equal(countCreateSurface(msgs), 1);
    assert.ok(componentIds(msgs).includes('root'), `no root in ${JSON.stringify(msgs)}`);
    assert.ok(msgs.every((m) => (m.createSurface ?? m.updateComponents ?? m.updateDataModel ?? m.deleteSurface).surfaceId === msgs[0].createSurface.surfaceId));

    // Several extensions in one header: the newest A2UI wins (v0.9.1, its MIME type).
    const both = { serviceParameters: ServiceParameters.create(withA2AExtensions(EXT_V09, EXT_V091)) };
    const evs = await turn(client, userMessage([text('Hello')]), both);
    const parts = evs.flatMap((ev) => ev.status?.message?.parts ?? []).filter((p) => p.kind === 'data');
    assert.ok(parts.length > 0 && parts.every((p) => p.metadata.mimeType === 'application/a2ui+json'), JSON.stringify(parts));
    captures.add('v0.3 Client stream v0.9.1', parts.map((p) => p.data), { createSurfaces: 1 });
  });

  test('an action round trip in the same context updates the surface', async () => {
    const first = checkTurn(await turn(client, userMessage([text('Book a table')])));
    const surfaceId = first.a2ui.find((m) => m.createSurface).createSurface.surfaceId;
    const c = captures.add('v0.3 Client action round trip', first.a2ui, { createSurfaces: 1 });

    const action = userMessage([data(sendAction(surfaceId, 'Friday 7pm'))], {
      contextId: first.task.contextId,
      referenceTaskIds: [first.task.id],
    });
    const second = checkTurn(await turn(client, action));
    assert.notEqual(second.task.id, first.task.id, 'an action starts a new task');
    assert.equal(second.task.contextId, first.task.contextId);
    assert.ok(second.a2ui.length > 0, 'the action changed nothing');
    assert.equal(countCreateSurface(second.a2ui), 0, 'the surface was created again');
    assert.ok(second.a2ui.every((m) => JSON.stringify(m).includes(surfaceId)), JSON.stringify(second.a2ui));
    assert.ok(
      JSON.stringify(second.a2ui).includes('You sent \\"send\\" with {\\"reply\\":\\"Friday 7pm\\"}'),
      `the surface does not show the action: ${JSON.stringify(second.a2ui)}`,
    );
    c.messages.push(...second.a2ui);
  });

  test('a client tool round trip through input-required', async () => {
    const ask = userMessage([text('Where am I? Use getLocation')], { metadata: { clientTools: [GET_LOCATION] } });
    const first = checkTurn(await turn(client, ask));
    const calls = first.final.status.message.parts.filter((p) => p.kind === 'data' && p.data.toolCall);
    assert.equal(calls.length, 1, `final status ${JSON.stringify(first.final)}`);
    const call = calls[0].data.toolCall;
    assert.equal(call.name, 'getLocation');
    assert.ok(call.callId, JSON.stringify(call));
    assert.deepEqual(call.input, {});
    const c = captures.add('v0.3 Client client tool', first.a2ui, { createSurfaces: 1 });

    const answer = userMessage([data({ toolResult: { callId: call.callId, name: 'getLocation', output: { city: 'Berlin' } } })], {
      taskId: first.task.id,
      contextId: first.task.contextId,
    });
    const second = checkTurn(await turn(client, answer), { continues: first.task.id });
    assert.equal(second.task.contextId, first.task.contextId);
    assert.ok(
      JSON.stringify(second.a2ui).includes('getLocation returned city: Berlin'),
      `the result is not shown: ${JSON.stringify(second.a2ui)}`,
    );
    c.messages.push(...second.a2ui);

    // The task keeps both turns.
    const task = await client.getTask({ id: first.task.id });
    assert.equal(task.status.state, 'input-required');
    assert.ok(task.history.length >= 2, `history ${JSON.stringify(task.history)}`);
  });

  test('getTask returns the task as its turn left it', async () => {
    const t = checkTurn(await turn(client, userMessage([text('Show me a form to report a bug')])));
    captures.add('v0.3 Client getTask', t.a2ui, { createSurfaces: 1 });
    const task = await client.getTask({ id: t.task.id });
    assert.equal(task.kind, 'task');
    assert.equal(task.id, t.task.id);
    assert.equal(task.contextId, t.task.contextId);
    assert.equal(task.status.state, 'input-required');
    // Its status message holds the turn whole: the surface in its final state (one
    // createSurface, the data-model updates, one updateComponents), which is what a
    // renderer that applied the stream shows; the text as it streamed.
    const held = a2uiOf([task]);
    captures.add('v0.3 Client getTask, the task', held, { createSurfaces: 1 });
    assertFinalState(held, t.a2ui);
    assert.ok(t.a2ui.filter((m) => m.updateComponents).length > 1, 'the turn streamed its surface in one update: nothing to compact');
    assert.equal(textOf([task]), t.text);
    assert.equal(task.history[0].parts[0].text, 'Show me a form to report a bug');
    const short = await client.getTask({ id: t.task.id, historyLength: 0 });
    assert.ok(!short.history || short.history.length === 0, JSON.stringify(short.history));
  });

  // Cancelled right after the task came, or mid-turn, once the model writes the surface.
  for (const midTurn of [false, true]) {
    test(`cancelTask of a running task ends its stream canceled (${midTurn ? 'mid-turn' : 'after the task event'})`, async () => {
      const it = paced.sendMessageStream({ message: userMessage([text('a form')]) }, a2ui());
      const first = await it.next();
      assert.equal(first.value.kind, 'task');
      const id = first.value.id;
      const had = [];
      while (midTurn && a2uiOf(had).length === 0) {
        const r = await it.next();
        assert.ok(!r.done, 'the stream ended before any A2UI');
        assert.equal(r.value.status.state, 'working');
        had.push(r.value);
      }

      const canceled = await paced.cancelTask({ id });
      assert.equal(canceled.id, id);
      assert.equal(canceled.status.state, 'canceled');

      const rest = await drain(it);
      assert.ok(rest.length > 0, 'the stream ended without a final status');
      const last = rest.at(-1);
      assert.equal(last.status.state, 'canceled', `last event ${JSON.stringify(last)}`);
      assert.equal(last.final, true);
      for (const ev of rest.slice(0, -1)) {
        assert.equal(ev.status.state, 'working');
      }
      const msgs = a2uiOf([...had, ...rest]);
      assert.ok(!componentIds(msgs).includes('submit-label'), 'the whole turn came: it was not cancelled');
      if (msgs.length > 0) {
        captures.add(`v0.3 Client canceled ${midTurn ? 'mid-turn' : 'at once'}`, msgs, { createSurfaces: 1 });
      }
      assert.equal((await paced.getTask({ id })).status.state, 'canceled');

      // A canceled task cannot be canceled again, nor continued.
      await rejectsWith(paced.cancelTask({ id }), TaskNotCancelableError, (e) => assert.equal(e.errorResponse.error.code, -32002));
      const err = await rpcErrorOf(turn(paced, userMessage([text('go on')], { taskId: id })));
      assert.equal(err.code, -32602);
      assert.match(err.message, /message\.taskId/);
    });
  }

  test('cancelTask of a task waiting for input cancels it; of a finished task fails TaskNotCancelable', async () => {
    const t = checkTurn(await turn(client, userMessage([text('Hello')])));
    captures.add('v0.3 Client cancel input-required', t.a2ui, { createSurfaces: 1 });
    const canceled = await client.cancelTask({ id: t.task.id });
    assert.equal(canceled.status.state, 'canceled');
    assert.equal((await client.getTask({ id: t.task.id })).status.state, 'canceled');
    await rejectsWith(client.cancelTask({ id: t.task.id }), TaskNotCancelableError);
  });

  test('resubscribeTask after a dropped stream sends the task, then the turn from its start', async () => {
    const had = await readThenDrop(paced, 'a form', 3);
    const id = had[0].id;
    assert.equal(had[0].kind, 'task');

    // A2A 1.0, 3.1.6: "The operation MUST return a Task object as the first event in the
    // stream, representing the current state of the task at the time of subscription";
    // then the turn's status updates in the order they were generated (3.5.2), from its
    // start: v0.3, 7.9, leaves "whether it attempts to backfill some missed events" to
    // the server. Each status message has the id it had: the client drops those it has.
    const events = await resubscribeToInput(paced, id);
    assert.deepEqual(idsOf(events.slice(1, had.length)), idsOf(had.slice(1)));
    const seen = new Set(idsOf(had.slice(1)));
    const missed = events.slice(1).filter((ev) => !seen.has(ev.status.message?.messageId));

    const msgs = [...a2uiOf(had.slice(1)), ...a2uiOf(missed)];
    captures.add('v0.3 Client resubscribe', msgs, { createSurfaces: 1, components: FORM_COMPONENTS });
    assert.equal(countCreateSurface(msgs), 1, `createSurface in ${JSON.stringify(msgs)}`);
    assert.deepEqual(msgs, a2uiOf(events.slice(1)));
    // The two streams leave the client with the surface the turn built: the task holds
    // its final state.
    const task = await paced.getTask({ id });
    assertFinalState(a2uiOf([task]), msgs);
    assert.equal(textOf(events.slice(1)), textOf([task]));

    // Once the turn has ended, a resubscription sends the same: the task, then the turn.
    const again = [];
    for await (const ev of paced.resubscribeTask({ id }, a2ui())) {
      again.push(ev);
    }
    assert.equal(again[0].kind, 'task', JSON.stringify(again));
    assert.equal(again.at(-1).status.state, 'input-required');
    assert.deepEqual(idsOf(again.slice(1)), idsOf(events.slice(1)));
    assert.deepEqual(a2uiOf(again.slice(1)), msgs);
  });

  for (const end of [false, true]) {
    test(`resubscribeTask after an unpaced stream read in part (${end ? 'once written to its end' : 'as it is written'}) sends the turn from its start`, async () => {
      // The offline model answers at once: the server flushes the whole turn faster than
      // the client reads it.
      const had = await readThenDrop(client, 'Book a table for two', 3,
        end ? (first) => untilState(client, first.id, 'input-required') : undefined);
      const id = had[0].id;
      const events = await resubscribeToInput(client, id);
      // The resubscription went to its end: another now sends the whole turn, as it
      // streamed, each status message under its id.
      const turnEvents = (await resubscribeToInput(client, id)).slice(1);

      const task = await client.getTask({ id });
      // The task, then the whole turn from its start (A2A 1.0, 3.1.6 and 3.5.2).
      assert.deepEqual(idsOf(events.slice(1)), idsOf(turnEvents));
      assert.deepEqual(a2uiOf(events.slice(1)), a2uiOf(turnEvents));
      assert.equal(textOf(events.slice(1)), textOf(turnEvents));
      // What the client had comes again under the same message ids: dropping those, it
      // holds every message of the turn once.
      const byId = new Map(events.slice(1).map((ev) => [ev.status.message?.messageId, ev]));
      for (const ev of had.slice(1)) {
        const again = byId.get(ev.status.message.messageId);
        if (again) {
          assert.deepEqual(again.status.message, ev.status.message);
        }
      }
      const seen = new Set(idsOf(had.slice(1)));
      const missed = events.slice(1).filter((ev) => !seen.has(ev.status.message?.messageId));
      const msgs = [...a2uiOf(had.slice(1)), ...a2uiOf(missed)];
      captures.add(`v0.3 Client resubscribe after an unpaced stream${end ? ' written to its end' : ''}`, msgs, { createSurfaces: 1 });
      assert.deepEqual(idsOf([...had.slice(1), ...missed]), idsOf(turnEvents));
      assert.deepEqual(msgs, a2uiOf(turnEvents));
      assert.equal(textOf([...had.slice(1), ...missed]), textOf(turnEvents));
      // So it shows the surface the turn built, whose final state the task holds.
      assertFinalState(a2uiOf([task]), msgs);
      assert.equal(textOf([task]), textOf(turnEvents));
    });
  }

  test('a second subscriber to a running task gets the whole turn', async () => {
    const it = paced.sendMessageStream({ message: userMessage([text('a form')]) }, a2ui());
    const first = await it.next();
    const id = first.value.id;
    const [own, other] = await Promise.all([drain(it), drainIt(paced.resubscribeTask({ id }, a2ui()))]);
    const t = checkTurn([first.value, ...own]);
    captures.add('v0.3 Client first subscriber', t.a2ui, { createSurfaces: 1, components: FORM_COMPONENTS });
    assert.equal(other[0].kind, 'task', `first event ${JSON.stringify(other[0])}`);
    assert.equal(other[0].id, id);
    assert.equal(other.at(-1).status.state, 'input-required');
    assert.equal(other.at(-1).final, true);
    assert.deepEqual(a2uiOf(other.slice(1)), t.a2ui);
    assert.equal(textOf(other.slice(1)), t.text);
  });

  test('sendMessage returns the task at the end of its turn', async () => {
    const task = await client.sendMessage({ message: userMessage([text('Hello')]) }, a2ui());
    assert.equal(task.kind, 'task');
    assert.equal(task.status.state, 'input-required');
    const msgs = a2uiOf([task]);
    assert.ok(msgs.length >= 3 && msgs[0].createSurface, `status ${JSON.stringify(task.status)}`);
    captures.add('v0.3 Client send', msgs, { createSurfaces: 1 });
    // The turn whole: its surface once, in its final state.
    assertWhole(msgs, 'message/send');
  });

  test('errors surface as the SDK error classes', async () => {
    await rejectsWith(client.getTask({ id: 'no-such-task' }), TaskNotFoundError, (e) => assert.equal(e.errorResponse.error.code, -32001));
    await rejectsWith(client.cancelTask({ id: 'no-such-task' }), TaskNotFoundError);
    await rejectsWith(drainIt(client.resubscribeTask({ id: 'no-such-task' }, a2ui())), TaskNotFoundError);
    await rejectsWith(
      client.sendMessage({ message: userMessage([text('hi')], { taskId: 'no-such-task' }) }),
      TaskNotFoundError,
    );

    // A file that is not an image.
    const pdf = { kind: 'file', file: { uri: 'https://files.example/report.pdf', mimeType: 'application/pdf', name: 'report.pdf' } };
    await rejectsWith(client.sendMessage({ message: userMessage([pdf]) }), ContentTypeNotSupportedError, (e) =>
      assert.match(e.errorResponse.error.message, /message\.parts\[0\]/),
    );
    await rejectsWith(turn(client, userMessage([text('see this'), pdf])), ContentTypeNotSupportedError, (e) =>
      assert.match(e.errorResponse.error.message, /message\.parts\[1\]/),
    );

    // Invalid params, the field named: a client tool under a reserved name; an A2UI action
    // of the wrong type; capabilities of no known catalog.
    let err = await rpcErrorOf(
      client.sendMessage({ message: userMessage([text('hi')], { metadata: { clientTools: [{ name: 'addOrUpdateSurface' }] } }) }),
    );
    assert.equal(err.code, -32602);
    assert.match(err.message, /message\.metadata\.clientTools\[0\]\.name/);
    err = await rpcErrorOf(turn(client, userMessage([text('hi')], { metadata: { clientTools: [{ name: 'addOrUpdateSurface' }] } })));
    assert.equal(err.code, -32602);
    assert.match(err.message, /message\.metadata\.clientTools\[0\]\.name/);
    err = await rpcErrorOf(turn(client, userMessage([data({ version: 'v0.9', action: { name: 5 } })])));
    assert.equal(err.code, -32602);
    assert.match(err.message, /message\.parts\[0\]\.data\.action/);
    err = await rpcErrorOf(
      client.sendMessage({
        message: userMessage([text('hi')], { metadata: { a2uiClientCapabilities: { 'v0.9': { supportedCatalogIds: ['urn:nothing'] } } } }),
      }),
    );
    assert.equal(err.code, -32602);
    assert.match(err.message, /message\.metadata\.a2uiClientCapabilities/);

    // Push notifications: the card says none, and the server agrees.
    await rejectsWith(
      Promise.resolve().then(() => client.setTaskPushNotificationConfig({ taskId: 'x', pushNotificationConfig: { url: 'https://hook.example' } })),
      PushNotificationNotSupportedError,
    );
    await rejectsWith(client.deleteTaskPushNotificationConfig({ id: 'x', pushNotificationConfigId: 'y' }), PushNotificationNotSupportedError, (e) =>
      assert.equal(e.errorResponse.error.code, -32003),
    );
  });

  test('a message to a task still working fails UnsupportedOperation', async () => {
    const it = paced.sendMessageStream({ message: userMessage([text('a form')]) }, a2ui());
    const first = await it.next();
    try {
      await rejectsWith(paced.sendMessage({ message: userMessage([text('and more')], { taskId: first.value.id }) }), UnsupportedOperationError, (e) =>
        assert.equal(e.errorResponse.error.code, -32004),
      );
    } finally {
      await drain(it); // the turn ends as usual
    }
  });
});

// readThenDrop streams a message of text and drops the stream after its first n events
// (once before, given the first event, has run), returning those events.
async function readThenDrop(c, message, n, before) {
  const abort = new AbortController();
  const had = [];
  for await (const ev of c.sendMessageStream({ message: userMessage([text(message)]) }, { ...a2ui(), signal: abort.signal })) {
    had.push(ev);
    if (had.length === n) {
      if (before) await before(had[0]);
      abort.abort();
      break;
    }
  }
  return had;
}

// resubscribeToInput resubscribes to task id and reads the stream to its end: the task
// first, the final input-required status last.
async function resubscribeToInput(c, id) {
  const events = [];
  for await (const ev of c.resubscribeTask({ id }, a2ui())) {
    events.push(ev);
  }
  assert.equal(events[0].kind, 'task', `first event ${JSON.stringify(events[0])}`);
  assert.equal(events[0].id, id);
  const final = events.at(-1);
  assert.equal(final.kind, 'status-update');
  assert.equal(final.status.state, 'input-required', `last event ${JSON.stringify(final)}`);
  assert.equal(final.final, true);
  return events;
}

// drainIt reads a stream to its end (for streams expected to fail).
async function drainIt(stream) {
  const out = [];
  for await (const ev of stream) {
    out.push(ev);
  }
  return out;
}

describe('@a2a-js/sdk 0.3 legacy A2AClient', () => {
  let legacy;
  before(async () => {
    // A2AClient has no per-call headers: the extension goes in through its fetch.
    const fetchImpl = (url, init = {}) => fetch(url, { ...init, headers: { ...init.headers, 'X-A2A-Extensions': EXT_V09 } });
    legacy = await A2AClient.fromCardUrl(`${GENUI_URL}/.well-known/agent-card.json`, { fetchImpl });
  });

  test('message/stream and message/send', async () => {
    const events = await drainIt(legacy.sendMessageStream({ message: userMessage([text('Book a table')]) }));
    const t = checkTurn(events);
    captures.add('v0.3 A2AClient stream', t.a2ui, { createSurfaces: 1 });

    // message/send: the task at the end of its turn, its status holding the turn whole,
    // its surface once, in its final state.
    const resp = await legacy.sendMessage({ message: userMessage([text('Hello')]) });
    assert.ok(resp.result, `message/send: ${JSON.stringify(resp)}`);
    assert.equal(resp.result.kind, 'task');
    assert.equal(resp.result.status.state, 'input-required');
    const msgs = a2uiOf([resp.result]);
    assert.ok(msgs.length >= 3, `message/send status: ${JSON.stringify(resp.result.status)}`);
    captures.add('v0.3 A2AClient send', msgs, { createSurfaces: 1 });
    assertWhole(msgs, 'message/send');
  });

  test('tasks/get, tasks/cancel and their errors as JSON-RPC responses', async () => {
    const resp = await legacy.sendMessage({ message: userMessage([text('Hello')]) });
    const id = resp.result.id;
    captures.add('v0.3 A2AClient get/cancel', a2uiOf([resp.result]), { createSurfaces: 1 });
    const got = await legacy.getTask({ id });
    assert.equal(got.result.id, id);
    assert.equal(got.result.status.state, 'input-required');
    assert.equal((await legacy.cancelTask({ id })).result.status.state, 'canceled');
    assert.equal((await legacy.cancelTask({ id })).error.code, -32002);
    assert.equal((await legacy.getTask({ id: 'no-such-task' })).error.code, -32001);
    assert.equal((await legacy.getTaskPushNotificationConfig({ id })).error.code, -32003);
    const notFound = await legacy.callExtensionMethod('tasks/nothing', {});
    assert.equal(notFound.error?.code, -32601, JSON.stringify(notFound));
  });

  test('what no SDK sends: parse errors and invalid requests', async () => {
    const url = `${GENUI_URL}/a2a`;
    assertRpcError(await rawPost(url, '{'), -32700);
    assertRpcError(await rawPost(url, { jsonrpc: '2.0', id: 1 }), -32600);
    assertRpcError(await rawPost(url, { jsonrpc: '2.0', id: 1, method: 'tasks/nothing', params: {} }), -32601);
    const bad = await rawPost(url, {
      jsonrpc: '2.0',
      id: 1,
      method: 'message/send',
      params: { message: { role: 'user', kind: 'message', messageId: 'm', parts: 'x' } },
    });
    assertRpcError(bad, -32602);
    assert.match(bad.contentType, /^application\/json/);
  });
});
