// The same runs with @ag-ui/a2ui-middleware 0.0.10 in front of POST /ag-ui, as CopilotKit
// apps use it: the middleware sends the app's catalog in the context, adds its
// render_a2ui tool and its guide, and logs an action as a log_a2ui_event call and result.
// The service writes A2UI itself: the middleware's tools are not frontend tools.
//
//   GENUI_URL=… GENUI_PACED_URL=… A2UI_CATALOG_FILE=… node --test middleware.test.mjs
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HttpAgent, buildResumeArray } from '@ag-ui/client';
import { A2UIMiddleware, A2UI_SCHEMA_CONTEXT_DESCRIPTION, LOG_A2UI_EVENT_TOOL_NAME, RENDER_A2UI_TOOL_NAME } from '@ag-ui/a2ui-middleware';
import {
  Captures, GENUI_URL, GET_LOCATION, PACED_URL, Wire, checkedRun, componentIds, customCatalog,
  newId, render, requireServers, sendAction, surfaceStates, user,
} from './common.mjs';

requireServers(GENUI_URL, PACED_URL);
const captures = new Captures('middleware');
after(() => captures.write());

const catalog = customCatalog();

function agentOf(url, wire) {
  const agent = new HttpAgent({ url: `${url}/ag-ui`, threadId: newId(), fetch: wire.fetch });
  agent.use(new A2UIMiddleware({ schema: catalog, injectA2UITool: true }));
  return agent;
}

const run = (agent, wire, params) => checkedRun(agent, wire, params, { middleware: true });
// textOf is what the run wrote: its text and its surfaces.
const textOf = (r) => JSON.stringify(r.events);

describe('through @ag-ui/a2ui-middleware', () => {
  it('a run draws its surface with the catalog the app gave the middleware', async () => {
    const wire = new Wire();
    const agent = agentOf(GENUI_URL, wire);
    agent.addMessage(user('Hello'));
    const r = await run(agent, wire);
    captures.add('middleware: a surface', r.events, r.activities);
    // What the middleware sent: its tool, the catalog and its guide in the context.
    assert.deepEqual(r.request.tools.map((t) => t.name), [RENDER_A2UI_TOOL_NAME]);
    assert.ok(r.request.context.some((c) => c.description === A2UI_SCHEMA_CONTEXT_DESCRIPTION));
    // The service wrote the surface itself, with that catalog; no tool was called.
    assert.ok(!r.types.some((t) => t.startsWith('TOOL_CALL')), `${r.types}`);
    const last = surfaceStates(r.events).at(-1);
    assert.equal(last[0].createSurface.catalogId, catalog.catalogId);
    assert.ok(componentIds(last).includes('root'));
    // The client's activity message, which the middleware left as the server built it.
    assert.equal(render(r.activities.get('a2ui-surface-surface-1')).get('surface-1').catalogId, catalog.catalogId);
    assert.equal(r.finished.outcome, 'success');
    assert.deepEqual(agent.messages.filter((m) => m.role === 'activity').map((m) => m.id), ['a2ui-surface-surface-1']);
  });

  it('a surface grows while the model writes, and the run finishes', async () => {
    const wire = new Wire();
    const agent = agentOf(PACED_URL, wire);
    agent.addMessage(user('A signup form'));
    const r = await run(agent, wire);
    captures.add('middleware: a paced surface', r.events, r.activities);
    const sizes = surfaceStates(r.events).map((s) => componentIds(s).length);
    assert.ok(sizes.length >= 3 && sizes.some((n) => n > 0 && n < 5), `${sizes}`);
    assert.equal(r.types.at(-1), 'RUN_FINISHED');
  });

  it('an action logged as a log_a2ui_event pair gets one complete surface', async () => {
    const wire = new Wire();
    const agent = agentOf(GENUI_URL, wire);
    agent.addMessage(user('Hello'));
    await run(agent, wire);
    const r = await run(agent, wire, { forwardedProps: { a2uiAction: { userAction: sendAction('8pm') } } });
    captures.add('middleware: an action', r.events, r.activities);
    // The middleware appended the call and its result; the action also stayed in forwardedProps.
    const [call, result] = r.request.messages.slice(-2);
    assert.equal(call.toolCalls[0].function.name, LOG_A2UI_EVENT_TOOL_NAME);
    assert.equal(result.role, 'tool');
    assert.ok(r.request.forwardedProps.a2uiAction.userAction);
    // The model saw the action, and answered with a whole surface.
    const last = surfaceStates(r.events).at(-1);
    assert.match(JSON.stringify(last), /You said: the action \\"send\\"/);
    assert.ok(last[0].createSurface);
  });

  it('a frontend tool beside the middleware\'s ends in an interrupt and is resumed', async () => {
    const wire = new Wire();
    const agent = agentOf(GENUI_URL, wire);
    agent.addMessage(user('Where am I? Use getLocation.'));
    const r = await run(agent, wire, { tools: [GET_LOCATION] });
    assert.deepEqual(r.request.tools.map((t) => t.name).sort(), ['getLocation', RENDER_A2UI_TOOL_NAME]);
    assert.equal(r.finished.outcome, 'interrupt');
    const [pending] = agent.pendingInterrupts;
    assert.equal(pending.reason, 'tool_call');
    const next = await run(agent, wire, {
      tools: [GET_LOCATION],
      resume: buildResumeArray(agent.pendingInterrupts, { [pending.id]: { status: 'resolved', payload: { city: 'Faro' } } }),
    });
    captures.add('middleware: a frontend tool resumed', next.events, next.activities);
    assert.match(textOf(next), /Faro/);
    assert.equal(next.finished.outcome, 'success');
  });

  it('a failed run ends in RUN_ERROR', async () => {
    const wire = new Wire();
    const agent = agentOf(PACED_URL, wire);
    agent.addMessage(user('Just text, and please fail'));
    const r = await run(agent, wire);
    assert.equal(r.types.at(-1), 'RUN_ERROR');
    assert.equal(r.runErrors.length, 1);
    assert.ok(r.runErrors[0].message && r.runErrors[0].code);
  });
});
