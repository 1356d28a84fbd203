// A2UI over A2A in real headless Chromium: the A2A client is the official JS SDK
// (@a2a-js/sdk 0.3.14, A2A v0.3 JSON-RPC) running here in node, the surface is drawn by
// the official A2UI web renderer (@a2ui/lit + @a2ui/web_core, the playground's bundle) in
// a minimal page. Node streams a turn with the SDK and hands each A2UI message to the
// page; the user's action, emitted by the rendered button, comes back to node and goes
// to the agent with the SDK, in the same context; the agent's answer updates the surface.
//
//   GENUI_URL=http://localhost:3400/ node --test a2a.test.mjs
//
// GENUI_URL serves the A2A agent on the offline model and this directory's a2a-page.html
// and a2a-page.js at /e2e/ (go test ./web/ starts such a server). A2A_RECORD, if set, is
// a file to write what crossed the wire as node saw it, for the Go test to validate:
// {"received": [every A2UI message of the agent], "sent": [every A2UI message of the
// client]}. Env as in playground.test.mjs: CHROMIUM, ARTIFACTS.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ClientFactory, ServiceParameters, withA2AExtensions } from '@a2a-js/sdk/client';
import { useBrowser } from './browser.mjs';

const BASE = new URL(process.env.GENUI_URL || 'http://localhost:3400/').href;
const ARTIFACTS = path.resolve(process.env.ARTIFACTS || fileURLToPath(new URL('../../test-artifacts', import.meta.url)));
const RECORD = process.env.A2A_RECORD || '';
const WAIT = 15_000;
const TEST = { timeout: 60_000 };

const EXTENSION = 'https://a2ui.org/a2a-extension/a2ui/v0.9';
const MIME = 'application/json+a2ui';
const BASIC = 'https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json';

mkdirSync(ARTIFACTS, { recursive: true });

const browser = useBrowser();
const shot = (page, name) => page.screenshot({ path: path.join(ARTIFACTS, `a2a-a2ui-v09-${name}.png`), fullPage: true });

/** What crossed the wire, for A2A_RECORD. */
const record = { received: [], sent: [] };

/** The A2UI message of a part, or undefined: a DataPart of the A2UI MIME type. */
function a2uiMessage(part) {
  if (part?.kind !== 'data') return undefined;
  assert.equal(part.metadata?.mimeType, MIME, `a DataPart without the A2UI MIME type: ${JSON.stringify(part)}`);
  return part.data;
}

/**
 * Streams one turn with the SDK: every A2UI message of the status messages goes to the
 * page's renderer as it arrives. Resolves with the events' kinds and states, the task,
 * the text and the A2UI messages of the turn.
 */
async function streamTurn(client, page, message) {
  const turn = { events: [], task: null, text: '', messages: [], final: null };
  const options = { serviceParameters: ServiceParameters.create(withA2AExtensions(EXTENSION)) };
  for await (const ev of client.sendMessageStream({ message }, options)) {
    turn.events.push(ev.kind === 'status-update' ? `${ev.kind} ${ev.status.state}${ev.final ? ' final' : ''}` : ev.kind);
    if (ev.kind === 'task') turn.task = ev;
    if (ev.kind !== 'task' && ev.kind !== 'status-update') continue;
    if (ev.kind === 'status-update') {
      assert.equal(ev.taskId, turn.task?.id, 'the update is of the turn\'s task');
      assert.equal(ev.contextId, turn.task?.contextId);
      if (ev.final) turn.final = ev;
    }
    for (const part of ev.status.message?.parts ?? []) {
      if (part.kind === 'text') {
        turn.text += part.text;
        continue;
      }
      const msg = a2uiMessage(part);
      if (msg === undefined) continue;
      record.received.push(msg);
      turn.messages.push(msg);
      const refused = await page.evaluate((m) => window.a2a.process(m), msg);
      assert.equal(refused, null, `the renderer refused ${JSON.stringify(msg)}`);
    }
  }
  return turn;
}

/** A user message of the A2A v0.3 wire. */
function userMessage(parts, extra = {}) {
  return { kind: 'message', role: 'user', messageId: randomUUID(), parts, ...extra };
}

describe('A2UI v0.9 over A2A: @a2a-js/sdk in node, @a2ui/lit in Chromium', () => {
  let client;
  let page;
  let actions; // the actions the page emitted, in order
  let nextAction; // resolves with the next one

  before(async () => {
    client = await new ClientFactory().createFromUrl(BASE);
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
    await page.goto(new URL('e2e/a2a-page.html', BASE).href);
    await page.getByRole('status').filter({ hasText: 'Renderer ready: @a2ui/lit 0.11.0 + @a2ui/web_core 0.11.0' }).waitFor();
  });

  after(async () => {
    if (RECORD) writeFileSync(RECORD, JSON.stringify(record));
    await page?.context().close();
  });

  it('the card names the agent\'s v0.3 JSON-RPC endpoint and the A2UI v0.9 extension', TEST, async () => {
    const card = await client.getAgentCard();
    assert.equal(card.url, new URL('a2a', BASE).href);
    assert.equal(card.preferredTransport ?? 'JSONRPC', 'JSONRPC');
    assert.ok(card.capabilities.streaming);
    const ext = card.capabilities.extensions?.find((e) => e.uri === EXTENSION);
    assert.ok(ext, JSON.stringify(card.capabilities.extensions));
    assert.ok(ext.params.supportedCatalogIds.includes(BASIC), JSON.stringify(ext.params));
  });

  it('a streamed surface is drawn; its button\'s action goes back over A2A and updates it', TEST, async () => {
    const capabilities = await page.evaluate(() => window.a2a.capabilities());
    assert.deepEqual(capabilities, { 'v0.9': { supportedCatalogIds: [BASIC] } });

    // Turn 1: the user says Hello; the surface streams in, message by message.
    const first = await streamTurn(client, page, userMessage([{ kind: 'text', text: 'Hello' }], {
      metadata: { a2uiClientCapabilities: capabilities },
    }));
    assert.equal(first.events[0], 'task');
    assert.equal(first.task.status.state, 'submitted');
    assert.equal(first.events.at(-1), 'status-update input-required final', first.events.join('\n'));
    assert.equal(first.events.filter((e) => e.endsWith(' final')).length, 1, first.events.join('\n'));
    assert.ok(first.messages.length >= 3, `${first.messages.length} A2UI messages`);
    assert.ok(first.messages.every((m) => m.version === 'v0.9'), JSON.stringify(first.messages));
    assert.deepEqual(first.messages[0].createSurface, { surfaceId: 'surface-1', catalogId: BASIC });
    assert.match(first.text, /Here is a surface for your message\./);

    // The surface is the renderer's own element, drawn from the streamed components.
    const s = page.getByRole('region', { name: 'Surfaces' }).locator('[data-surface-id="surface-1"]');
    const drawn = s.locator('a2ui-surface');
    assert.equal(await drawn.count(), 1);
    await drawn.getByText('You said: Hello', { exact: true }).waitFor();
    assert.equal(await drawn.getByRole('textbox').count(), 1);
    const button = drawn.getByRole('button', { name: 'Send', exact: true });
    await button.waitFor();
    assert.deepEqual(await page.evaluate(() => ['a2ui-surface', 'a2ui-basic-button'].filter((n) => customElements.get(n))),
      ['a2ui-surface', 'a2ui-basic-button']);
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

    // Turn 2: the action, as the A2UI client message, in a DataPart of a new message of
    // the same context that refers to the first task.
    const clientMessage = { version: 'v0.9', action };
    record.sent.push(clientMessage);
    const dataModel = await page.evaluate(() => window.a2a.dataModel());
    const second = await streamTurn(client, page, userMessage([{ kind: 'data', data: clientMessage, metadata: { mimeType: MIME } }], {
      contextId: first.task.contextId,
      referenceTaskIds: [first.task.id],
      metadata: { a2uiClientCapabilities: capabilities, ...(dataModel ? { a2uiClientDataModel: dataModel } : {}) },
    }));
    assert.equal(second.events[0], 'task');
    assert.equal(second.task.contextId, first.task.contextId, 'the answer is in the same context');
    assert.notEqual(second.task.id, first.task.id, 'a message without a taskId starts a new task');
    assert.equal(second.events.at(-1), 'status-update input-required final', second.events.join('\n'));
    assert.ok(second.messages.length >= 1, 'the answer updates the surface');
    assert.ok(second.messages.every((m) => m.version === 'v0.9' && !m.createSurface && (
      m.updateComponents?.surfaceId ?? m.updateDataModel?.surfaceId) === 'surface-1'), JSON.stringify(second.messages));

    // The same surface now shows the action the agent received.
    await drawn.getByText('You sent "send" with {"reply":"yes"}.', { exact: true }).waitFor();
    assert.equal(await page.locator('[data-surface-id]').count(), 1, 'one surface, updated in place');
    assert.equal(await drawn.getByRole('textbox').inputValue(), '', 'the field is cleared');
    await shot(page, 'action');

    assert.equal(actions.length, 1, JSON.stringify(actions));
    const state = await page.evaluate(() => window.a2a.state);
    assert.deepEqual(state.rejected, [], 'the renderer refused server messages');
    assert.deepEqual(state.clientErrors, [], 'a surface reported an error');
    assert.deepEqual(page.problems, [], 'the page logged errors');
  });
});
