// Compatibility test: the official JavaScript A2A SDK, its 1.x line (@a2a-js/sdk 1.x,
// installed as a2a-v1), against the genui A2A agent's A2A 1.0 interfaces, JSON-RPC and
// HTTP+JSON (REST), as its ClientFactory picks them from the card; and the same SDK on
// the v0.3 interface through its v0.3 compatibility layer.
// a2aclient_test.go starts the servers and runs this file with `node --test`.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { Role, TaskState } from 'a2a-v1';
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
  ServiceParameters,
  withA2AExtensions,
} from 'a2a-v1/client';
import {
  ContentTypeNotSupportedError,
  PushNotificationNotSupportedError,
  RequestMalformedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from 'a2a-v1/errors';

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

const captures = new Captures('v1');

// The A2UI v0.9 extension; the client sends it as A2A-Extensions on 1.0 (X-A2A-Extensions
// on v0.3).
const a2ui = () => ({ serviceParameters: ServiceParameters.create(withA2AExtensions(EXT_V09)) });

function userMessage(parts, extra = {}) {
  return {
    messageId: newId(),
    contextId: '',
    taskId: '',
    role: Role.ROLE_USER,
    parts,
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
    ...extra,
  };
}
const part = (content, extra = {}) => ({ content, metadata: undefined, filename: '', mediaType: '', ...extra });
const text = (t) => part({ $case: 'text', value: t });
const data = (d) => part({ $case: 'data', value: d });
const request = (message) => ({ tenant: '', message, configuration: undefined, metadata: undefined });

const stateName = (s) => TaskState[s] ?? String(s);

const partsOf = (holders) => holders.flatMap((h) => h.status?.message?.parts ?? []);

// a2uiOf returns the A2UI messages of status updates (or of a task's status). On A2A 1.0
// each A2UI DataPart holds a list of one message; through the v0.3 layer, one message.
function a2uiOf(holders, { list = true } = {}) {
  const out = [];
  for (const p of partsOf(holders)) {
    if (p.content?.$case !== 'data' || (p.mediaType !== MIME_A2UI && p.metadata?.mimeType !== MIME_A2UI)) {
      continue;
    }
    const v = p.content.value;
    if (list) {
      assert.ok(Array.isArray(v) && v.length === 1, `a 1.0 A2UI DataPart must hold a list of one message, not ${JSON.stringify(v)}`);
      assert.equal(p.mediaType, MIME_A2UI, `part ${JSON.stringify(p)}`);
    } else {
      assert.ok(v && typeof v === 'object' && !Array.isArray(v), `a v0.3 A2UI DataPart must hold one message, not ${JSON.stringify(v)}`);
    }
    for (const m of list ? v : [v]) {
      assert.equal(m.version, 'v0.9', `A2UI message ${JSON.stringify(m)}`);
      out.push(m);
    }
  }
  return out;
}

const textOf = (holders) =>
  partsOf(holders)
    .filter((p) => p.content?.$case === 'text')
    .map((p) => p.content.value)
    .join('');

// idsOf returns the ids of the status messages of status updates.
const idsOf = (updates) => updates.map((u) => u.status?.message?.messageId);

async function drain(it) {
  const out = [];
  for (let r = await it.next(); !r.done; r = await it.next()) {
    out.push(r.value);
  }
  return out;
}

// untilState reads a task until it is in state want.
async function untilState(c, id, want) {
  for (let i = 0; i < 500; i++) {
    if ((await c.getTask({ tenant: '', id })).status.state === want) {
      return;
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.fail(`task ${id} is not ${stateName(want)}`);
}

async function drainStream(stream) {
  const out = [];
  for await (const ev of stream) {
    out.push(ev);
  }
  return out;
}

// checkTurn checks the events of a whole turn (StreamResponse payloads): the task first,
// working status updates of one part each, then the final status; the stream closes.
function checkTurn(events, { finalState = TaskState.TASK_STATE_INPUT_REQUIRED, continues, list = true } = {}) {
  assert.ok(events.length >= 2, `a turn of ${events.length} events: ${JSON.stringify(events)}`);
  const [first, ...rest] = events;
  assert.equal(first.payload?.$case, 'task', `first event ${JSON.stringify(first)}`);
  const task = first.payload.value;
  assert.ok(task.id && task.contextId, `task ${JSON.stringify(task)}`);
  if (continues) {
    assert.equal(task.id, continues);
  } else {
    assert.equal(stateName(task.status.state), 'TASK_STATE_SUBMITTED');
  }
  const updates = rest.map((ev) => {
    assert.equal(ev.payload?.$case, 'statusUpdate', `event ${JSON.stringify(ev)}`);
    return ev.payload.value;
  });
  const final = updates.at(-1);
  for (const u of updates) {
    assert.equal(u.taskId, task.id);
    assert.equal(u.contextId, task.contextId);
    if (u !== final) {
      assert.equal(stateName(u.status.state), 'TASK_STATE_WORKING', `event ${JSON.stringify(u)}`);
      assert.equal(u.status.message.parts.length, 1, `event ${JSON.stringify(u)}`);
      assert.equal(u.status.message.role, Role.ROLE_AGENT);
    }
  }
  assert.equal(stateName(final.status.state), stateName(finalState), `final event ${JSON.stringify(final)}`);
  return { task, final, updates, a2ui: a2uiOf(updates, { list }), text: textOf(updates) };
}

async function turn(client, message, opts = a2ui()) {
  return drainStream(client.sendMessageStream(request(message), opts));
}

// rejectsWith checks that a call fails with an error of class cls (directly, or as the
// cause of a stream's error).
async function rejectsWith(promise, cls, check = () => {}) {
  try {
    await promise;
  } catch (e) {
    const err = e instanceof cls ? e : e?.cause;
    assert.ok(
      err instanceof cls,
      `want ${cls.name}, got ${e?.name} ${e?.constructor?.name}: ${e?.message} (cause ${e?.cause?.name}: ${e?.cause?.message})`,
    );
    check(err);
    return err;
  }
  assert.fail(`want ${cls.name}, the call succeeded`);
}

// The 1.0 interfaces, as the card names them; the client picks the 1.0 one of each binding.
const BINDINGS = [
  { binding: 'JSONRPC', path: '/a2a/v1' },
  { binding: 'HTTP+JSON', path: '/a2a/v1/rest' },
];

function factoryFor(binding, extra = {}) {
  return new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { preferredTransports: [binding], ...extra }));
}

before(() => requireServers());
after(() => captures.write());

for (const { binding, path } of BINDINGS) {
  describe(`@a2a-js/sdk 1.x Client over A2A 1.0 ${binding}`, () => {
    const name = (s) => `v1 ${binding} ${s}`;
    let client; // on the offline model
    let paced; // on the paced model

    before(async () => {
      client = await factoryFor(binding).createFromUrl(GENUI_URL);
      paced = await factoryFor(binding).createFromUrl(PACED_URL);
    });

    test('reads the agent card and picks its 1.0 interface', async () => {
      // With its default options, the factory takes 1.0 JSON-RPC.
      const byDefault = await new ClientFactory().createFromUrl(GENUI_URL);
      assert.equal(byDefault.protocolVersion, '1.0');
      assert.equal(byDefault.transport.protocolName, 'JSONRPC');
      assert.equal(byDefault.transport.endpoint, `${GENUI_URL}/a2a/v1`);

      assert.equal(client.protocolVersion, '1.0');
      assert.equal(client.transport.protocolName, binding);
      assert.equal(client.transport.endpoint, GENUI_URL + path);
      const card = await client.getAgentCard();
      const ifaces = card.supportedInterfaces.map((i) => `${i.protocolBinding} ${i.protocolVersion} ${i.url}`);
      assert.deepEqual(ifaces, [
        `JSONRPC 0.3 ${GENUI_URL}/a2a`,
        `JSONRPC 1.0 ${GENUI_URL}/a2a/v1`,
        `HTTP+JSON 1.0 ${GENUI_URL}/a2a/v1/rest`,
      ]);
      assert.equal(card.capabilities.streaming, true);
      const uris = card.capabilities.extensions.map((e) => e.uri);
      for (const uri of [EXT_V09, EXT_V08, EXT_V091]) {
        assert.ok(uris.includes(uri), `extension ${uri} not in ${uris}`);
      }
      const under = await new DefaultAgentCardResolver().resolve(GENUI_URL, '/a2a/.well-known/agent-card.json');
      assert.deepEqual(under.supportedInterfaces, card.supportedInterfaces);
    });

    test('streams a turn with the A2UI v0.9 extension: the task, A2UI lists in status updates, input-required', async () => {
      const fetchImpl = recordingFetch();
      const recorded = await factoryFor(binding, {
        transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
      }).createFromUrl(GENUI_URL);
      const t = checkTurn(await turn(recorded, userMessage([text('Book a table for two')])));
      captures.add(name('stream'), t.a2ui, { createSurfaces: 1 });
      const call = fetchImpl.calls.at(-1);
      assert.equal(call.url, GENUI_URL + path + (binding === 'JSONRPC' ? '' : '/message:stream'));
      assert.equal(call.request.get('A2A-Version'), '1.0');
      assert.equal(call.request.get('A2A-Extensions'), EXT_V09);
      assert.equal(call.response.get('A2A-Extensions'), EXT_V09);

      assert.ok(t.a2ui.length >= 3, `${t.a2ui.length} A2UI messages`);
      assert.ok(t.a2ui[0].createSurface, JSON.stringify(t.a2ui[0]));
      assert.equal(t.a2ui[0].createSurface.catalogId, BASIC_CATALOG);
      assert.equal(countCreateSurface(t.a2ui), 1);
      assert.ok(componentIds(t.a2ui).includes('root'));
    });

    test('an action round trip in the same context updates the surface', async () => {
      const first = checkTurn(await turn(client, userMessage([text('Book a table')])));
      const surfaceId = first.a2ui.find((m) => m.createSurface).createSurface.surfaceId;
      const c = captures.add(name('action round trip'), first.a2ui, { createSurfaces: 1 });
      // On 1.0 the A2UI DataPart holds a list, the client's action too.
      const action = userMessage([data([sendAction(surfaceId, 'Friday 7pm')])], {
        contextId: first.task.contextId,
        referenceTaskIds: [first.task.id],
      });
      const second = checkTurn(await turn(client, action));
      assert.notEqual(second.task.id, first.task.id);
      assert.equal(second.task.contextId, first.task.contextId);
      assert.ok(second.a2ui.length > 0);
      assert.equal(countCreateSurface(second.a2ui), 0, 'the surface was created again');
      assert.ok(
        JSON.stringify(second.a2ui).includes('You sent \\"send\\" with {\\"reply\\":\\"Friday 7pm\\"}'),
        `the surface does not show the action: ${JSON.stringify(second.a2ui)}`,
      );
      c.messages.push(...second.a2ui);
    });

    test('a client tool round trip through input-required', async () => {
      const ask = userMessage([text('Where am I? Use getLocation')], { metadata: { clientTools: [GET_LOCATION] } });
      const first = checkTurn(await turn(client, ask));
      const calls = first.final.status.message.parts.filter((p) => p.content?.$case === 'data' && p.content.value?.toolCall);
      assert.equal(calls.length, 1, `final status ${JSON.stringify(first.final)}`);
      const call = calls[0].content.value.toolCall;
      assert.equal(call.name, 'getLocation');
      assert.ok(call.callId);
      const c = captures.add(name('client tool'), first.a2ui, { createSurfaces: 1 });

      const answer = userMessage([data({ toolResult: { callId: call.callId, name: 'getLocation', output: { city: 'Berlin' } } })], {
        taskId: first.task.id,
      });
      const second = checkTurn(await turn(client, answer), { continues: first.task.id });
      assert.equal(second.task.contextId, first.task.contextId);
      assert.ok(JSON.stringify(second.a2ui).includes('getLocation returned city: Berlin'), JSON.stringify(second.a2ui));
      c.messages.push(...second.a2ui);
    });

    test('getTask returns the task as its turn left it', async () => {
      const t = checkTurn(await turn(client, userMessage([text('Show me a form to report a bug')])));
      captures.add(name('getTask'), t.a2ui, { createSurfaces: 1 });
      const task = await client.getTask({ tenant: '', id: t.task.id });
      assert.equal(task.id, t.task.id);
      assert.equal(task.contextId, t.task.contextId);
      assert.equal(stateName(task.status.state), 'TASK_STATE_INPUT_REQUIRED');
      // Its status message holds the turn whole: the surface in its final state (one
      // createSurface, the data-model updates, one updateComponents), which is what a
      // renderer that applied the stream shows; the text as it streamed.
      const held = a2uiOf([task]);
      captures.add(name('getTask, the task'), held, { createSurfaces: 1 });
      assertFinalState(held, t.a2ui);
      assert.ok(t.a2ui.filter((m) => m.updateComponents).length > 1, 'the turn streamed its surface in one update: nothing to compact');
      assert.equal(textOf([task]), t.text);
      assert.equal(task.history[0].parts[0].content.value, 'Show me a form to report a bug');
      const short = await client.getTask({ tenant: '', id: t.task.id, historyLength: 0 });
      assert.equal(short.history.length, 0);
    });

    for (const midTurn of [false, true]) {
      test(`cancelTask of a running task ends its stream canceled (${midTurn ? 'mid-turn' : 'after the task event'})`, async () => {
        const it = paced.sendMessageStream(request(userMessage([text('a form')])), a2ui());
        const first = await it.next();
        assert.equal(first.value.payload.$case, 'task');
        const id = first.value.payload.value.id;
        const had = [];
        while (midTurn && a2uiOf(had).length === 0) {
          const r = await it.next();
          assert.ok(!r.done, 'the stream ended before any A2UI');
          assert.equal(r.value.payload.$case, 'statusUpdate');
          had.push(r.value.payload.value);
        }

        const canceled = await paced.cancelTask({ tenant: '', id, metadata: undefined });
        assert.equal(canceled.id, id);
        assert.equal(stateName(canceled.status.state), 'TASK_STATE_CANCELED');

        const rest = (await drain(it)).map((ev) => {
          assert.equal(ev.payload?.$case, 'statusUpdate', `event ${JSON.stringify(ev)}`);
          return ev.payload.value;
        });
        assert.ok(rest.length > 0, 'the stream ended without a final status');
        const last = rest.at(-1);
        assert.equal(stateName(last.status.state), 'TASK_STATE_CANCELED', `last event ${JSON.stringify(last)}`);
        for (const u of rest.slice(0, -1)) {
          assert.equal(stateName(u.status.state), 'TASK_STATE_WORKING');
        }
        const msgs = a2uiOf([...had, ...rest]);
        assert.ok(!componentIds(msgs).includes('submit-label'), 'the whole turn came: it was not cancelled');
        if (msgs.length > 0) {
          captures.add(name(`canceled ${midTurn ? 'mid-turn' : 'at once'}`), msgs, { createSurfaces: 1 });
        }
        assert.equal(stateName((await paced.getTask({ tenant: '', id })).status.state), 'TASK_STATE_CANCELED');
        await rejectsWith(paced.cancelTask({ tenant: '', id, metadata: undefined }), TaskNotCancelableError);
      });
    }

    test('cancelTask of a task waiting for input cancels it; of a finished task fails TaskNotCancelable', async () => {
      const t = checkTurn(await turn(client, userMessage([text('Hello')])));
      captures.add(name('cancel input-required'), t.a2ui, { createSurfaces: 1 });
      const canceled = await client.cancelTask({ tenant: '', id: t.task.id, metadata: undefined });
      assert.equal(stateName(canceled.status.state), 'TASK_STATE_CANCELED');
      await rejectsWith(client.cancelTask({ tenant: '', id: t.task.id, metadata: undefined }), TaskNotCancelableError);
    });

    test('resubscribeTask after a dropped stream sends the task, then the turn from its start', async () => {
      const abort = new AbortController();
      const had = [];
      for await (const ev of paced.sendMessageStream(request(userMessage([text('a form')])), { ...a2ui(), signal: abort.signal })) {
        had.push(ev);
        if (had.length === 3) {
          abort.abort();
          break;
        }
      }
      assert.equal(had[0].payload.$case, 'task');
      const id = had[0].payload.value.id;

      // A2A 1.0, 3.1.6: "The operation MUST return a Task object as the first event in
      // the stream, representing the current state of the task at the time of
      // subscription"; then the turn's status updates in the order they were generated
      // (3.5.2), from its start, each status message under the id it had: the client
      // drops those it has.
      const events = await drainStream(paced.resubscribeTask({ tenant: '', id }, a2ui()));
      assert.equal(events[0].payload?.$case, 'task', `first event ${JSON.stringify(events[0])}`);
      assert.equal(events[0].payload.value.id, id);
      const final = events.at(-1).payload.value;
      assert.equal(events.at(-1).payload.$case, 'statusUpdate');
      assert.equal(stateName(final.status.state), 'TASK_STATE_INPUT_REQUIRED', `last event ${JSON.stringify(final)}`);

      const hadUpdates = had.slice(1).map((ev) => ev.payload.value);
      const updates = events.slice(1).map((ev) => ev.payload.value);
      assert.deepEqual(idsOf(updates.slice(0, hadUpdates.length)), idsOf(hadUpdates));
      const seen = new Set(idsOf(hadUpdates));
      const missed = updates.filter((u) => !seen.has(u.status.message?.messageId));
      const msgs = [...a2uiOf(hadUpdates), ...a2uiOf(missed)];
      captures.add(name('resubscribe'), msgs, { createSurfaces: 1, components: FORM_COMPONENTS });
      assert.equal(countCreateSurface(msgs), 1, `createSurface in ${JSON.stringify(msgs)}`);
      assert.deepEqual(msgs, a2uiOf(updates));
      // The two streams leave the client with the surface the turn built: the task holds
      // its final state.
      const task = await paced.getTask({ tenant: '', id });
      assertFinalState(a2uiOf([task]), msgs);
      assert.equal(textOf(updates), textOf([task]));

      // Once the turn has ended, a resubscription sends the same: the task, then the turn.
      const again = (await drainStream(paced.resubscribeTask({ tenant: '', id }, a2ui()))).slice(1).map((ev) => ev.payload.value);
      assert.equal(stateName(again.at(-1).status.state), 'TASK_STATE_INPUT_REQUIRED');
      assert.deepEqual(idsOf(again), idsOf(updates));
      assert.deepEqual(a2uiOf(again), msgs);
    });

    for (const end of [false, true]) {
      test(`resubscribeTask after an unpaced stream read in part (${end ? 'once written to its end' : 'as it is written'}) sends the turn from its start`, async () => {
        // The offline model answers at once: the server flushes the whole turn faster
        // than the client reads it.
        const abort = new AbortController();
        const had = [];
        for await (const ev of client.sendMessageStream(request(userMessage([text('Book a table for two')])), { ...a2ui(), signal: abort.signal })) {
          had.push(ev);
          if (had.length === 3) {
            if (end) {
              await untilState(client, had[0].payload.value.id, TaskState.TASK_STATE_INPUT_REQUIRED);
            }
            abort.abort();
            break;
          }
        }
        const id = had[0].payload.value.id;
        const events = await drainStream(client.resubscribeTask({ tenant: '', id }, a2ui()));
        assert.equal(events[0].payload?.$case, 'task', `first event ${JSON.stringify(events[0])}`);
        assert.equal(events[0].payload.value.id, id);
        assert.equal(events.at(-1).payload.$case, 'statusUpdate');
        const updates = events.slice(1).map((ev) => ev.payload.value);
        assert.equal(stateName(updates.at(-1).status.state), 'TASK_STATE_INPUT_REQUIRED', `last event ${JSON.stringify(updates.at(-1))}`);

        // The resubscription went to its end: another now sends the whole turn, as it
        // streamed, each status message under its id.
        const turnUpdates = (await drainStream(client.resubscribeTask({ tenant: '', id }, a2ui()))).slice(1).map((ev) => ev.payload.value);
        assert.equal(stateName(turnUpdates.at(-1).status.state), 'TASK_STATE_INPUT_REQUIRED');

        const task = await client.getTask({ tenant: '', id });
        // The task, then the whole turn from its start (A2A 1.0, 3.1.6 and 3.5.2).
        assert.deepEqual(idsOf(updates), idsOf(turnUpdates));
        assert.deepEqual(a2uiOf(updates), a2uiOf(turnUpdates));
        assert.equal(textOf(updates), textOf(turnUpdates));
        // What the client had comes again under the same message ids: dropping those, it
        // holds every message of the turn once.
        const hadUpdates = had.slice(1).map((ev) => ev.payload.value);
        const seen = new Set(hadUpdates.map((u) => u.status.message.messageId));
        for (const u of hadUpdates) {
          const again = updates.find((v) => v.status.message?.messageId === u.status.message.messageId);
          if (again) {
            assert.deepEqual(again.status.message, u.status.message);
          }
        }
        const missed = updates.filter((u) => !seen.has(u.status.message?.messageId));
        const msgs = [...a2uiOf(hadUpdates), ...a2uiOf(missed)];
        captures.add(name(`resubscribe after an unpaced stream${end ? ' written to its end' : ''}`), msgs, { createSurfaces: 1 });
        assert.deepEqual(idsOf([...hadUpdates, ...missed]), idsOf(turnUpdates));
        assert.deepEqual(msgs, a2uiOf(turnUpdates));
        assert.equal(textOf([...hadUpdates, ...missed]), textOf(turnUpdates));
        // So it shows the surface the turn built, whose final state the task holds.
        assertFinalState(a2uiOf([task]), msgs);
        assert.equal(textOf([task]), textOf(turnUpdates));
      });
    }

    test('a second subscriber to a running task gets the whole turn', async () => {
      const it = paced.sendMessageStream(request(userMessage([text('a form')])), a2ui());
      const first = await it.next();
      const id = first.value.payload.value.id;
      const [own, other] = await Promise.all([drain(it), drainStream(paced.resubscribeTask({ tenant: '', id }, a2ui()))]);
      const t = checkTurn([first.value, ...own]);
      captures.add(name('first subscriber'), t.a2ui, { createSurfaces: 1, components: FORM_COMPONENTS });
      assert.equal(other[0].payload?.$case, 'task', `first event ${JSON.stringify(other[0])}`);
      assert.equal(other[0].payload.value.id, id);
      const updates = other.slice(1).map((ev) => ev.payload.value);
      assert.equal(stateName(updates.at(-1).status.state), 'TASK_STATE_INPUT_REQUIRED');
      assert.deepEqual(a2uiOf(updates), t.a2ui);
      assert.equal(textOf(updates), t.text);
    });

    test('sendMessage returns the task at the end of its turn', async () => {
      const task = await client.sendMessage(request(userMessage([text('Hello')])), a2ui());
      assert.ok(task.id && task.status, `sendMessage: ${JSON.stringify(task)}`);
      assert.equal(stateName(task.status.state), 'TASK_STATE_INPUT_REQUIRED');
      const msgs = a2uiOf([task]);
      assert.ok(msgs.length >= 3 && msgs[0].createSurface, `status ${JSON.stringify(task.status)}`);
      captures.add(name('send'), msgs, { createSurfaces: 1 });
      // The turn whole: its surface once, in its final state.
      assertWhole(msgs, 'sendMessage');
    });

    const pdf = part({ $case: 'url', value: 'https://files.example/report.pdf' }, { mediaType: 'application/pdf', filename: 'report.pdf' });
    const reserved = () => userMessage([text('hi')], { metadata: { clientTools: [{ name: 'addOrUpdateSurface' }] } });
    const badAction = () => userMessage([data([{ version: 'v0.9', action: { name: 5 } }])]);

    test('errors of calls surface as the SDK error classes', async () => {
      await rejectsWith(client.getTask({ tenant: '', id: 'no-such-task' }), TaskNotFoundError);
      await rejectsWith(client.cancelTask({ tenant: '', id: 'no-such-task', metadata: undefined }), TaskNotFoundError);
      await rejectsWith(client.sendMessage(request(userMessage([text('hi')], { taskId: 'no-such-task' }))), TaskNotFoundError);
      await rejectsWith(client.sendMessage(request(userMessage([pdf]))), ContentTypeNotSupportedError, (e) =>
        assert.match(e.message, /message\.parts\[0\]/),
      );
      // Invalid params (RequestMalformedError in 1.x), the field named.
      const e = await rejectsWith(client.sendMessage(request(reserved())), RequestMalformedError, (e) =>
        assert.match(e.message, /message\.metadata\.clientTools\[0\]\.name/),
      );
      if (binding === 'JSONRPC') {
        assert.equal(e.envelopeCode, -32602);
      } else {
        assert.equal(e.statusCode, 400);
      }
      await rejectsWith(client.sendMessage(request(badAction())), RequestMalformedError, (e) =>
        assert.match(e.message, /message\.parts\[0\]\.data\[0\]\.action/),
      );
      // Push notifications and task lists are not offered.
      await rejectsWith(client.deleteTaskPushNotificationConfig({ tenant: '', taskId: 'x', id: 'y' }), PushNotificationNotSupportedError);
      await rejectsWith(
        client.listTasks({ tenant: '', contextId: '', status: 0, pageToken: '', statusTimestampAfter: undefined }),
        UnsupportedOperationError,
      );
    });

    test('errors of streams surface as the SDK error classes', async () => {
      await rejectsWith(drainStream(client.resubscribeTask({ tenant: '', id: 'no-such-task' }, a2ui())), TaskNotFoundError);
      await rejectsWith(turn(client, userMessage([text('see this'), pdf])), ContentTypeNotSupportedError, (e) =>
        assert.match(e.message, /message\.parts\[1\]/),
      );
      await rejectsWith(turn(client, reserved()), RequestMalformedError, (e) =>
        assert.match(e.message, /message\.metadata\.clientTools\[0\]\.name/),
      );
      await rejectsWith(turn(client, badAction()), RequestMalformedError, (e) =>
        assert.match(e.message, /message\.parts\[0\]\.data\[0\]\.action/),
      );
    });

    test('a message to a task still working fails UnsupportedOperation', async () => {
      const it = paced.sendMessageStream(request(userMessage([text('a form')])), a2ui());
      const first = await it.next();
      try {
        await rejectsWith(
          paced.sendMessage(request(userMessage([text('and more')], { taskId: first.value.payload.value.id }))),
          UnsupportedOperationError,
        );
      } finally {
        await drain(it);
      }
    });
  });
}

describe('@a2a-js/sdk 1.x JSON-RPC errors the SDK cannot send', () => {
  test('method not found through callExtensionMethod; parse errors and invalid requests raw', async () => {
    const client = await factoryFor('JSONRPC').createFromUrl(GENUI_URL);
    const e = await rejectsWith(client.transport.callExtensionMethod('tasks/nothing', {}, undefined), RequestMalformedError);
    assert.equal(e.envelopeCode, -32601);
    const url = `${GENUI_URL}/a2a/v1`;
    assertRpcError(await rawPost(url, '{'), -32700);
    assertRpcError(await rawPost(url, { jsonrpc: '2.0', id: 1 }), -32600);
    assertRpcError(await rawPost(url, { jsonrpc: '2.0', id: 1, method: 'NoSuchMethod', params: {} }), -32601);
    assertRpcError(await rawPost(url, { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'no-such-task' } }, { 'A2A-Version': '1.0' }), -32001);
  });
});

describe('@a2a-js/sdk 1.x on the v0.3 interface (legacyCompat)', () => {
  let client;
  const recorder = recordingFetch();
  before(async () => {
    // Only the v0.3 interface of the card, so that the factory takes it.
    const res = await fetch(`${GENUI_URL}/.well-known/agent-card.json`);
    const card = await res.json();
    card.supportedInterfaces = card.supportedInterfaces.filter((i) => i.protocolVersion === '0.3');
    client = await new ClientFactory({
      transports: [new JsonRpcTransportFactory({ legacyCompat: { enabled: true }, fetchImpl: recorder })],
    }).createFromAgentCard(card);
  });

  test('streams a turn: one A2UI message per DataPart, X-A2A-Extensions', async () => {
    assert.equal(client.protocolVersion, '0.3');
    assert.equal(client.transport.endpoint, `${GENUI_URL}/a2a`);
    const t = checkTurn(await turn(client, userMessage([text('Book a table')])), { list: false });
    const call = recorder.calls.at(-1);
    assert.equal(call.request.get('X-A2A-Extensions'), EXT_V09);
    assert.equal(call.request.get('A2A-Extensions'), null);
    assert.equal(call.response.get('X-A2A-Extensions'), EXT_V09);
    assert.ok(t.a2ui.length >= 3 && t.a2ui[0].createSurface, JSON.stringify(t.a2ui));
    captures.add('v1 legacyCompat stream', t.a2ui, { createSurfaces: 1 });
    const task = await client.getTask({ tenant: '', id: t.task.id });
    assert.equal(stateName(task.status.state), 'TASK_STATE_INPUT_REQUIRED');
    // The task holds the final state of the A2UI that streamed.
    assertFinalState(a2uiOf([task], { list: false }), t.a2ui);
    await rejectsWith(client.getTask({ tenant: '', id: 'no-such-task' }), TaskNotFoundError);
  });
});
