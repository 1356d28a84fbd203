// Browser tests of the playground over its WebSocket transport (GET /ws, JSON-RPC 2.0)
// in real headless Chromium, against a running server on the offline model: a client
// tool the page answers, a second message and a UI action on the same connection and
// session, in genui mode and in A2UI v0.9 mode.
//
//   GENUI_URL=http://localhost:3400/ node --test ws.test.mjs
//
// Env as in playground.test.mjs (GENUI_URL, CHROMIUM, ARTIFACTS), and WS_RECORD: a file
// to write every WebSocket frame the pages sent and received to, for the Go test to check.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { useBrowser } from './browser.mjs';

const BASE = new URL(process.env.GENUI_URL || 'http://localhost:3400/').href;
const ARTIFACTS = path.resolve(process.env.ARTIFACTS || fileURLToPath(new URL('../../test-artifacts', import.meta.url)));
const WAIT = 15_000;
const TEST = { timeout: 60_000 };
const BASIC = 'https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json';

mkdirSync(ARTIFACTS, { recursive: true });

const browser = useBrowser();

// What the pages did on the wire, by scenario: their WebSockets' frames and their HTTP requests.
const record = { scenarios: [] };
after(() => {
  if (process.env.WS_RECORD) writeFileSync(process.env.WS_RECORD, JSON.stringify(record, null, 2));
});

/**
 * Opens the playground (query: e.g. "?ui=a2ui-v0.9"); page.problems collects uncaught
 * errors and console errors, page.wire every WebSocket (its frames, in order) and HTTP
 * request of the page.
 */
async function openPage(name, query = '') {
  const context = await browser().newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(WAIT);
  page.problems = [];
  page.on('pageerror', (e) => page.problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) page.problems.push(`console: ${m.text()}`);
  });
  page.wire = { name, sockets: [], requests: [] };
  record.scenarios.push(page.wire);
  page.on('request', (r) => page.wire.requests.push(`${r.method()} ${new URL(r.url()).pathname}`));
  page.on('websocket', (ws) => {
    const socket = { url: ws.url(), frames: [], closed: false };
    page.wire.sockets.push(socket);
    ws.on('framesent', (f) => socket.frames.push({ dir: 'sent', data: String(f.payload) }));
    ws.on('framereceived', (f) => socket.frames.push({ dir: 'received', data: String(f.payload) }));
    ws.on('close', () => { socket.closed = true; });
  });
  await page.goto(BASE + query);
  await page.locator('#model-name').filter({ hasText: /\// }).waitFor();
  return page;
}

async function closePage(page) {
  assert.deepEqual(page.problems, [], 'the page logged errors');
  await page.context().close();
}

const shot = (page, name) => page.screenshot({ path: path.join(ARTIFACTS, `playground-ws-${name}.png`), fullPage: true });
const surfaces = (page) => page.getByRole('region', { name: 'Surfaces' }).locator('[data-surface-id]');
const inspector = (page) => page.getByRole('region', { name: 'Stream inspector' });
const nextTurn = async (page) => (await page.locator('[data-turn]').count()) + 1;

async function waitTurn(page, n) {
  await page.locator(`[data-turn="${n}"] [data-metric="total"]`).filter({ hasText: / ms$/ }).waitFor();
  return n;
}

/** Sends a chat message and waits until its turn has finished. */
async function send(page, text) {
  const turn = await nextTurn(page);
  await page.getByLabel('Message', { exact: true }).fill(text);
  await page.getByRole('button', { name: 'Send message' }).click();
  return waitTurn(page, turn);
}

const eventLabels = (page, turn) =>
  inspector(page).getByRole('list', { name: `Events of turn ${turn}` }).getByRole('listitem').allInnerTexts();

/** The page's JSON-RPC messages on its only WebSocket, parsed, each with its direction. */
function messages(page) {
  assert.equal(page.wire.sockets.length, 1, 'one WebSocket');
  return page.wire.sockets[0].frames.map((f) => ({ dir: f.dir, ...JSON.parse(f.data) }));
}

/** Picks the WebSocket transport; the client tools show, with the city the page answers. */
async function pickWebSocket(page) {
  await page.getByLabel('Transport').selectOption('ws');
  const tools = page.getByRole('group', { name: 'Client tools this page answers' });
  await tools.waitFor();
  assert.equal(await tools.getByLabel('City (getLocation)').inputValue(), 'Lisbon');
  return tools;
}

/**
 * Checks a turn over the WebSocket that called the client tool: its inspector entry
 * (the transport, the client_tool request and the page's answer, the updates, the stop
 * reason) and the page's answer on the wire.
 */
async function assertClientToolTurn(page, turn, city, transport = 'WebSocket') {
  const entry = page.locator(`[data-turn="${turn}"]`);
  assert.equal(await entry.locator('.turn-transport').innerText(), transport);
  assert.match(await entry.locator('.req code').innerText(), /^WebSocket ws:\/\/.+\/ws · prompt$/);
  assert.equal(await entry.locator('[data-metric="status"]').innerText(), 'stop_reason end_turn');
  const labels = await eventLabels(page, turn);
  for (const l of labels) assert.match(l, /^\+\d+\.\d ms /);
  const call = labels.findIndex((l) => l.endsWith(' client_tool getLocation'));
  const answer = labels.findIndex((l) => l.endsWith(' answered client_tool getLocation'));
  assert.ok(call >= 0 && answer === call + 1, labels.join('\n'));
  assert.ok(labels.slice(0, call).some((l) => l.includes('agent_message_chunk')), labels.join('\n'));
  assert.ok(labels.slice(answer).some((l) => l.includes('ui_update: ')), labels.join('\n'));
  assert.match(labels.at(-1), / result end_turn$/);
  // The raw messages unfold: the server's request and the page's answer.
  const items = inspector(page).getByRole('list', { name: `Events of turn ${turn}` }).getByRole('listitem');
  const request = JSON.parse(await items.nth(call).locator('pre').textContent());
  const response = JSON.parse(await items.nth(answer).locator('pre').textContent());
  assert.equal(request.method, 'client_tool');
  assert.equal(request.params.name, 'getLocation');
  assert.equal(request.id, `call:${request.params.call_id}`);
  assert.deepEqual(response, { jsonrpc: '2.0', id: request.id, result: { city } });
  await page.getByRole('log').getByText(`Client tool getLocation: answered {"city":"${city}"}`).waitFor();

  // On the wire: the same answer, sent after the request and before the prompt's end.
  const msgs = messages(page);
  const at = msgs.findIndex((m) => m.dir === 'received' && m.id === request.id);
  const sent = msgs.findIndex((m) => m.dir === 'sent' && m.id === request.id);
  assert.ok(at >= 0 && sent > at, 'the page answered the client_tool request on its WebSocket');
  assert.deepEqual(msgs[sent].result, { city });
}

/** Polls get until ok holds for its value (or WAIT passes); returns the last value. */
async function settled(get, ok) {
  const end = Date.now() + WAIT;
  let v = get();
  while (!ok(v) && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 50));
    v = get();
  }
  return v;
}

/** The prompts the page sent, and the session they name. */
function prompts(page) {
  const msgs = messages(page);
  const opened = msgs.find((m) => m.dir === 'received' && typeof m.result?.session_id === 'string');
  assert.ok(opened, 'new_session answered a session');
  const sent = msgs.filter((m) => m.dir === 'sent' && m.method === 'prompt');
  for (const p of sent) assert.equal(p.params.session_id, opened.result.session_id, 'every prompt names the one session');
  return sent.map((p) => p.params.prompt);
}

function assertNoHTTPTurns(page) {
  const http = page.wire.requests.filter((r) => /\/(generateUi|generateA2ui|startSession)$/.test(r));
  assert.deepEqual(http, [], 'no turn went over HTTP');
}

describe('genui over WebSocket', () => {
  let page;
  before(async () => { page = await openPage('genui'); });
  after(async () => { await closePage(page); });

  it('opens one WebSocket, declares getLocation, answers the server\'s client_tool request and shows the surface', TEST, async () => {
    await pickWebSocket(page);
    const turn = await send(page, 'Where am I? Use getLocation');

    const surface = surfaces(page).filter({ hasText: 'getLocation returned city: Lisbon' });
    await surface.waitFor();
    assert.equal(await surfaces(page).count(), 1);
    await page.getByRole('log').getByText('Calling getLocation. Here is what the client returned.', { exact: true }).waitFor();
    await assertClientToolTurn(page, turn, 'Lisbon');

    // The connection's entry (folded under the turn's): initialize, then new_session.
    const entry = inspector(page).locator('[data-ws-connection]');
    assert.equal(await entry.count(), 1);
    await entry.locator(':scope > summary').click();
    assert.match(await entry.locator('.req').innerText(), /^GET ws:\/\/.+\/ws → 101 open · session .+…$/);
    const conn = entry.getByRole('list', { name: 'Messages of the WebSocket connection' }).getByRole('listitem');
    const labels = await conn.allInnerTexts();
    assert.deepEqual(labels.map((l) => l.replace(/^\+\d+\.\d ms /, '')),
      ['initialize', 'initialize: result', 'new_session', 'new_session: result']);
    const msgs = messages(page);
    assert.deepEqual(msgs.slice(0, 4).map((m) => `${m.dir} ${m.method ?? 'response'}`),
      ['sent initialize', 'received response', 'sent new_session', 'received response']);
    assert.equal(msgs[1].result.protocol_version, 1);
    const params = msgs[2].params;
    assert.ok(params.catalog?.properties?.widgets, 'new_session carries the genui catalog');
    assert.equal(params.a2uiClientCapabilities, undefined);
    assert.deepEqual(params.clientTools.map((t) => t.name), ['getLocation']);
    assert.deepEqual(params.clientTools[0].inputSchema, { type: 'object', properties: {} });
    assert.deepEqual(prompts(page), [[{ type: 'text', text: 'Where am I? Use getLocation' }]]);
    assert.match(await page.locator('#session-status').innerText(), /^Session .+ over WebSocket with catalog “basic”/);
    await shot(page, 'a-client-tool');
  });

  it('an action in the surface goes back over the WebSocket as a prompt and renders the next surface', TEST, async () => {
    const surface = surfaces(page).first();
    const surfaceId = await surface.getAttribute('data-surface-id');
    const turn = await nextTurn(page);
    await surface.getByRole('textbox').fill('thanks');
    await surface.getByRole('button', { name: 'Send', exact: true }).click();
    await waitTurn(page, turn);

    const updated = surfaces(page).first();
    assert.equal(await updated.getAttribute('data-surface-id'), surfaceId);
    await updated.getByText('You used "send"').waitFor();
    assert.ok((await updated.locator('[data-widget-id="message"]').innerText()).includes('"reply":"thanks"'));
    assert.equal(await page.locator(`[data-turn="${turn}"] .turn-transport`).innerText(), 'WebSocket');
    assert.equal(await page.locator(`[data-turn="${turn}"] [data-metric="status"]`).innerText(), 'stop_reason end_turn');

    const last = prompts(page).at(-1);
    assert.equal(last.length, 1);
    assert.equal(last[0].type, 'uiEvent');
    const { timestamp, ...ev } = last[0].event;
    assert.deepEqual(ev, { surfaceId, widgetId: 'send', eventType: 'onTap', isAction: true, value: { reply: 'thanks' } });
    assert.ok(!Number.isNaN(Date.parse(timestamp)), timestamp);
    await shot(page, 'b-action');
  });

  it('a second message runs on the same connection and session, with the city the user set', TEST, async () => {
    await page.getByLabel('City (getLocation)').fill('Porto');
    const turn = await send(page, 'And now? Use getLocation again');
    await surfaces(page).filter({ hasText: 'getLocation returned city: Porto' }).waitFor();
    await assertClientToolTurn(page, turn, 'Porto');

    const hello = await send(page, 'Hello');
    await surfaces(page).filter({ hasText: 'You said: Hello' }).waitFor();
    const labels = await eventLabels(page, hello);
    assert.ok(!labels.some((l) => l.includes('client_tool')), labels.join('\n'));

    const msgs = messages(page);
    assert.equal(msgs.filter((m) => m.method === 'initialize').length, 1);
    assert.equal(msgs.filter((m) => m.method === 'new_session').length, 1);
    const sent = prompts(page);
    assert.equal(sent.length, 4);
    assert.deepEqual(sent[2], [{ type: 'text', text: 'And now? Use getLocation again' }]);
    assert.deepEqual(sent[3], [{ type: 'text', text: 'Hello' }]);
    // Each prompt got its result (the last frame may reach the recorder just after the page drew it); nothing failed.
    const results = await settled(() => messages(page).filter((m) => m.dir === 'received' && m.result?.stop_reason), (r) => r.length === 4);
    assert.deepEqual(results.map((m) => m.result.stop_reason), ['end_turn', 'end_turn', 'end_turn', 'end_turn']);
    assert.ok(!messages(page).some((m) => m.error), 'no JSON-RPC error');
    assert.equal(page.wire.sockets[0].closed, false, 'the WebSocket stays open');
    assertNoHTTPTurns(page);
    assert.equal(await page.locator('.msg.error').count(), 0);
    await shot(page, 'c-second-message');
  });
});

describe('A2UI v0.9 over WebSocket', () => {
  let page;
  before(async () => {
    page = await openPage('a2ui-v0.9', '?ui=a2ui-v0.9');
    await page.locator('#a2ui-status').filter({ hasText: 'A2UI v0.9: messages go to /generateA2ui' }).waitFor();
  });
  after(async () => { await closePage(page); });

  it('sends the renderer\'s capabilities with new_session, answers getLocation, renders with the official renderer', TEST, async () => {
    await pickWebSocket(page);
    await page.locator('#a2ui-status').filter({ hasText: 'A2UI v0.9: messages go over the WebSocket (/ws)' }).waitFor();
    assert.ok(await page.getByRole('button', { name: 'Start session' }).isHidden());
    const turn = await send(page, 'Where am I? Use getLocation');
    const drawn = surfaces(page).locator('a2ui-surface');
    await drawn.getByText('getLocation returned city: Lisbon', { exact: true }).waitFor();
    assert.equal(await surfaces(page).count(), 1);
    await assertClientToolTurn(page, turn, 'Lisbon', 'WebSocket, A2UI v0.9');
    const labels = await eventLabels(page, turn);
    assert.ok(labels.some((l) => l.includes('ui_update: createSurface surface-1')), labels.join('\n'));

    const params = messages(page).find((m) => m.method === 'new_session').params;
    assert.equal(params.a2uiVersion, 'v0.9');
    assert.deepEqual(params.a2uiClientCapabilities, { 'v0.9': { supportedCatalogIds: [BASIC] } });
    assert.equal(params.catalog, undefined);
    assert.deepEqual(params.clientTools.map((t) => t.name), ['getLocation']);
    await shot(page, 'd-a2ui-client-tool');
  });

  it('the action of the drawn button goes back as an a2ui block and updates the surface', TEST, async () => {
    const s = surfaces(page).first();
    const turn = await nextTurn(page);
    await s.getByRole('textbox').fill('yes');
    await s.getByRole('button', { name: 'Send', exact: true }).click();
    await waitTurn(page, turn);
    await s.getByText('You sent "send" with {"reply":"yes"}.', { exact: true }).waitFor();
    assert.equal(await page.locator(`[data-turn="${turn}"] .turn-transport`).innerText(), 'WebSocket, A2UI v0.9');

    const sent = prompts(page);
    assert.equal(sent.length, 2);
    assert.equal(sent[1].length, 1);
    assert.equal(sent[1][0].type, 'a2ui');
    const { version, action } = sent[1][0].message;
    assert.equal(version, 'v0.9');
    const { timestamp, ...rest } = action;
    assert.deepEqual(rest, { name: 'send', surfaceId: 'surface-1', sourceComponentId: 'send', context: { reply: 'yes' } });
    assert.ok(!Number.isNaN(Date.parse(timestamp)), timestamp);

    const second = await send(page, 'Hello');
    await surfaces(page).locator('a2ui-surface').getByText('You said: Hello', { exact: true }).waitFor();
    assert.equal(await page.locator(`[data-turn="${second}"] [data-metric="status"]`).innerText(), 'stop_reason end_turn');
    assert.equal(prompts(page).length, 3);
    assertNoHTTPTurns(page);
    assert.equal(await page.locator('.msg.error').count(), 0);
    await shot(page, 'e-a2ui-action');
  });
});
