// Compatibility test: the official Genkit JS client (genkit/beta/client) against the genui
// Go server. The server's base URL comes from GENUI_URL; jsclient_test.go starts a server
// and runs this file with `node --test`.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { before, describe, test } from 'node:test';

import { runFlow, streamFlow } from 'genkit/beta/client';

const GENUI_URL = (process.env.GENUI_URL ?? '').replace(/\/+$/, '');

const conversation = [{ role: 'user', parts: [{ type: 'text', text: 'Hello' }] }];

let catalog;

before(async () => {
  assert.ok(GENUI_URL, 'GENUI_URL must be set to the server base URL');
  const file = new URL('../../../schemas/catalogs/basic.json', import.meta.url);
  catalog = JSON.parse(await readFile(file, 'utf8'));
});

// startSession runs the startSession flow and returns the session id.
async function startSession() {
  return runFlow({
    url: `${GENUI_URL}/startSession`,
    input: { protocolVersion: '0.1.0', catalog },
  });
}

// collect streams one generateUi turn: it iterates the chunks while the output settles.
async function collect(input) {
  const { stream, output } = streamFlow({ url: `${GENUI_URL}/generateUi`, input });
  const chunks = [];
  for await (const chunk of stream) {
    chunks.push(chunk);
  }
  return { chunks, output: await output };
}

function assertSurfaceRequest(req) {
  assert.equal(req.name, 'addOrUpdateSurface');
  assert.equal(typeof req.input, 'object');
  assert.equal(typeof req.input.surfaceId, 'string');
  assert.ok(req.input.surfaceId.length > 0, 'surfaceId is empty');
  assert.ok(req.input.definition, 'definition missing');
  assert.equal(typeof req.input.definition.root, 'string');
  assert.ok(req.input.definition.root.length > 0, 'definition.root is empty');
  assert.ok(Array.isArray(req.input.definition.widgets), 'definition.widgets is not an array');
  assert.ok(req.input.definition.widgets.length > 0, 'definition.widgets is empty');
}

function assertTurn({ chunks, output }) {
  assert.ok(chunks.length > 0, 'no chunk streamed');
  const requests = chunks
    .flatMap((c) => (Array.isArray(c.content) ? c.content : []))
    .map((p) => p.toolRequest)
    .filter((r) => r && r.name === 'addOrUpdateSurface');
  assert.ok(requests.length > 0, `no addOrUpdateSurface tool request in ${JSON.stringify(chunks)}`);
  requests.forEach(assertSurfaceRequest);

  assert.equal(typeof output, 'object');
  assert.ok(output.message, 'output.message missing');
  assert.ok(Array.isArray(output.message.content), 'output.message.content is not an array');
  assert.equal(output.finishReason, 'stop');
}

describe('genkit/beta/client against genui', () => {
  test('runFlow /startSession returns a session id', async () => {
    const id = await startSession();
    assert.equal(typeof id, 'string');
    assert.ok(id.length >= 22, `session id too short: ${id}`);
    assert.match(id, /^[A-Za-z0-9_-]+$/, 'session id is not URL-safe');
  });

  test('streamFlow /generateUi with a session', async () => {
    const sessionId = await startSession();
    assertTurn(await collect({ sessionId, conversation }));
  });

  test('streamFlow /generateUi stateless (catalog in every request)', async () => {
    assertTurn(await collect({ catalog, conversation }));
  });

  test('runFlow /generateUi with Accept: application/json', async () => {
    const sessionId = await startSession();
    const result = await runFlow({
      url: `${GENUI_URL}/generateUi`,
      input: { sessionId, conversation },
      headers: { Accept: 'application/json' },
    });
    assert.equal(typeof result, 'object');
    assert.ok(Array.isArray(result.toolRequests), `no toolRequests in ${JSON.stringify(result)}`);
    const requests = result.toolRequests.filter((r) => r.name === 'addOrUpdateSurface');
    assert.ok(requests.length > 0, `no addOrUpdateSurface in ${JSON.stringify(result.toolRequests)}`);
    requests.forEach(assertSurfaceRequest);
    assert.ok(Array.isArray(result.message?.content), 'message.content is not an array');
    assert.equal(result.finishReason, 'stop');
  });

  test('streamFlow /generateUi with an unknown session rejects', async () => {
    const { stream, output } = streamFlow({
      url: `${GENUI_URL}/generateUi`,
      input: { sessionId: 'no-such-session', conversation },
    });
    const want = /NOT_FOUND|unknown or expired session/;
    // Iterate at once: the client's channel rejects a promise that must have a listener.
    const drain = (async () => {
      for await (const _ of stream) {
        // no chunk expected
      }
    })();
    await assert.rejects(output, want);
    await assert.rejects(drain, want);
  });

  test('runFlow /startSession with an invalid catalog rejects', async () => {
    await assert.rejects(
      runFlow({ url: `${GENUI_URL}/startSession`, input: { protocolVersion: '0.1.0', catalog: 'not an object' } }),
      /catalog: got string, want object/,
    );
  });

  test('runFlow /startSession without protocolVersion rejects', async () => {
    await assert.rejects(
      runFlow({ url: `${GENUI_URL}/startSession`, input: { catalog } }),
      /400.*INVALID_ARGUMENT.*protocolVersion: required/,
    );
  });
});

describe('A2UI through genkit/beta/client', () => {
  // The A2UI chunks of a generateA2ui stream: Genkit's A2UI data part, one message each.
  const envelopes = (chunks) =>
    chunks
      .flatMap((c) => (Array.isArray(c.content) ? c.content : []))
      .filter((p) => p.data && p.metadata?.mimeType === 'application/a2ui+json')
      .flatMap((p) => p.data.envelopes);

  test('streamFlow /generateA2ui streams A2UI messages as data parts', async () => {
    const { stream, output } = streamFlow({ url: `${GENUI_URL}/generateA2ui`, input: { conversation } });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    const msgs = envelopes(chunks);
    assert.ok(msgs.length >= 3, `too few A2UI messages: ${JSON.stringify(chunks)}`);
    assert.equal(msgs[0].version, 'v0.9');
    assert.equal(msgs[0].createSurface.catalogId, 'https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json');
    assert.ok(msgs.some((m) => m.updateComponents?.components.some((c) => c.id === 'root')), 'no root component');
    const out = await output;
    assert.equal(out.finishReason, 'stop');
  });

  test('runFlow /generateA2ui (JSON) holds the messages in the output message', async () => {
    const out = await runFlow({
      url: `${GENUI_URL}/generateA2ui`,
      input: { version: 'v0.8', conversation },
      headers: { Accept: 'application/json' },
    });
    const part = out.message.content.find((p) => p.metadata?.mimeType === 'application/a2ui+json');
    assert.ok(part, `no A2UI data part in ${JSON.stringify(out)}`);
    assert.ok(part.data.envelopes.some((m) => m.beginRendering), 'no beginRendering in a v0.8 turn');
  });

  test('runFlow /startSession with A2UI capabilities, then a turn', async () => {
    const sessionId = await runFlow({
      url: `${GENUI_URL}/startSession`,
      input: { protocolVersion: '0.1.0', a2uiClientCapabilities: { 'v0.9': { supportedCatalogIds: ['https://a2ui.org/specification/v0_9/catalogs/minimal/catalog.json'] } } },
    });
    const { stream, output } = streamFlow({ url: `${GENUI_URL}/generateA2ui`, input: { sessionId, conversation } });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    assert.equal(envelopes(chunks)[0].createSurface.catalogId, 'https://a2ui.org/specification/v0_9/catalogs/minimal/catalog.json');
    await output;
  });

  test('an A2UI request with an unknown version rejects', async () => {
    await assert.rejects(
      runFlow({ url: `${GENUI_URL}/generateA2ui`, input: { version: 'v3', conversation }, headers: { Accept: 'application/json' } }),
      /400.*INVALID_ARGUMENT.*version/,
    );
  });
});

describe('durable streams', () => {
  test('streamFlow resumes a stream by its id', async () => {
    const sessionId = await startSession();
    const input = { sessionId, conversation };
    const first = streamFlow({ url: `${GENUI_URL}/generateUi`, input });
    const firstChunks = [];
    for await (const chunk of first.stream) firstChunks.push(chunk);
    const firstOutput = await first.output;
    const streamId = await first.streamId;
    assert.ok(typeof streamId === 'string' && streamId.length >= 22, `stream id ${streamId}`);

    const resumed = streamFlow({ url: `${GENUI_URL}/generateUi`, input, streamId });
    const resumedChunks = [];
    for await (const chunk of resumed.stream) resumedChunks.push(chunk);
    assert.deepEqual(resumedChunks, firstChunks);
    assert.deepEqual(await resumed.output, firstOutput);
  });

  test('an unknown stream id is "not found"', async () => {
    const resumed = streamFlow({
      url: `${GENUI_URL}/generateUi`,
      input: { sessionId: 'x', conversation },
      streamId: 'no-such-stream',
    });
    const drain = (async () => {
      for await (const _ of resumed.stream) {
        // nothing arrives
      }
    })();
    await assert.rejects(resumed.output, /NOT_FOUND|not found/i);
    await drain.catch(() => {});
  });
});

describe('client tools through genkit/beta/client', () => {
  const clientTools = [
    { name: 'getLocation', description: "The user's city", inputSchema: { type: 'object', properties: { precise: { type: 'boolean' } } } },
    { name: 'confirm', description: 'Asks the user to confirm' },
  ];
  const ask = { role: 'user', parts: [{ type: 'text', text: 'Where am I? Use getLocation' }] };
  // The interrupts of a list of parts: Genkit's toolRequest parts with metadata.interrupt.
  const interrupts = (parts) => parts.filter((p) => p.toolRequest && p.metadata?.interrupt);

  test('a call streams as a Genkit interrupt and the output is interrupted', async () => {
    const { chunks, output } = await collect({ catalog, clientTools, conversation: [ask] });
    const streamed = interrupts(chunks.flatMap((c) => c.content ?? []));
    assert.equal(streamed.length, 1, `no interrupt chunk in ${JSON.stringify(chunks)}`);
    assert.equal(streamed[0].toolRequest.name, 'getLocation');
    assert.deepEqual(streamed[0].toolRequest.input, {});
    assert.equal(output.finishReason, 'interrupted');
    const listed = interrupts(output.message.content);
    assert.deepEqual(listed, streamed, 'the output lists the streamed call');
  });

  test('the continuation shows the result; a second turn of calls; an error result', async () => {
    const first = await collect({ catalog, clientTools, conversation: [ask] });
    const [call] = interrupts(first.output.message.content);
    const callId = call.toolRequest.ref;
    const history = [
      ask,
      { role: 'model', parts: [{ type: 'text', text: 'Calling getLocation.' }, { type: 'toolCall', callId, name: 'getLocation', input: call.toolRequest.input }] },
    ];
    const answered = await collect({
      catalog,
      conversation: [...history, { role: 'user', parts: [{ type: 'toolResult', callId, name: 'getLocation', output: { city: 'Berlin' } }] }],
    });
    assertTurn(answered);
    assert.match(JSON.stringify(answered.chunks), /getLocation returned city: Berlin/);

    const failed = await collect({
      catalog,
      conversation: [...history, { role: 'user', parts: [{ type: 'toolResult', callId, name: 'getLocation', error: 'denied' }] }],
    });
    assert.match(JSON.stringify(failed.chunks), /getLocation failed: denied/);

    const two = await collect({ catalog, clientTools, conversation: [{ role: 'user', parts: [{ type: 'text', text: 'use getLocation and confirm' }] }] });
    assert.deepEqual(interrupts(two.output.message.content).map((p) => p.toolRequest.name), ['getLocation', 'confirm']);
  });

  test('a second call in the continued turn comes after the surface', async () => {
    const ask2 = { role: 'user', parts: [{ type: 'text', text: 'Where am I? Use getLocation, then confirm' }] };
    const first = await collect({ catalog, clientTools, conversation: [ask2] });
    const [call] = interrupts(first.output.message.content);
    assert.equal(call.toolRequest.name, 'getLocation');
    const callId = call.toolRequest.ref;
    const next = await collect({
      catalog,
      clientTools,
      conversation: [
        ask2,
        { role: 'model', parts: [{ type: 'toolCall', callId, name: 'getLocation', input: {} }] },
        { role: 'user', parts: [{ type: 'toolResult', callId, name: 'getLocation', output: { city: 'Rome' } }] },
      ],
    });
    const parts = next.chunks.flatMap((c) => c.content ?? []);
    const surfaceAt = parts.findIndex((p) => p.toolRequest?.name === 'addOrUpdateSurface');
    const callAt = parts.findIndex((p) => p.toolRequest?.name === 'confirm' && p.metadata?.interrupt);
    assert.ok(surfaceAt >= 0 && callAt > surfaceAt, `surface then call in ${JSON.stringify(next.chunks)}`);
    assert.equal(next.output.finishReason, 'interrupted');
    assert.deepEqual(interrupts(next.output.message.content).map((p) => p.toolRequest.name), ['confirm']);
  });

  test('a held conversation: the next request sends only the result', async () => {
    const conversationId = `js-conv-${Date.now()}`;
    const first = await collect({ catalog, clientTools, conversationId, conversation: [ask] });
    const [call] = interrupts(first.output.message.content);
    const next = await collect({
      catalog,
      conversationId,
      conversation: [{ role: 'user', parts: [{ type: 'toolResult', callId: call.toolRequest.ref, name: 'getLocation', output: { city: 'Oslo' } }] }],
    });
    assertTurn(next);
    assert.match(JSON.stringify(next.chunks), /getLocation returned city: Oslo/);
    await assert.rejects(
      runFlow({
        url: `${GENUI_URL}/generateUi`,
        input: { catalog, conversationId, conversation: [{ role: 'user', parts: [{ type: 'toolResult', callId: call.toolRequest.ref, name: 'getLocation', output: {} }] }] },
        headers: { Accept: 'application/json' },
      }),
      /409.*ABORTED.*answered already/,
    );
  });

  test('an A2UI turn calls a client tool', async () => {
    const { stream, output } = streamFlow({ url: `${GENUI_URL}/generateA2ui`, input: { clientTools, conversation: [ask] } });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    assert.equal(interrupts(chunks.flatMap((c) => c.content ?? [])).length, 1);
    assert.equal((await output).finishReason, 'interrupted');
  });
});
