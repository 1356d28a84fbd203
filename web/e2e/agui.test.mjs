// A2UI over AG-UI in real headless Chromium: the AG-UI client is the official one
// (@ag-ui/client 1.0.0, HttpAgent) running here in node, the surfaces are drawn by the
// official A2UI web renderer (@a2ui/lit + @a2ui/web_core, the playground's bundle) in a
// minimal page. Node runs the agent and hands the page every a2ui-surface activity
// snapshot as it arrives, and the page draws each anew, as an AG-UI frontend does: the
// first snapshots of a surface are partial (some of its components only), and each is
// drawn and checked before the next is read. The user's action, emitted by the rendered
// button, comes back to node and goes to the agent in the next run, as
// forwardedProps.a2uiAction.userAction; the answer's surface is drawn.
//
//   GENUI_URL=http://localhost:3400/ node --test agui.test.mjs
//
// GENUI_URL serves the AG-UI endpoint (POST /ag-ui) on the offline model and this
// directory's agui-page.html and agui-page.js at /e2e/ (go test ./web/ starts such a
// server). AGUI_RECORD, if set, is a file to write what crossed the wire as node saw it,
// for the Go test to validate: {"snapshots": [{"run", "messageId", "operations"}, …],
// "sent": [every forwardedProps.a2uiAction sent]}. Env as in playground.test.mjs:
// CHROMIUM, ARTIFACTS.
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
const record = { snapshots: [], sent: [] };

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

/** The surface id of a snapshot: that of its createSurface, which comes first. */
function surfaceIdOf(operations) {
  const id = operations[0]?.createSurface?.surfaceId;
  assert.ok(id, `a snapshot that does not start with createSurface: ${JSON.stringify(operations)}`);
  return id;
}

/**
 * What a snapshot should show: its components (by id) reachable from root, the literal
 * texts of its Text components and the labels of its TextFields among them, and how many
 * buttons and text fields they hold. Children not (yet) in the snapshot are left out.
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
 * Draws one a2ui-surface snapshot in the page and checks the drawing: one surface, the
 * renderer's own element, showing exactly what the snapshot holds. Returns what was
 * drawn, with a screenshot of it.
 */
async function drawSnapshot(page, run, event) {
  const operations = event.content?.a2ui_operations;
  assert.ok(Array.isArray(operations) && operations.length > 0, `an a2ui-surface snapshot without operations: ${JSON.stringify(event)}`);
  record.snapshots.push({ run, messageId: event.messageId, operations });
  const surfaceId = surfaceIdOf(operations);
  assert.equal(event.messageId, `a2ui-surface-${surfaceId}`);
  assert.ok(operations.every((m) => m.version === 'v0.9'), JSON.stringify(operations));
  assert.equal(operations[0].createSurface.catalogId, BASIC);
  assert.equal(operations.filter((m) => m.createSurface).length, 1, 'one createSurface per snapshot');

  const refused = await page.evaluate(([id, ops]) => window.agui.draw(id, ops), [event.messageId, operations]);
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
  return { run, messageId: event.messageId, surfaceId, operations, ...want, png };
}

/**
 * Runs the agent once with the official client: every event is seen in order (the client
 * waits for each subscriber before the next event), every a2ui-surface snapshot is drawn
 * and checked before the next is read. The client swallows a subscriber's errors, so
 * the first is kept, and thrown once the run is over.
 */
async function streamRun(agent, page, run, parameters) {
  const out = { events: [], text: '', snapshots: [], input: null, finished: null, error: null };
  const problems = [];
  const result = await agent.runAgent(parameters, {
    async onEvent({ event, input }) {
      out.events.push(event.type);
      out.input ??= input;
      if (problems.length > 0) return; // the run has failed: read the rest without drawing it
      try {
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
            assert.equal(event.activityType, 'a2ui-surface', JSON.stringify(event));
            out.snapshots.push(await drawSnapshot(page, run, event));
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
  assert.equal(out.error, null, `the run ended with RUN_ERROR: ${JSON.stringify(out.error)}`);
  assert.ok(out.finished, `the run did not finish: ${out.events.join(' ')}`);
  assert.equal(out.events[0], 'RUN_STARTED', out.events.join(' '));
  assert.equal(out.events.at(-1), 'RUN_FINISHED', out.events.join(' '));
  assert.equal(out.finished.runId, parameters.runId);
  assert.equal(out.finished.threadId, agent.threadId);
  assert.deepEqual(out.finished.outcome, { type: 'success' });
  return { ...out, result };
}

/** Whether a snapshot is partial: it lacks components the last one of its surface has. */
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

  it('a surface streams in as activity snapshots, partial ones first; its button\'s action goes back in the next run', TEST, async () => {
    const agent = new HttpAgent({ url: new URL('ag-ui', BASE).href, threadId: `thread-${randomUUID()}` });
    agent.addMessage({ id: randomUUID(), role: 'user', content: 'Show me a sign-up form' });

    // Run 1: the surface grows snapshot by snapshot, each drawn anew.
    const first = await streamRun(agent, page, 1, { runId: randomUUID(), tools: [], context: [] });
    assert.deepEqual(first.input.messages.map((m) => m.role), ['user']);
    assert.match(first.text, /Here is a surface for your message\./);
    assert.ok(first.snapshots.length >= 3, `${first.snapshots.length} snapshots`);
    const last = first.snapshots.at(-1);
    assert.equal(last.surfaceId, 'surface-1');
    assert.ok(first.snapshots.every((s) => s.messageId === last.messageId), 'one surface, one activity message');
    for (let i = 1; i < first.snapshots.length; i++) {
      const [prev, s] = [first.snapshots[i - 1], first.snapshots[i]];
      assert.ok(prev.ids.every((id) => s.ids.includes(id)), `snapshot ${i + 1} lost components of snapshot ${i}`);
    }

    // A partial snapshot was drawn, without errors, as it was: its texts, and no button
    // yet. The fullest one is kept as a screenshot.
    const partials = first.snapshots.filter((s) => partial(s, last));
    assert.ok(partials.length > 0, `no partial snapshot: ${first.snapshots.map((s) => s.ids.join(',')).join(' | ')}`);
    const shown = partials.findLast((s) => s.texts.length > 0) ?? partials.at(-1);
    assert.ok(shown.buttons < last.buttons || shown.texts.length < last.texts.length, JSON.stringify(shown.ids));
    writeFileSync(shotPath('partial'), shown.png);
    assert.deepEqual(await page.evaluate(() => window.agui.state.rejected), []);
    assert.deepEqual(page.problems, [], 'the page logged errors');

    // The final snapshot: the whole surface, the renderer's own elements.
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
    assert.equal(await page.evaluate(() => window.agui.state.drawn), first.snapshots.length);
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
    assert.ok(second.snapshots.length >= 1, 'the answer draws a surface');
    const answer = second.snapshots.at(-1);
    assert.notEqual(answer.messageId, last.messageId, 'a new surface beside the first');
    const again = page.locator(`[data-surface-id="${answer.surfaceId}"] a2ui-surface`);
    await again.getByText('You said: the action "send"', { exact: true }).waitFor();
    await again.getByRole('button', { name: 'Send', exact: true }).waitFor();
    assert.equal(await page.locator('[data-surface-id]').count(), 2, 'the first surface and the answer');
    await drawn.getByText('You said: Show me a sign-up form', { exact: true }).waitFor();
    await shot(page, 'action');

    assert.equal(actions.length, 1, JSON.stringify(actions));
    const state = await page.evaluate(() => window.agui.state);
    assert.equal(state.drawn, first.snapshots.length + second.snapshots.length);
    assert.deepEqual(state.rejected, [], 'the renderer refused server messages');
    assert.deepEqual(state.clientErrors, [], 'a surface reported an error');
    assert.deepEqual(page.problems, [], 'the page logged errors');
  });
});
