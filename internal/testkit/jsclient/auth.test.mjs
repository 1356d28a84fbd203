// The official Genkit JS client (genkit/beta/client) against the server with
// authentication: runFlow and streamFlow reject with the 401 without a key, work with one
// in their headers option; and what one caller's calls leave on the server (durable
// streams, sessions, held conversations) is, to another caller, what an id that never
// existed is. auth_test.go starts the server and runs this file with `node --test`.
//
//   GENUI_URL=… GENUI_ALICE_KEY=… GENUI_BOB_KEY=… node --test auth.test.mjs
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { before, describe, test } from 'node:test';

import { runFlow, streamFlow } from 'genkit/beta/client';

const GENUI_URL = (process.env.GENUI_URL ?? '').replace(/\/+$/, '');
const ALICE = { Authorization: `Bearer ${process.env.GENUI_ALICE_KEY ?? ''}` };
const BOB = { 'X-API-Key': process.env.GENUI_BOB_KEY ?? '' };
const JSON_ANSWER = { Accept: 'application/json' };

const NO_CREDENTIALS = 'credentials required: send Authorization: Bearer <key or token>, or X-API-Key';
const refusal = (message, field = 'Authorization') => ({ error: { status: 'UNAUTHENTICATED', message, details: { field } } });
// What the client throws for a stream id the server does not know (its 204).
const STREAM_NOT_FOUND = 'NOT_FOUND: Stream not found.';

const text = (t) => ({ role: 'user', parts: [{ type: 'text', text: t }] });
const conversation = [text('Hello')];
const clientTools = [{ name: 'getLocation', description: "The user's city", inputSchema: { type: 'object', properties: {} } }];

let catalog;

before(async () => {
  assert.ok(GENUI_URL, 'GENUI_URL must be set to the server base URL');
  assert.ok(process.env.GENUI_ALICE_KEY && process.env.GENUI_BOB_KEY, 'GENUI_ALICE_KEY and GENUI_BOB_KEY must be set');
  const file = new URL('../../../schemas/catalogs/basic.json', import.meta.url);
  catalog = JSON.parse(await readFile(file, 'utf8'));
});

// rejectsWithStatus checks the client's error for an HTTP error: "Server returned:
// <status>: <body>", and the body.
async function rejectsWithStatus(promise, status, body) {
  await assert.rejects(promise, (err) => {
    const m = /^Server returned: (\d+): ([\s\S]*)$/.exec(err.message);
    assert.ok(m, `not the client's HTTP error: ${err.message}`);
    assert.equal(Number(m[1]), status, err.message);
    assert.deepEqual(JSON.parse(m[2]), body);
    return true;
  });
}

// stream runs streamFlow and reads it to its end: its chunks, output and stream id, or the
// error it rejected with (the stream and the output reject alike).
async function stream(options) {
  const { stream: chunks, output, streamId } = streamFlow(options);
  const got = [];
  const drained = (async () => {
    for await (const c of chunks) got.push(c);
  })();
  try {
    const out = await output;
    await drained;
    return { chunks: got, output: out, streamId: await streamId };
  } catch (error) {
    await assert.rejects(drained, (e) => e.message === error.message);
    return { chunks: got, error, streamId: await streamId };
  }
}

const surfaceIds = (result) => result.toolRequests.filter((r) => r.name === 'addOrUpdateSurface').map((r) => r.input.surfaceId);
const startSession = (headers) => runFlow({ url: `${GENUI_URL}/startSession`, input: { protocolVersion: '0.1.0', catalog }, headers });

describe('without credentials', () => {
  test('runFlow rejects with the 401 and its JSON error', async () => {
    await rejectsWithStatus(startSession(), 401, refusal(NO_CREDENTIALS));
    await rejectsWithStatus(
      runFlow({ url: `${GENUI_URL}/generateUi`, input: { catalog, conversation }, headers: { ...JSON_ANSWER, Authorization: 'Bearer not-a-key-0123456789' } }),
      401,
      refusal('invalid credentials: unknown API key'),
    );
  });

  test('streamFlow rejects, its output and its stream, with the 401; no stream id', async () => {
    const r = await stream({ url: `${GENUI_URL}/generateUi`, input: { catalog, conversation } });
    assert.deepEqual(r.chunks, []);
    await rejectsWithStatus(Promise.reject(r.error), 401, refusal(NO_CREDENTIALS));
    assert.equal(r.streamId, null);
  });

  test('raw: 401 with the challenge', async () => {
    const res = await fetch(`${GENUI_URL}/generateUi`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="genui"');
    assert.deepEqual(await res.json(), refusal(NO_CREDENTIALS));
  });
});

describe('with a key in the headers option', () => {
  test('runFlow /startSession, then a streamFlow /generateUi turn to its result', async () => {
    const sessionId = await startSession(ALICE);
    assert.match(sessionId, /^[A-Za-z0-9_-]{22,}$/);
    const r = await stream({ url: `${GENUI_URL}/generateUi`, input: { sessionId, conversation }, headers: ALICE });
    assert.equal(r.error, undefined, String(r.error));
    assert.ok(r.chunks.some((c) => c.content?.some((p) => p.toolRequest?.name === 'addOrUpdateSurface')), JSON.stringify(r.chunks));
    assert.equal(r.output.finishReason, 'stop');
    assert.match(r.streamId, /^[A-Za-z0-9_-]{22}$/);
  });

  test('X-API-Key works as well: runFlow /generateA2ui', async () => {
    const out = await runFlow({ url: `${GENUI_URL}/generateA2ui`, input: { conversation }, headers: { ...BOB, ...JSON_ANSWER } });
    assert.equal(out.finishReason, 'stop');
  });
});

describe("alice's things, as bob", () => {
  test("resuming alice's stream yields what a never-existing stream id yields", async () => {
    const sessionId = await startSession(ALICE);
    const input = { sessionId, conversation };
    const first = await stream({ url: `${GENUI_URL}/generateUi`, input, headers: ALICE });
    assert.equal(first.error, undefined, String(first.error));
    const id = first.streamId;

    // Through the client's streamId option.
    for (const streamId of [id, `never-${randomUUID()}`]) {
      const r = await stream({ url: `${GENUI_URL}/generateUi`, input, streamId, headers: BOB });
      assert.equal(r.error?.message, STREAM_NOT_FOUND, `${streamId}: ${r.error ?? 'resumed'}`);
      assert.deepEqual(r.chunks, []);
      assert.equal(r.streamId, null);
    }
    // Raw: 204, no body, the same headers.
    const answers = [];
    for (const streamId of [id, 'no-such-stream']) {
      const res = await fetch(`${GENUI_URL}/generateUi`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream', 'X-Genkit-Stream-Id': streamId, ...BOB },
        body: JSON.stringify({ data: input }),
      });
      const headers = [...res.headers].filter(([k]) => k !== 'date' && k !== 'x-request-id');
      answers.push({ status: res.status, headers, body: await res.text() });
    }
    assert.equal(answers[0].status, 204);
    assert.equal(answers[0].body, '');
    assert.deepEqual(answers[0], answers[1]);

    // Alice resumes it: the same chunks and output.
    const again = await stream({ url: `${GENUI_URL}/generateUi`, input, streamId: id, headers: ALICE });
    assert.deepEqual(again.chunks, first.chunks);
    assert.deepEqual(again.output, first.output);
    assert.equal(again.streamId, id);
  });

  test("alice's session is an unknown session", async () => {
    const sessionId = await startSession(ALICE);
    for (const id of [sessionId, 'no-such-session-1']) {
      await rejectsWithStatus(
        runFlow({ url: `${GENUI_URL}/generateUi`, input: { sessionId: id, conversation }, headers: { ...BOB, ...JSON_ANSWER } }),
        404,
        { error: { status: 'NOT_FOUND', message: 'sessionId: unknown or expired session; call /startSession again', details: { field: 'sessionId' } } },
      );
    }
    const mine = await runFlow({ url: `${GENUI_URL}/generateUi`, input: { sessionId, conversation }, headers: { ...ALICE, ...JSON_ANSWER } });
    assert.equal(mine.finishReason, 'stop');
  });

  test("a conversationId of alice's names a conversation of bob's own", async () => {
    const conversationId = `shared-${randomUUID()}`;
    const say = async (headers, t) =>
      surfaceIds(await runFlow({ url: `${GENUI_URL}/generateUi`, input: { catalog, conversationId, conversation: [text(t)] }, headers: { ...headers, ...JSON_ANSWER } }));
    // The offline model numbers the surfaces of a conversation: each caller's count on.
    assert.deepEqual(await say(ALICE, 'one'), ['surface-1']);
    assert.deepEqual(await say(ALICE, 'two'), ['surface-2']);
    assert.deepEqual(await say(BOB, 'three'), ['surface-1']);
    assert.deepEqual(await say(ALICE, 'four'), ['surface-3']);
    assert.deepEqual(await say(BOB, 'five'), ['surface-2']);
  });

  test("a result for alice's pending call is refused as one for a call that never was", async () => {
    const conversationId = `calls-${randomUUID()}`;
    const ask = await runFlow({
      url: `${GENUI_URL}/generateUi`,
      input: { catalog, clientTools, conversationId, conversation: [text('Where am I? Use getLocation')] },
      headers: { ...ALICE, ...JSON_ANSWER },
    });
    assert.equal(ask.finishReason, 'interrupted');
    const callId = ask.message.content.find((p) => p.toolRequest?.name === 'getLocation').toolRequest.ref;
    // A made-up id of the same form: of a call in a conversation of that name.
    const madeUp = `${randomUUID().replaceAll('-', '').slice(0, 22)}.${callId.split('.')[1]}`;
    const answer = (id, city) => [{ role: 'user', parts: [{ type: 'toolResult', callId: id, name: 'getLocation', output: { city } }] }];

    // Bob answers it in his conversation of that name, and in another: whatever he gets,
    // he gets for the made-up id too.
    for (const cid of [conversationId, `other-${randomUUID()}`]) {
      const errors = [];
      for (const id of [callId, madeUp]) {
        await assert.rejects(
          runFlow({ url: `${GENUI_URL}/generateUi`, input: { catalog, conversationId: cid, conversation: answer(id, 'Paris') }, headers: { ...BOB, ...JSON_ANSWER } }),
          (err) => {
            assert.match(err.message, /^Server returned: (400|409): /);
            errors.push(err.message.replaceAll(id, '<id>'));
            return true;
          },
        );
      }
      assert.equal(errors[0], errors[1], cid);
    }

    // Alice's call still waits for her answer.
    const done = await runFlow({ url: `${GENUI_URL}/generateUi`, input: { catalog, conversationId, conversation: answer(callId, 'Oslo') }, headers: { ...ALICE, ...JSON_ANSWER } });
    assert.equal(done.finishReason, 'stop');
    assert.match(JSON.stringify(done), /getLocation returned city: Oslo/);
  });
});
