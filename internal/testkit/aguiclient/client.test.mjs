// @ag-ui/client 1.0 (HttpAgent) against POST /ag-ui: runs with text and surfaces, an
// action through forwardedProps, frontend tools answered every way, a run ending in
// RUN_ERROR, and bad input.
//
//   GENUI_URL=… GENUI_PACED_URL=… A2UI_CATALOG_FILE=… node --test client.test.mjs
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HttpAgent, buildResumeArray } from '@ag-ui/client';
import { A2UI_SCHEMA_CONTEXT_DESCRIPTION } from '@ag-ui/a2ui-middleware';
import {
  BASIC_CATALOG, Captures, GENUI_URL, GET_LOCATION, PACED_URL, Wire, activityStates, checkedRun, componentIds,
  customCatalog, newId, render, requireServers, sendAction, surfaceStates, user,
} from './common.mjs';

requireServers(GENUI_URL, PACED_URL);
const captures = new Captures('client');
after(() => captures.write());

const agentOf = (url, wire, config = {}) => new HttpAgent({ url: `${url}/ag-ui`, threadId: newId(), fetch: wire.fetch, ...config });

describe('a run', () => {
  it('streams text and a surface, and finishes with the usage', async () => {
    const wire = new Wire();
    const agent = agentOf(GENUI_URL, wire);
    agent.addMessage(user('Hello'));
    const r = await checkedRun(agent, wire);
    captures.add('text and a surface', r.events, r.activities);
    assert.deepEqual(r.types.slice(0, 4), ['RUN_STARTED', 'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END']);
    assert.equal(r.types.at(-1), 'RUN_FINISHED');
    assert.deepEqual(r.finished.outcome, 'success');
    const fin = r.events.at(-1);
    assert.equal(fin.threadId, agent.threadId);
    assert.equal(fin.runId, r.request.runId);
    assert.deepEqual(Object.keys(fin.usage[0]).sort(), ['inputTokens', 'model', 'outputTokens', 'provider', 'totalTokens']);

    // The surface: a snapshot of its first message, then a delta for each of the others.
    const kinds = activityStates(r.events).map((s) => s.type);
    assert.ok(kinds.length >= 3, `${kinds}`);
    assert.deepEqual(kinds, ['ACTIVITY_SNAPSHOT', ...kinds.slice(1).map(() => 'ACTIVITY_DELTA')]);

    // The client's messages: the user's, the model's text, and the surface as one
    // activity message holding every message of the surface, in order, which a renderer
    // applies to get the whole surface.
    const [, text, activity] = agent.messages;
    assert.equal(text.role, 'assistant');
    assert.equal(text.content, 'Here is a surface for your message.\n');
    assert.equal(activity.role, 'activity');
    assert.equal(activity.id, 'a2ui-surface-surface-1');
    assert.equal(activity.activityType, 'a2ui-surface');
    const ops = activity.content.a2ui_operations;
    assert.deepEqual(ops[0], { version: 'v0.9', createSurface: { catalogId: BASIC_CATALOG, surfaceId: 'surface-1' } });
    assert.deepEqual(ops, surfaceStates(r.events).at(-1));
    assert.equal(ops.length, kinds.length);
    const surface = render(ops).get('surface-1');
    assert.equal(surface.catalogId, BASIC_CATALOG);
    assert.deepEqual([...surface.components.keys()].sort(), ['body', 'card', 'message', 'reply', 'root', 'send', 'send-label', 'title']);
    assert.equal(surface.components.get('message').text, 'You said: Hello');
    assert.equal(agent.messages.length, 3);
  });

  it('re-sends the surface as it grows, while the model writes', async () => {
    const wire = new Wire();
    const agent = agentOf(PACED_URL, wire);
    agent.addMessage(user('A signup form'));
    const r = await checkedRun(agent, wire);
    captures.add('a paced surface', r.events, r.activities);
    const states = surfaceStates(r.events);
    const sizes = states.map((s) => componentIds(s).length);
    assert.ok(states.length >= 3, `${states.length} states`);
    for (let i = 1; i < sizes.length; i++) assert.ok(sizes[i] >= sizes[i - 1], `the surface shrank: ${sizes}`);
    assert.ok(sizes.some((n) => n > 0 && n < 5), `no partial surface among ${sizes}`);
    assert.deepEqual(componentIds(states.at(-1)).sort(), ['email', 'root', 'submit', 'submit-label', 'title']);
    // Each state is the one before and one message more: a delta per message.
    for (let i = 1; i < states.length; i++) assert.deepEqual(states[i].slice(0, -1), states[i - 1]);
    assert.deepEqual([...render(r.activities.get('a2ui-surface-form')).get('form').components.keys()].sort(), ['email', 'root', 'submit', 'submit-label', 'title']);
    // The first snapshot came well before the end of the run.
    const first = r.events.findIndex((e) => e.type === 'ACTIVITY_SNAPSHOT');
    assert.ok(r.at.at(-1) - r.at[first] > 150, `the first snapshot came ${r.at.at(-1) - r.at[first]} ms before the end`);
    // The text streamed in several pieces.
    assert.ok(r.types.filter((t) => t === 'TEXT_MESSAGE_CONTENT').length >= 1);
    assert.deepEqual(r.events.at(-1).usage, [{ provider: 'googleai', model: 'gemini-2.5-flash', inputTokens: 1200, outputTokens: 340, totalTokens: 1540 }]);
    // One activity message per surface in the client.
    assert.deepEqual(agent.messages.filter((m) => m.role === 'activity').map((m) => m.id), ['a2ui-surface-form']);
  });

  it('answers an action through forwardedProps with a complete surface', async () => {
    const wire = new Wire();
    const agent = agentOf(GENUI_URL, wire);
    agent.addMessage(user('Hello'));
    await checkedRun(agent, wire);
    const r = await checkedRun(agent, wire, { forwardedProps: { a2uiAction: { userAction: sendAction('7pm') } } });
    captures.add('an action through forwardedProps', r.events, r.activities);
    // The client sent the action without the surface it came from.
    assert.deepEqual(r.request.messages.map((m) => m.role), ['user', 'assistant']);
    const last = surfaceStates(r.events).at(-1);
    assert.match(JSON.stringify(last), /You said: the action \\"send\\"/);
    assert.ok(last[0].createSurface, 'the answer is not a whole surface');
    assert.equal(r.finished.outcome, 'success');
  });

  it('asks for a catalog the app sends in its context', async () => {
    const wire = new Wire();
    const agent = agentOf(GENUI_URL, wire);
    agent.addMessage(user('Hello'));
    const catalog = customCatalog();
    const r = await checkedRun(agent, wire, {
      context: [
        { description: "The user's locale", value: 'pt-PT' },
        { description: A2UI_SCHEMA_CONTEXT_DESCRIPTION, value: JSON.stringify(catalog) },
      ],
    });
    captures.add('a catalog from the context', r.events, r.activities);
    assert.equal(surfaceStates(r.events).at(-1)[0].createSurface.catalogId, catalog.catalogId);
  });
});

describe('a frontend tool', () => {
  const tools = [GET_LOCATION];
  const ask = async () => {
    const wire = new Wire();
    const agent = agentOf(GENUI_URL, wire);
    agent.addMessage(user('Where am I? Use getLocation.'));
    const r = await checkedRun(agent, wire, { tools });
    const start = r.events.find((e) => e.type === 'TOOL_CALL_START');
    assert.ok(start, `no call: ${r.types}`);
    const id = start.toolCallId;
    assert.equal(start.toolCallName, 'getLocation');
    assert.deepEqual(r.types.slice(-4), ['TOOL_CALL_START', 'TOOL_CALL_ARGS', 'TOOL_CALL_END', 'RUN_FINISHED']);
    assert.equal(r.finished.outcome, 'interrupt');
    assert.deepEqual(agent.pendingInterrupts, [{
      id, reason: 'tool_call', toolCallId: id,
      message: 'The frontend tool getLocation was called: answer with its result.',
      responseSchema: { description: 'The result of getLocation: any JSON value.' },
    }]);
    // The call hangs from the model's text message, as one assistant message.
    const asked = agent.messages.find((m) => m.toolCalls?.length);
    assert.equal(asked.id, start.parentMessageId);
    assert.deepEqual(asked.toolCalls.map((c) => [c.id, c.function.name, JSON.parse(c.function.arguments)]), [[id, 'getLocation', {}]]);
    return { agent, wire, id };
  };
  // textOf is what the run wrote: its text and its surfaces.
const textOf = (r) => JSON.stringify(r.events);

  it('ends the run with an interrupt, and a resume entry continues it', async () => {
    const { agent, wire, id } = await ask();
    const resume = buildResumeArray(agent.pendingInterrupts, { [id]: { status: 'resolved', payload: { city: 'Porto' } } });
    const r = await checkedRun(agent, wire, { tools, resume });
    captures.add('a frontend tool resumed', r.events, r.activities);
    assert.deepEqual(r.request.resume, [{ interruptId: id, status: 'resolved', payload: { city: 'Porto' } }]);
    assert.match(textOf(r), /Porto/);
    assert.equal(r.finished.outcome, 'success');
    assert.deepEqual(agent.pendingInterrupts, []);
  });

  it('is declined by a cancelled resume entry', async () => {
    const { agent, wire, id } = await ask();
    const resume = buildResumeArray(agent.pendingInterrupts, { [id]: { status: 'cancelled' } });
    const r = await checkedRun(agent, wire, { tools, resume });
    assert.match(textOf(r), /cancelled/);
    assert.equal(r.finished.outcome, 'success');
  });

  it('is answered by a tool message, as CopilotKit does', async () => {
    const { agent, id } = await ask();
    // A frontend keeping its own thread (CopilotKit) runs a new agent on the messages,
    // the tool's result appended.
    const wire = new Wire();
    const next = agentOf(GENUI_URL, wire, {
      threadId: agent.threadId,
      initialMessages: [...structuredClone(agent.messages), { id: newId(), role: 'tool', toolCallId: id, content: '{"city":"Lisbon"}' }],
    });
    const r = await checkedRun(next, wire, { tools });
    captures.add('a frontend tool answered by a tool message', r.events, r.activities);
    assert.match(textOf(r), /Lisbon/);
    assert.equal(r.finished.outcome, 'success');
  });

  it('is answered once: a second answer, or an answer to an unknown call, is a 400 naming the field', async () => {
    const { agent, id } = await ask();
    const answered = [...structuredClone(agent.messages), { id: newId(), role: 'tool', toolCallId: id, content: '"Lisbon"' }];
    for (const [resume, field] of [
      [[{ interruptId: id, status: 'resolved', payload: 'Porto' }], 'resume[0].interruptId'],
      [[{ interruptId: 'no-such-call', status: 'resolved' }], 'resume[0].interruptId'],
    ]) {
      const wire = new Wire();
      const next = agentOf(GENUI_URL, wire, { threadId: agent.threadId, initialMessages: structuredClone(answered) });
      await assert.rejects(next.runAgent({ tools, resume }), (err) => {
        assert.equal(err.status, 400, String(err));
        assert.equal(err.payload.error.status, 'INVALID_ARGUMENT');
        assert.equal(err.payload.error.details.field, field);
        assert.ok(err.payload.error.message.startsWith(`${field}: `), err.payload.error.message);
        return true;
      });
    }
  });
});

describe('a failed run', () => {
  it('ends in RUN_ERROR with a message and a code', async () => {
    const wire = new Wire();
    const agent = agentOf(PACED_URL, wire);
    agent.addMessage(user('A form, and please fail'));
    const r = await checkedRun(agent, wire);
    assert.equal(r.types.at(-1), 'RUN_ERROR');
    assert.ok(!r.types.includes('RUN_FINISHED'));
    assert.equal(r.runErrors.length, 1);
    const [e] = r.runErrors;
    assert.ok(e.message && typeof e.message === 'string', JSON.stringify(e));
    assert.ok(e.code && typeof e.code === 'string', JSON.stringify(e));
  });
});

describe('a runaway turn', () => {
  it('ends in RUN_ERROR naming the limit it reached, after a valid part of its surface', async () => {
    const wire = new Wire();
    const agent = agentOf(PACED_URL, wire);
    agent.addMessage(user('Show me a runaway list'));
    const r = await checkedRun(agent, wire);
    assert.equal(r.types.at(-1), 'RUN_ERROR');
    assert.equal(r.runErrors.length, 1);
    const [e] = r.runErrors;
    assert.equal(e.code, 'RESOURCE_EXHAUSTED');
    assert.deepEqual(e.metadata, { details: { limit: 'components', value: 10000 } });
    assert.match(e.message, /limit components \(10000\)/);
    // The client holds the surface as far as it went: a snapshot and deltas, which a
    // renderer applies to get a surface whose every reference is there (checkedRun).
    const kinds = activityStates(r.events).map((s) => s.type);
    assert.deepEqual(kinds, ['ACTIVITY_SNAPSHOT', ...kinds.slice(1).map(() => 'ACTIVITY_DELTA')]);
    const shown = render(r.activities.get('a2ui-surface-s')).get('s').components.size;
    assert.ok(shown >= 9000 && shown <= 10000, `${shown} components shown`);
    // Each delta is one message: the body is not the surface again with each of them.
    const body = r.frames.reduce((n, f) => n + f.data.length, 0);
    const content = JSON.stringify(r.activities.get('a2ui-surface-s')).length;
    assert.ok(body < 1.2 * content, `${body} bytes of events for a content of ${content}`);
  });
});

describe('bad input', () => {
  it('gets a 400 JSON error naming the field, before any event', async () => {
    const post = (body) => fetch(`${GENUI_URL}/ag-ui`, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' }, body });
    const ok = { threadId: 't', runId: 'r', messages: [{ id: 'm', role: 'user', content: 'hi' }] };
    for (const [body, field] of [
      ['not json', undefined],
      [JSON.stringify({ runId: 'r', messages: [] }), 'threadId'],
      [JSON.stringify({ threadId: 't', messages: [] }), 'runId'],
      [JSON.stringify({ ...ok, messages: {} }), 'messages'],
      [JSON.stringify({ ...ok, messages: [{ id: 'm', role: 'user', content: 5 }] }), 'messages[0].content'],
      [JSON.stringify({ ...ok, tools: [{ name: 'bad name!', description: 'd' }] }), 'tools[0].name'],
      [JSON.stringify({ ...ok, context: [{ description: A2UI_SCHEMA_CONTEXT_DESCRIPTION, value: '{"catalogId":5}' }] }), 'context[0].value'],
    ]) {
      const res = await post(body);
      assert.equal(res.status, 400, body);
      assert.match(res.headers.get('content-type'), /^application\/json/);
      const { error } = await res.json();
      assert.equal(error.status, 'INVALID_ARGUMENT');
      assert.ok(error.message, body);
      if (field) {
        assert.equal(error.details?.field, field, `${body}: ${error.message}`);
        assert.ok(error.message.startsWith(`${field}: `), error.message);
      }
    }
  });

  it('is caught by the client first where it checks the input', async () => {
    // What HttpAgent can still send goes through the same path: its error is the 400.
    const wire = new Wire();
    const agent = agentOf(GENUI_URL, wire);
    agent.addMessage(user('hi'));
    await assert.rejects(agent.runAgent({ context: [{ description: A2UI_SCHEMA_CONTEXT_DESCRIPTION, value: '[]' }] }), (err) => {
      assert.equal(err.status, 400);
      assert.equal(err.payload.error.details.field, 'context[0].value');
      return true;
    });
  });
});

describe('the protobuf encoding', () => {
  it('is answered with SSE, which the client reads', async () => {
    class ProtoAgent extends HttpAgent {
      requestInit(input) {
        const init = super.requestInit(input);
        init.headers.Accept = 'application/vnd.ag-ui.event+proto';
        return init;
      }
    }
    const wire = new Wire();
    const agent = new ProtoAgent({ url: `${GENUI_URL}/ag-ui`, threadId: newId(), fetch: wire.fetch });
    agent.addMessage(user('Hello'));
    const r = await checkedRun(agent, wire);
    assert.equal(r.finished.outcome, 'success');
    assert.ok(surfaceStates(r.events).length > 0);
  });
});
