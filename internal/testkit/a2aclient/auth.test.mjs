// The official A2A SDK (@a2a-js/sdk 1.x and 0.3.x) against the agent with authentication:
// the open card advertising the schemes, the refusals of a client without credentials
// (-31401 on JSON-RPC, 401 on HTTP+JSON), clients passing an API key through their
// transport's fetchImpl, and the tasks and contexts of one caller, which another caller
// cannot reach.
// auth_test.go starts the server and runs this file with `node --test`.
//
//   GENUI_URL=… GENUI_ALICE_KEY=… GENUI_BOB_KEY=… node --test auth.test.mjs
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';

import { Role, TaskState } from 'a2a-v1';
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
  ServiceParameters,
  createAuthenticatingFetchWithRetry,
  withA2AExtensions,
} from 'a2a-v1/client';
import { JsonRpcTransportError, TaskNotFoundError, isRestError } from 'a2a-v1/errors';
import * as v03 from 'a2a-v03/client';

import { EXT_V09, GENUI_URL, MIME_A2UI, newId, recordingFetch } from './common.mjs';

const ALICE = process.env.GENUI_ALICE_KEY ?? '';
const BOB = process.env.GENUI_BOB_KEY ?? '';

// What the server answers a request without credentials, or with a key it does not know.
const NO_CREDENTIALS = 'credentials required: send Authorization: Bearer <key or token>, or X-API-Key';
const UNKNOWN_KEY = 'invalid credentials: unknown API key';
const rpcRefusal = (message, field = 'Authorization') => ({ jsonrpc: '2.0', id: null, error: { code: -31401, message, data: { status: 'UNAUTHENTICATED', field } } });

const a2ui = () => ({ serviceParameters: ServiceParameters.create(withA2AExtensions(EXT_V09)) });

function userMessage(text, extra = {}) {
  return {
    messageId: newId(),
    contextId: '',
    taskId: '',
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
    ...extra,
  };
}
const request = (message) => ({ tenant: '', message, configuration: undefined, metadata: undefined });
const v03Message = (text, extra = {}) => ({ message: { kind: 'message', role: 'user', messageId: newId(), parts: [{ kind: 'text', text }], ...extra } });
const stateName = (s) => TaskState[s] ?? String(s);

// The A2UI messages of a 1.0 task's status (each DataPart holds a list of them).
const a2uiOf = (task) =>
  (task.status?.message?.parts ?? [])
    .filter((p) => p.content?.$case === 'data' && p.mediaType === MIME_A2UI)
    .flatMap((p) => p.content.value);
const surfaceOf = (task) => a2uiOf(task).find((m) => m.createSurface)?.createSurface.surfaceId;

// keyFetch is the fetchImpl an app gives the SDK's transports to send a caller's key:
// the SDK's own authenticating fetch, its handler supplying the header on every request.
const keyFetch = (headers) =>
  createAuthenticatingFetchWithRetry(fetch, { headers: async () => headers, shouldRetryWithHeaders: async () => undefined });
const bearer = (key) => keyFetch({ Authorization: `Bearer ${key}` });

// v1Client is an @a2a-js/sdk 1.x client of binding (JSONRPC or HTTP+JSON) whose
// transports fetch with fetchImpl (none: the global fetch, no credentials).
function v1Client(binding, fetchImpl) {
  const transports = fetchImpl ? { transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })] } : {};
  const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { preferredTransports: [binding], ...transports });
  return new ClientFactory(options).createFromUrl(GENUI_URL);
}

function v03Client(fetchImpl) {
  const transports = fetchImpl ? { transports: [new v03.JsonRpcTransportFactory({ fetchImpl })] } : {};
  return new v03.ClientFactory(v03.ClientFactoryOptions.createFrom(v03.ClientFactoryOptions.default, transports)).createFromUrl(GENUI_URL);
}

async function drainStream(stream) {
  const out = [];
  for await (const ev of stream) out.push(ev);
  return out;
}

// rejectsWith checks that a call fails with an error of class cls (directly, or as the
// cause of a stream's error), and returns that error.
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

before(() => {
  assert.ok(GENUI_URL, 'GENUI_URL must be set to the base URL of the server');
  assert.ok(ALICE && BOB && ALICE !== BOB, 'GENUI_ALICE_KEY and GENUI_BOB_KEY must be two API keys');
});

describe('the agent card', () => {
  const schemes = {
    apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
    bearer: { type: 'http', scheme: 'Bearer' },
  };
  // checkCard checks the schemes and requirements of a card as the server wrote it (both
  // A2A lines' fields) or as an SDK resolved it.
  function checkCard(card) {
    assert.deepEqual(Object.keys(card.securitySchemes).sort(), ['apiKey', 'bearer']);
    for (const [name, want] of Object.entries(schemes)) {
      for (const [k, v] of Object.entries(want)) {
        assert.equal(card.securitySchemes[name][k], v, `securitySchemes.${name}.${k} of ${JSON.stringify(card.securitySchemes)}`);
      }
      assert.equal(typeof card.securitySchemes[name].description, 'string');
    }
    assert.equal(card.securitySchemes.bearer.bearerFormat, undefined, 'bearerFormat JWT without a JWT verifier');
    // Either scheme will do: v0.3's security and 1.0's securityRequirements.
    assert.deepEqual(card.security, [{ apiKey: [] }, { bearer: [] }]);
    assert.deepEqual(card.securityRequirements, [{ schemes: { apiKey: [] } }, { schemes: { bearer: [] } }]);
  }

  test('is served without credentials at both paths, listing the schemes and requiring one', async () => {
    for (const path of ['/.well-known/agent-card.json', '/a2a/.well-known/agent-card.json']) {
      const res = await fetch(GENUI_URL + path);
      assert.equal(res.status, 200, path);
      const card = await res.json();
      checkCard(card);
      assert.deepEqual(card.supportedInterfaces.map((i) => i.url), [`${GENUI_URL}/a2a`, `${GENUI_URL}/a2a/v1`, `${GENUI_URL}/a2a/v1/rest`]);
    }
  });

  test('is resolved by both SDK lines without credentials', async () => {
    checkCard(await new DefaultAgentCardResolver().resolve(GENUI_URL));
    checkCard(await new v03.DefaultAgentCardResolver().resolve(GENUI_URL));
    // A client is made of the card alone; its calls are what need the key.
    const client = await v1Client('JSONRPC');
    checkCard(await client.getAgentCard());
  });
});

describe('a client without credentials', () => {
  test('1.x JSON-RPC: every call fails with the -31401 error the server sent', async () => {
    const client = await v1Client('JSONRPC');
    const check = (e) => {
      assert.equal(e.envelopeCode, -31401);
      assert.equal(e.message, NO_CREDENTIALS);
      assert.deepEqual(e.data, { status: 'UNAUTHENTICATED', field: 'Authorization' });
      assert.deepEqual(e.errorResponse, rpcRefusal(NO_CREDENTIALS));
    };
    await rejectsWith(client.sendMessage(request(userMessage('Hello')), a2ui()), JsonRpcTransportError, check);
    await rejectsWith(drainStream(client.sendMessageStream(request(userMessage('Hello')), a2ui())), JsonRpcTransportError, check);
    await rejectsWith(client.getTask({ tenant: '', id: 'no-such-task' }), JsonRpcTransportError, check);
  });

  test('1.x HTTP+JSON: every call fails with a 401 REST error', async () => {
    const client = await v1Client('HTTP+JSON');
    assert.equal(client.transport.protocolName, 'HTTP+JSON');
    const check = (e) => {
      assert.ok(isRestError(e), `not a REST error: ${e?.constructor?.name}`);
      assert.equal(e.statusCode, 401);
      assert.equal(e.message, NO_CREDENTIALS);
    };
    await rejectsWith(client.sendMessage(request(userMessage('Hello')), a2ui()), Error, check);
    await rejectsWith(drainStream(client.sendMessageStream(request(userMessage('Hello')), a2ui())), Error, check);
    await rejectsWith(client.getTask({ tenant: '', id: 'no-such-task' }), Error, check);
  });

  test('0.3.x JSON-RPC: sendMessage fails with the -31401 error', async () => {
    const client = await v03Client();
    await rejectsWith(client.sendMessage(v03Message('Hello')), Error, (e) => {
      assert.deepEqual(e.errorResponse, rpcRefusal(NO_CREDENTIALS));
      assert.match(e.message, /\(Code: -31401\)/);
    });
  });

  test('raw: every JSON-RPC route answers 401, WWW-Authenticate and the JSON-RPC error', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'GetTask', params: { id: 'no-such-task' } });
    for (const path of ['/a2a', '/a2a/v1', '/']) {
      for (const [headers, challenge, message, field] of [
        [{}, 'Bearer realm="genui"', NO_CREDENTIALS],
        [{ Authorization: 'Bearer not-a-key-0123456789' }, 'Bearer realm="genui", error="invalid_token"', UNKNOWN_KEY],
        [{ 'X-API-Key': 'not-a-key-0123456789' }, 'Bearer realm="genui", error="invalid_token"', UNKNOWN_KEY, 'X-API-Key'],
        [{ Authorization: `Basic ${Buffer.from(`alice:${ALICE}`).toString('base64')}` }, 'Bearer realm="genui", error="invalid_token"',
          'invalid credentials: the Authorization scheme must be Bearer'],
      ]) {
        const res = await fetch(GENUI_URL + path, { method: 'POST', headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0', ...headers }, body });
        const what = `${path} ${JSON.stringify(headers)}`;
        assert.equal(res.status, 401, what);
        assert.equal(res.headers.get('www-authenticate'), challenge, what);
        assert.equal(res.headers.get('content-type'), 'application/json', what);
        assert.deepEqual(await res.json(), rpcRefusal(message, field), what);
      }
    }
  });

  test('raw: the HTTP+JSON routes answer 401 with the binding\'s google.rpc.Status error', async () => {
    for (const [method, path] of [['POST', '/a2a/v1/rest/message:send'], ['GET', '/a2a/v1/rest/tasks/no-such-task']]) {
      const res = await fetch(GENUI_URL + path, { method, headers: { 'Content-Type': 'application/json' }, body: method === 'POST' ? '{}' : undefined });
      assert.equal(res.status, 401, path);
      assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="genui"');
      assert.deepEqual(await res.json(), { error: { code: 401, status: 'UNAUTHENTICATED', message: NO_CREDENTIALS, details: [
        { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'UNAUTHENTICATED', domain: 'a2a-protocol.org', metadata: { field: 'Authorization' } }] } });
    }
  });
});

describe('callers with API keys', () => {
  let alice; // 1.x JSON-RPC, Authorization: Bearer
  let bob; // 1.x JSON-RPC, X-API-Key
  let task; // alice's first task
  before(async () => {
    alice = await v1Client('JSONRPC', bearer(ALICE));
    bob = await v1Client('JSONRPC', keyFetch({ 'X-API-Key': BOB }));
    task = await alice.sendMessage(request(userMessage('Hello')), a2ui());
  });

  test("alice's client sends a message and gets her task, which she reads again", async () => {
    assert.ok(task.id && task.contextId, JSON.stringify(task));
    assert.equal(stateName(task.status.state), 'TASK_STATE_INPUT_REQUIRED');
    assert.equal(surfaceOf(task), 'surface-1');
    const again = await alice.getTask({ tenant: '', id: task.id });
    assert.equal(again.id, task.id);
    assert.deepEqual(a2uiOf(again), a2uiOf(task));
  });

  test('the fetchImpl sent the key on every call', async () => {
    const recorder = recordingFetch();
    const client = await v1Client('JSONRPC', createAuthenticatingFetchWithRetry(recorder, {
      headers: async () => ({ Authorization: `Bearer ${ALICE}` }),
      shouldRetryWithHeaders: async () => undefined,
    }));
    const events = await drainStream(client.sendMessageStream(request(userMessage('Hello')), a2ui()));
    assert.equal(events[0].payload.$case, 'task');
    assert.equal(stateName(events.at(-1).payload.value.status.state), 'TASK_STATE_INPUT_REQUIRED');
    assert.ok(recorder.calls.length > 0);
    for (const c of recorder.calls) assert.equal(c.request.get('authorization'), `Bearer ${ALICE}`, c.url);
  });

  test("bob's client cannot reach alice's task: TaskNotFoundError, as for an id that never existed", async () => {
    // message names the id; the rest of the error is the same.
    const same = (mine, unknown, id) => {
      assert.equal(mine.constructor, unknown.constructor);
      assert.equal(mine.envelopeCode, -32001);
      assert.equal(mine.envelopeCode, unknown.envelopeCode);
      assert.equal(mine.message, unknown.message.replace('no-such-task', id));
    };
    const calls = [
      (id) => bob.getTask({ tenant: '', id }),
      (id) => bob.cancelTask({ tenant: '', id, metadata: undefined }),
      (id) => drainStream(bob.resubscribeTask({ tenant: '', id }, a2ui())),
      (id) => bob.sendMessage(request(userMessage('mine now', { taskId: id })), a2ui()),
    ];
    for (const call of calls) {
      const unknown = await rejectsWith(call('no-such-task'), TaskNotFoundError);
      const mine = await rejectsWith(call(task.id), TaskNotFoundError);
      same(mine, unknown, task.id);
    }
    // Alice's task is as her turn left it: bob's cancel did nothing.
    assert.equal(stateName((await alice.getTask({ tenant: '', id: task.id })).status.state), 'TASK_STATE_INPUT_REQUIRED');
  });

  test("bob's message in alice's context starts a conversation of his own", async () => {
    const ctx = task.contextId;
    const theirs = await bob.sendMessage(request(userMessage('Again', { contextId: ctx })), a2ui());
    // The offline model numbers the surfaces of a conversation: bob's is a first one, as
    // in a context that never existed; alice's conversation goes on past his turn.
    assert.equal(surfaceOf(theirs), 'surface-1');
    const fresh = await bob.sendMessage(request(userMessage('Again', { contextId: `never-${newId()}` })), a2ui());
    assert.equal(surfaceOf(fresh), 'surface-1');
    const mine = await alice.sendMessage(request(userMessage('Again', { contextId: ctx })), a2ui());
    assert.equal(mine.contextId, ctx);
    assert.equal(surfaceOf(mine), 'surface-2');
    // Each reads their own task of the context, not the other's.
    await rejectsWith(alice.getTask({ tenant: '', id: theirs.id }), TaskNotFoundError);
    assert.equal((await bob.getTask({ tenant: '', id: theirs.id })).id, theirs.id);
  });

  test('HTTP+JSON with the key works; bob gets a 404 TaskNotFoundError for alice\'s task', async () => {
    const rest = await v1Client('HTTP+JSON', keyFetch({ 'X-API-Key': ALICE }));
    assert.equal(rest.transport.protocolName, 'HTTP+JSON');
    const t = await rest.sendMessage(request(userMessage('Hello')), a2ui());
    assert.equal(stateName(t.status.state), 'TASK_STATE_INPUT_REQUIRED');
    assert.equal(surfaceOf(t), 'surface-1');
    // One task store behind every interface: the task and alice's first one.
    assert.equal((await rest.getTask({ tenant: '', id: t.id })).id, t.id);
    assert.equal((await rest.getTask({ tenant: '', id: task.id })).id, task.id);
    const bobRest = await v1Client('HTTP+JSON', bearer(BOB));
    const unknown = await rejectsWith(bobRest.getTask({ tenant: '', id: 'no-such-task' }), TaskNotFoundError);
    const mine = await rejectsWith(bobRest.getTask({ tenant: '', id: t.id }), TaskNotFoundError, (e) => assert.equal(e.statusCode, 404));
    assert.equal(mine.statusCode, unknown.statusCode);
    assert.equal(mine.message, unknown.message.replace('no-such-task', t.id));
  });

  test('0.3.x with the key in its fetchImpl works; bob gets TaskNotFoundError for alice\'s task', async () => {
    const client = await v03Client(bearer(ALICE));
    const t = await client.sendMessage(v03Message('Hello'));
    assert.equal(t.kind, 'task');
    assert.equal(t.status.state, 'input-required');
    const other = await v03Client(bearer(BOB));
    const unknown = await rejectsWith(other.getTask({ id: 'no-such-task' }), v03.TaskNotFoundError);
    for (const id of [t.id, task.id]) {
      const mine = await rejectsWith(other.getTask({ id }), v03.TaskNotFoundError);
      assert.equal(mine.message, unknown.message);
    }
    assert.equal((await client.getTask({ id: task.id })).id, task.id);
  });

  test('an authentication handler that answers the 401 challenge gets through on the retry', async () => {
    const challenges = [];
    let stored;
    const handler = {
      headers: async () => stored ?? {},
      shouldRetryWithHeaders: async (_req, res) => {
        if (res.status !== 401) return undefined;
        challenges.push(res.headers.get('www-authenticate'));
        return { Authorization: `Bearer ${ALICE}` };
      },
      onSuccessfulRetry: async (headers) => {
        stored = headers;
      },
    };
    const client = await v1Client('JSONRPC', createAuthenticatingFetchWithRetry(fetch, handler));
    const t = await client.sendMessage(request(userMessage('Hello')), a2ui());
    assert.equal(stateName(t.status.state), 'TASK_STATE_INPUT_REQUIRED');
    assert.deepEqual(challenges, ['Bearer realm="genui"']);
    // The key kept, the next call needs no challenge.
    assert.equal((await client.getTask({ tenant: '', id: t.id })).id, t.id);
    assert.equal(challenges.length, 1);
  });
});
