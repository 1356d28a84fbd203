// A2UI over AG-UI in real headless Chromium: the AG-UI client is the official one
// (@ag-ui/client 1.0.0, HttpAgent) running here in node, the surfaces are drawn by the
// official A2UI web renderer (@a2ui/lit + @a2ui/web_core, the playground's bundle) in a
// minimal page. A surface comes as an activity: an ACTIVITY_SNAPSHOT of its first
// message, then an ACTIVITY_DELTA appending each next one, which the client applies to
// the activity message's content. After each of them node hands the page that content as
// the client holds it, and the page draws it, as an AG-UI frontend does: anew after a
// snapshot, the new messages applied to its renderer after a delta. The first states of
// a surface are partial (some of its components only), and each is drawn and checked
// before the next event is read. The user's action, emitted by the rendered button, comes
// back to node and goes to the agent in the next run, as
// forwardedProps.a2uiAction.userAction; the answer's surface is drawn.
//
//   GENUI_URL=http://localhost:3400/ node --test agui.test.mjs
//
// GENUI_URL serves the AG-UI endpoint (POST /ag-ui) on the offline model and this
// directory's agui-page.html and agui-page.js at /e2e/ (go test ./web/ starts such a
// server). AGUI_RECORD, if set, is a file to write what crossed the wire as node saw it,
// for the Go test to validate: {"states": [{"run", "messageId", "type", "operations"}, …]
// (an activity's content after each of its events), "sent": [every
// forwardedProps.a2uiAction sent]}. Env as in playground.test.mjs: CHROMIUM, ARTIFACTS.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { HttpAgent } from '@ag-ui/client';
import { useBrowser } from './browser.mjs';

const BASE = new URL(process.env.GENUI_URL || 'http://localhost:3400/').href;
const ARTIFACTS = path.resolve(process.env.ARTIFACTS || fileURLToPath(new URL('../../test-artifacts', import.meta.url)));
const RECORD = process.env.AGUI_RECORD || '';
const WAIT = 15_000;
const TEST = { timeout: 60_000 };

const BASIC = 'https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json';

mkdirSync(ARTIFACTS, { recursive: true });

const browser = useBrowser();
const shotPath = (name) => path.join(ARTIFACTS, `agui-a2ui-v09-${name}.png`);
const shot = (page, name) => page.screenshot({ path: shotPath(name), fullPage: true });

/** What crossed the wire, for AGUI_RECORD. */
const record = { states: [], sent: [] };

const sleep = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

/** Waits until locator matches n elements. */
async function waitCount(locator, n, what) {
  const end = Date.now() + WAIT;
  let count;
  while ((count = await locator.count()) !== n) {
    if (Date.now() > end) assert.fail(`${what}: ${count} drawn, want ${n}`);
    await sleep(25);
  }
}

/** The surface id of an activity's content: that of its createSurface, which comes first. */
function surfaceIdOf(operations) {
  const id = operations[0]?.createSurface?.surfaceId;
  assert.ok(id, `an activity content that does not start with createSurface: ${JSON.stringify(operations)}`);
  return id;
}

/**
 * What an activity's content should show: its components (by id, the latest version of
 * each) reachable from root, the literal texts of its Text components and the labels of
 * its TextFields among them, and how many buttons and text fields they hold. Children not
 * (yet) in the content are left out.
 */
function expected(operations) {
  const byId = new Map();
  for (const op of operations) {
    for (const c of op.updateComponents?.components ?? []) byId.set(c.id, c);
  }
  const reached = new Set();
  const visit = (id) => {
    const c = byId.get(id);
    if (!c || reached.has(id)) return;
    reached.add(id);
    const children = Array.isArray(c.children) ? c.children : [c.children?.componentId].filter(Boolean);
    for (const child of [c.child, ...children]) if (typeof child === 'string') visit(child);
  };
  visit('root');
  const shown = [...reached].map((id) => byId.get(id));
  return {
    ids: [...byId.keys()],
    texts: shown.flatMap((c) => (c.component === 'Text' && typeof c.text === 'string' ? [c.text] : [])),
    labels: shown.flatMap((c) => (c.component === 'TextField' && typeof c.label === 'string' ? [c.label] : [])),
    buttons: shown.filter((c) => c.component === 'Button').length,
    fields: shown.filter((c) => c.component === 'TextField').length,
  };
}

/**
 * Checks the content of an a2ui-surface activity after one of its events, as the client
 * holds it: after a snapshot, the snapshot's operations; after a delta, the content before
 * and the message the delta appends. Then draws it in the page and checks the drawing: one
 * surface, the renderer's own element, showing exactly what the content holds. Returns
 * what was drawn, with a screenshot of it.
 */
async function drawState(page, run, event, operations, before) {
  const replace = event.type === 'ACTIVITY_SNAPSHOT';
  assert.ok(Array.isArray(operations) && operations.length > 0, `an a2ui-surface activity without operations after ${JSON.stringify(event)}`);
  if (replace) {
    assert.equal(event.replace, true, JSON.stringify(event));
    assert.deepEqual(operations, event.content.a2ui_operations, 'the client holds other operations than the snapshot');
  } else {
    assert.ok(before, `a delta of an activity the run has not sent: ${JSON.stringify(event)}`);
    assert.deepEqual(event.patch, [{ op: 'add', path: '/a2ui_operations/-', value: event.patch[0]?.value }], JSON.stringify(event));
    assert.deepEqual(operations, [...before, event.patch[0].value], 'the client did not append the delta\'s message');
  }
  record.states.push({ run, messageId: event.messageId, type: event.type, operations });
  const surfaceId = surfaceIdOf(operations);
  assert.equal(event.messageId, `a2ui-surface-${surfaceId}`);
  assert.ok(operations.every((m) => m.version === 'v0.9'), JSON.stringify(operations));
  assert.equal(operations[0].createSurface.catalogId, BASIC);
  assert.equal(operations.filter((m) => m.createSurface).length, 1, 'one createSurface per activity');

  const refused = await page.evaluate(([id, ops, r]) => window.agui.draw(id, ops, r), [event.messageId, operations, replace]);
  assert.equal(refused, null, `the renderer refused a message of ${JSON.stringify(operations)}`);

  const activity = page.getByRole('region', { name: 'Surfaces' }).locator(`[data-message-id="${event.messageId}"]`);
  await waitCount(activity.locator('[data-surface-id]'), 1, `surfaces of ${event.messageId}`);
  const drawn = activity.locator(`[data-surface-id="${surfaceId}"] a2ui-surface`);
  assert.equal(await drawn.count(), 1);
  const want = expected(operations);
  for (const text of [...want.texts, ...want.labels]) await drawn.getByText(text, { exact: true }).first().waitFor();
  await waitCount(drawn.getByRole('button'), want.buttons, `buttons of ${event.messageId}`);
  await waitCount(drawn.getByRole('textbox'), want.fields, `text fields of ${event.messageId}`);
  const png = want.ids.includes('root') ? await page.screenshot({ fullPage: true }) : null;
  return { run, messageId: event.messageId, type: event.type, surfaceId, operations, ...want, png };
}

/**
 * Runs the agent once with the official client: every event is seen in order (the client
 * waits for each subscriber before the next event). The client applies an event to its
 * messages after its subscribers saw it, so an a2ui-surface activity event's content is
 * read from the messages the next event's subscribers get (the run ends with
 * RUN_FINISHED or RUN_ERROR, after every activity event), and drawn and checked then.
 * The client swallows a subscriber's errors, so the first is kept, and thrown once the
 * run is over.
 */
async function streamRun(agent, page, run, parameters) {
  const out = { events: [], text: '', states: [], input: null, finished: null, error: null };
  const problems = [];
  const held = new Map(); // each activity's content after its last event
  let pending = null; // the activity event the client applies after its subscribers
  const result = await agent.runAgent(parameters, {
    async onEvent({ event, input, messages }) {
      out.events.push(event.type);
      out.input ??= input;
      if (problems.length > 0) return; // the run has failed: read the rest without drawing it
      try {
        if (pending) {
          const message = messages.find((m) => m.id === pending.messageId);
          assert.equal(message?.role, 'activity', `no activity message ${pending.messageId}`);
          assert.equal(message.activityType, 'a2ui-surface');
          const operations = structuredClone(message.content?.a2ui_operations);
          out.states.push(await drawState(page, run, pending, operations, held.get(pending.messageId)));
          held.set(pending.messageId, operations);
          pending = null;
        }
        switch (event.type) {
          case 'TEXT_MESSAGE_CONTENT':
            out.text += event.delta;
            break;
          case 'RUN_FINISHED':
            out.finished = event;
            break;
          case 'RUN_ERROR':
            out.error = event;
            break;
          case 'ACTIVITY_SNAPSHOT':
          case 'ACTIVITY_DELTA':
            assert.equal(event.activityType, 'a2ui-surface', JSON.stringify(event));
            pending = structuredClone(event);
            break;
          default:
        }
      } catch (e) {
        problems.push(e);
      }
    },
    onRunFailed({ error }) {
      problems.push(error);
    },
  });
  if (problems.length > 0) throw problems[0];
  assert.equal(pending, null, 'an activity event was the last of the run');
  assert.equal(out.error, null, `the run ended with RUN_ERROR: ${JSON.stringify(out.error)}`);
  assert.ok(out.finished, `the run did not finish: ${out.events.join(' ')}`);
  assert.equal(out.events[0], 'RUN_STARTED', out.events.join(' '));
  assert.equal(out.events.at(-1), 'RUN_FINISHED', out.events.join(' '));
  assert.equal(out.finished.runId, parameters.runId);
  assert.equal(out.finished.threadId, agent.threadId);
  assert.deepEqual(out.finished.outcome, { type: 'success' });
  // The client's activity messages hold the last state of each.
  for (const [id, operations] of held) {
    assert.deepEqual(agent.messages.find((m) => m.id === id)?.content, { a2ui_operations: operations });
  }
  return { ...out, result };
}

/** Whether a state is partial: it lacks components the last one of its surface has. */
function partial(s, last) {
  return s.messageId === last.messageId && s.ids.includes('root') && last.ids.some((id) => !s.ids.includes(id));
}

describe('A2UI v0.9 over AG-UI: @ag-ui/client in node, @a2ui/lit in Chromium', () => {
  let page;
  let actions; // the actions the page emitted, in order
  let nextAction; // resolves with the next one

  before(async () => {
    const context = await browser().newContext({ viewport: { width: 900, height: 700 } });
    page = await context.newPage();
    page.setDefaultTimeout(WAIT);
    page.problems = [];
    page.on('pageerror', (e) => page.problems.push(`pageerror: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') page.problems.push(`console: ${m.text()}`);
    });
    actions = [];
    let waiting = null;
    nextAction = () => new Promise((resolve) => { waiting = resolve; });
    await page.exposeFunction('onA2uiAction', (action) => {
      actions.push(action);
      waiting?.(action);
      waiting = null;
    });
    await page.goto(new URL('e2e/agui-page.html', BASE).href);
    await page.getByRole('status').filter({ hasText: 'Renderer ready: @a2ui/lit 0.11.0 + @a2ui/web_core 0.11.0' }).waitFor();
    assert.equal(await page.evaluate(() => window.agui.catalogId), BASIC);
  });

  after(async () => {
    if (RECORD) writeFileSync(RECORD, JSON.stringify(record));
    await page?.context().close();
  });

  it('a surface streams in as an activity snapshot then deltas, partial states first; its button\'s action goes back in the next run', TEST, async () => {
    const agent = new HttpAgent({ url: new URL('ag-ui', BASE).href, threadId: `thread-${randomUUID()}` });
    agent.addMessage({ id: randomUUID(), role: 'user', content: 'Show me a sign-up form' });

    // Run 1: the surface grows message by message: a snapshot drawn anew, then deltas
    // whose messages the page's renderer applies.
    const first = await streamRun(agent, page, 1, { runId: randomUUID(), tools: [], context: [] });
    assert.deepEqual(first.input.messages.map((m) => m.role), ['user']);
    assert.match(first.text, /Here is a surface for your message\./);
    assert.ok(first.states.length >= 3, `${first.states.length} states`);
    assert.deepEqual(first.states.map((s) => s.type), ['ACTIVITY_SNAPSHOT', ...first.states.slice(1).map(() => 'ACTIVITY_DELTA')]);
    const last = first.states.at(-1);
    assert.equal(last.surfaceId, 'surface-1');
    assert.ok(first.states.every((s) => s.messageId === last.messageId), 'one surface, one activity message');
    for (let i = 1; i < first.states.length; i++) {
      const [prev, s] = [first.states[i - 1], first.states[i]];
      assert.ok(prev.ids.every((id) => s.ids.includes(id)), `state ${i + 1} lost components of state ${i}`);
    }

    // A partial state was drawn, without errors, as it was: its texts, and no button
    // yet. The fullest one is kept as a screenshot.
    const partials = first.states.filter((s) => partial(s, last));
    assert.ok(partials.length > 0, `no partial state: ${first.states.map((s) => s.ids.join(',')).join(' | ')}`);
    const shown = partials.findLast((s) => s.texts.length > 0) ?? partials.at(-1);
    assert.ok(shown.buttons < last.buttons || shown.texts.length < last.texts.length, JSON.stringify(shown.ids));
    writeFileSync(shotPath('partial'), shown.png);
    assert.deepEqual(await page.evaluate(() => window.agui.state.rejected), []);
    assert.deepEqual(page.problems, [], 'the page logged errors');

    // The final state: the whole surface, the renderer's own elements, one renderer that
    // drew the snapshot and applied every delta.
    const drawn = page.locator('[data-surface-id="surface-1"] a2ui-surface');
    assert.equal(await drawn.count(), 1);
    await drawn.getByText('Offline reply', { exact: true }).waitFor();
    await drawn.getByText('You said: Show me a sign-up form', { exact: true }).waitFor();
    await drawn.getByText('Reply', { exact: true }).waitFor();
    assert.equal(await drawn.getByRole('textbox').count(), 1);
    const button = drawn.getByRole('button', { name: 'Send', exact: true });
    await button.waitFor();
    assert.deepEqual(await page.evaluate(() => ['a2ui-surface', 'a2ui-basic-button'].filter((n) => customElements.get(n))),
      ['a2ui-surface', 'a2ui-basic-button']);
    assert.deepEqual(await page.evaluate(() => [window.agui.state.drawn, window.agui.state.updated]), [1, first.states.length - 1]);
    await shot(page, 'surface');

    // The user types a reply and clicks Send: the renderer emits the action, its context
    // resolved from the data model the text field is bound to.
    await drawn.getByRole('textbox').fill('yes');
    const emitted = nextAction();
    await button.click();
    const action = await emitted;
    const { timestamp, ...rest } = action;
    assert.deepEqual(rest, { name: 'send', surfaceId: 'surface-1', sourceComponentId: 'send', context: { reply: 'yes' } });
    assert.ok(!Number.isNaN(Date.parse(timestamp)), `timestamp ${timestamp}`);

    // Run 2: the action, as forwardedProps.a2uiAction.userAction, with the thread's
    // messages as the client keeps them (it leaves the activity messages out). The server
    // no longer sees the surface, so the answer is a complete surface of its own.
    const a2uiAction = { userAction: action };
    record.sent.push(a2uiAction);
    const second = await streamRun(agent, page, 2, { runId: randomUUID(), tools: [], context: [], forwardedProps: { a2uiAction } });
    assert.deepEqual(second.input.forwardedProps, { a2uiAction });
    assert.deepEqual(second.input.messages.map((m) => m.role), ['user', 'assistant']);
    assert.ok(second.states.length >= 1, 'the answer draws a surface');
    assert.equal(second.states[0].type, 'ACTIVITY_SNAPSHOT');
    const answer = second.states.at(-1);
    assert.notEqual(answer.messageId, last.messageId, 'a new surface beside the first');
    const again = page.locator(`[data-surface-id="${answer.surfaceId}"] a2ui-surface`);
    await again.getByText('You said: the action "send"', { exact: true }).waitFor();
    await again.getByRole('button', { name: 'Send', exact: true }).waitFor();
    assert.equal(await page.locator('[data-surface-id]').count(), 2, 'the first surface and the answer');
    await drawn.getByText('You said: Show me a sign-up form', { exact: true }).waitFor();
    await shot(page, 'action');

    assert.equal(actions.length, 1, JSON.stringify(actions));
    const state = await page.evaluate(() => window.agui.state);
    assert.equal(state.drawn + state.updated, first.states.length + second.states.length);
    assert.equal(state.drawn, 2, 'each surface drawn anew once, from its snapshot');
    assert.deepEqual(state.rejected, [], 'the renderer refused server messages');
    assert.deepEqual(state.clientErrors, [], 'a surface reported an error');
    assert.deepEqual(page.problems, [], 'the page logged errors');
  });
});
