// Browser tests of the playground's A2UI mode in real headless Chromium: surfaces drawn
// by the official A2UI web renderer (@a2ui/lit + @a2ui/web_core, bundled by web/a2ui),
// v0.9 and v0.8, against running servers.
//
//   GENUI_URL=http://localhost:3400/ GENUI_SLOW_URL=http://localhost:3401/ node --test a2ui.test.mjs
//
// GENUI_URL serves the offline model; GENUI_SLOW_URL a model that writes the booking
// surface of web/a2ui_test.go and pauses SLOW_HOLD_MS in the middle of it (go test ./web/
// starts both). Env as in playground.test.mjs: CHROMIUM, ARTIFACTS.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { useBrowser } from './browser.mjs';

const BASE = new URL(process.env.GENUI_URL || 'http://localhost:3400/').href;
const SLOW = process.env.GENUI_SLOW_URL ? new URL(process.env.GENUI_SLOW_URL).href : null;
const HOLD = Number(process.env.SLOW_HOLD_MS || 2500);
const ARTIFACTS = path.resolve(process.env.ARTIFACTS || fileURLToPath(new URL('../../test-artifacts', import.meta.url)));
const WAIT = 15_000;
const TEST = { timeout: 60_000 };

const BASIC = 'https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json';
const STANDARD = 'https://a2ui.org/specification/v0_8/standard_catalog_definition.json';

mkdirSync(ARTIFACTS, { recursive: true });

const browser = useBrowser();

/** Opens the playground in A2UI mode; page.problems collects uncaught and console errors. */
async function openA2ui(base, version, viewport = { width: 1280, height: 900 }) {
  const context = await browser().newContext({ viewport });
  const page = await context.newPage();
  page.setDefaultTimeout(WAIT);
  page.problems = [];
  page.on('pageerror', (e) => page.problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) page.problems.push(`console: ${m.text()}`);
  });
  await page.goto(`${base}?ui=a2ui-${version}`);
  await page.locator('#a2ui-status').filter({ hasText: `A2UI ${version}: messages go to /generateA2ui` }).waitFor();
  return page;
}

async function closePage(page) {
  assert.deepEqual(page.problems, [], 'the page logged errors');
  await page.context().close();
}

const tag = (version) => version.replace('.', '');
const shot = (page, name) => page.screenshot({ path: path.join(ARTIFACTS, `playground-a2ui-${name}.png`), fullPage: true });
const surface = (page, id) => page.getByRole('region', { name: 'Surfaces' }).locator(`[data-surface-id="${id}"]`);
const nextTurn = async (page) => (await page.locator('[data-turn]').count()) + 1;
const total = (page, n) => page.locator(`[data-turn="${n}"] [data-metric="total"]`);

async function waitTurn(page, n, timeout = WAIT) {
  await total(page, n).filter({ hasText: / ms$/ }).waitFor({ timeout });
  return n;
}

/** Types a chat message and sends it; resolves with the turn number and the request. */
async function send(page, text) {
  const turn = await nextTurn(page);
  const request = page.waitForRequest((r) => r.url().endsWith('/generateA2ui'));
  await page.getByLabel('Message', { exact: true }).fill(text);
  await page.getByRole('button', { name: 'Send message' }).click();
  return { turn, body: (await request).postDataJSON() };
}

async function eventLabels(page, turn) {
  return page.getByRole('region', { name: 'Stream inspector' }).getByRole('list', { name: `Events of turn ${turn}` })
    .getByRole('listitem').allInnerTexts();
}

/** The renderer rejections shown in the chat. */
async function rejections(page) {
  return (await page.locator('.msg.error').allInnerTexts()).filter((t) => t.includes('renderer rejected'));
}

/** Fails when the renderer rejected any server message. */
async function assertNoRejections(page) {
  assert.deepEqual(await rejections(page), [], 'the renderer rejected server messages');
}

for (const version of ['v0.9', 'v0.8']) {
  const v09 = version === 'v0.9';

  describe(`A2UI ${version}, offline model`, () => {
    let page;
    before(async () => { page = await openA2ui(BASE, version); });
    after(async () => { await closePage(page); });

    it('(h) the official renderer draws the streamed surface', TEST, async (t) => {
      assert.equal(await page.getByLabel('UI format').inputValue(), `a2ui-${version}`);
      assert.equal(await page.locator('#a2ui-renderer').innerText(), '@a2ui/lit 0.11.0 + @a2ui/web_core 0.11.0');
      assert.equal(await page.locator('#a2ui-catalog').innerText(), v09 ? BASIC : STANDARD);
      assert.ok(await page.getByRole('button', { name: 'Start session' }).isHidden(), 'no genui session in A2UI mode');

      const { turn, body } = await send(page, 'Hello');
      assert.equal(body.version, version);
      assert.deepEqual(body.a2uiClientCapabilities, v09 ? { 'v0.9': { supportedCatalogIds: [BASIC] } } : { supportedCatalogIds: [STANDARD] });
      assert.deepEqual(body.conversation, [{ role: 'user', parts: [{ type: 'text', text: 'Hello' }] }]);
      await waitTurn(page, turn);

      // The surface is the renderer's own element; its components are the renderer's.
      const s = surface(page, 'surface-1');
      const drawn = s.locator('a2ui-surface');
      assert.equal(await drawn.count(), 1);
      await drawn.getByRole('heading', { name: 'Offline reply' }).waitFor();
      const tags = await page.evaluate(() => ['a2ui-surface', 'a2ui-basic-button', 'a2ui-button'].filter((n) => customElements.get(n)));
      assert.deepEqual(tags, v09 ? ['a2ui-surface', 'a2ui-basic-button'] : ['a2ui-surface', 'a2ui-button']);
      await page.getByRole('log').getByText('Here is a surface for your message.').waitFor();

      // Every A2UI line is in the inspector, as it arrived.
      const labels = await eventLabels(page, turn);
      for (const l of labels) assert.match(l, /^\+\d+\.\d ms /);
      assert.ok(labels.some((l) => l.includes(v09 ? 'createSurface surface-1' : 'beginRendering surface-1 root=root')), labels.join('\n'));
      assert.ok(labels.filter((l) => l.includes(v09 ? 'updateComponents surface-1' : 'surfaceUpdate surface-1')).length >= 3, labels.join('\n'));
      assert.ok(labels.at(-1).includes('result stop'), labels.at(-1));
      assert.match(await page.locator(`[data-turn="${turn}"] [data-metric="status"]`).innerText(), /^200 application\/x-ndjson/);
      assert.match(await page.locator(`[data-turn="${turn}"] [data-metric="first-surface"]`).innerText(), /^\d+\.\d ms$/);
      await shot(page, `${tag(version)}-offline`);

      await assertNoRejections(page);
      await drawn.getByText('You said: Hello', { exact: true }).waitFor();
      // (The renderer's TextField does not associate its label with the input, so the
      // field is found by role, its label by text.)
      assert.equal(await drawn.getByRole('textbox').count(), 1);
      await drawn.getByText('Reply', { exact: true }).waitFor();
      await drawn.getByRole('button', { name: 'Send', exact: true }).waitFor();
      assert.ok(!labels.some((l) => l.includes('rejected')), labels.join('\n'));
    });

    it('(i) typing into the field and clicking Send sends the action; the next surface state shows it', TEST, async (t) => {
      await assertNoRejections(page);
      const s = surface(page, 'surface-1');
      const turn = await nextTurn(page);
      await s.getByRole('textbox').fill('yes');
      const request = page.waitForRequest((r) => r.url().endsWith('/generateA2ui'));
      await s.getByRole('button', { name: 'Send', exact: true }).click();
      const body = (await request).postDataJSON();
      await waitTurn(page, turn);

      const conv = body.conversation;
      assert.deepEqual(conv.map((m) => m.role), ['user', 'model', 'user']);
      // The model's turn as received: its text, then every A2UI message, bare.
      const model = conv[1].parts;
      assert.deepEqual(model[0], { type: 'text', text: 'Here is a surface for your message.\n' });
      const a2ui = model.filter((p) => p.type === 'a2ui').map((p) => p.message);
      assert.equal(a2ui.length, model.length - 1);
      assert.ok(a2ui.length >= 5, `${a2ui.length} A2UI messages`);
      if (v09) {
        assert.ok(a2ui.every((m) => m.version === 'v0.9'));
        assert.deepEqual(a2ui[0].createSurface, { catalogId: BASIC, surfaceId: 'surface-1' });
      } else {
        assert.ok(a2ui.some((m) => m.beginRendering?.surfaceId === 'surface-1'));
      }
      // The action, its context resolved from the data model.
      assert.equal(conv[2].parts.length, 1);
      const part = conv[2].parts[0];
      assert.equal(part.type, 'a2ui');
      const action = v09 ? part.message.action : part.message.userAction;
      assert.deepEqual(Object.keys(part.message), v09 ? ['version', 'action'] : ['userAction']);
      if (v09) assert.equal(part.message.version, 'v0.9');
      const { timestamp, ...rest } = action;
      assert.deepEqual(rest, { name: 'send', surfaceId: 'surface-1', sourceComponentId: 'send', context: { reply: 'yes' } });
      assert.ok(!Number.isNaN(Date.parse(timestamp)) && timestamp.endsWith('Z'), `ISO timestamp: ${timestamp}`);

      // The server's answer updates the same surface: the message, and the field cleared.
      await s.getByText('You sent "send" with {"reply":"yes"}.', { exact: true }).waitFor();
      await page.getByRole('log').getByText('Action “send” from “send” on surface-1').waitFor();
      assert.equal(await s.getByRole('textbox').inputValue(), '');
      assert.equal(await page.getByRole('region', { name: 'Surfaces' }).locator('[data-surface-id]').count(), 1);
      assert.deepEqual(await rejections(page), []);
      await shot(page, `${tag(version)}-action`);
    });
  });

  describe(`A2UI ${version}, a slow model`, { skip: SLOW ? false : 'GENUI_SLOW_URL is not set' }, () => {
    it('(j) the surface grows while the model streams: a partial surface first, then the whole', TEST, async (t) => {
      const page = await openA2ui(SLOW, version);
      const { turn } = await send(page, 'Book a table for us');
      const s = surface(page, 'booking');
      const drawn = s.locator('a2ui-surface');

      // Mid-stream: the root and its first children are drawn, the rest is not there yet.
      await drawn.getByRole('heading', { name: 'Book a table' }).waitFor();
      await drawn.getByText('Tell us who is coming.', { exact: true }).waitFor();
      assert.equal(await total(page, turn).innerText(), '…', 'the turn is still streaming');
      assert.equal(await drawn.getByRole('textbox').count(), 0, 'no field yet');
      assert.equal(await drawn.getByRole('button').count(), 0, 'no button yet');
      assert.equal(await page.locator('.msg.model[aria-busy="true"]').count(), 1);
      await shot(page, `${tag(version)}-mid-stream`);

      await waitTurn(page, turn, HOLD + WAIT);
      const first = parseFloat(await page.locator(`[data-turn="${turn}"] [data-metric="first-surface"]`).innerText());
      const end = parseFloat(await total(page, turn).innerText());
      assert.ok(end - first >= HOLD * 0.8, `the surface was drawn at ${first} ms, ${end - first} ms before the stream ended`);
      await assertNoRejections(page);

      // The whole surface.
      await drawn.getByText('Guests', { exact: true }).waitFor();
      await drawn.getByText('Name', { exact: true }).waitFor();
      assert.equal(await drawn.getByRole('textbox').count(), 2);
      await drawn.getByRole('button', { name: 'Book', exact: true }).waitFor();
      await drawn.getByRole('heading', { name: 'Book a table' }).waitFor();
      const labels = await eventLabels(page, turn);
      const updates = labels.filter((l) => l.includes(v09 ? 'updateComponents booking' : 'surfaceUpdate booking'));
      assert.ok(updates.length >= 2, labels.join('\n'));
      const times = updates.map((l) => parseFloat(l.slice(1)));
      assert.ok(times.at(-1) - times[0] >= HOLD * 0.8, `updates at ${times.join(', ')} ms`);
      await shot(page, `${tag(version)}-complete`);
      await closePage(page);
    });
  });
}

describe('A2UI v0.8, the offline surface sent whole', () => {
  it('(m) the action context is read from the data model; the server answers the action', TEST, async () => {
    // Turn 1 is scripted with what the offline model writes for "Hello" in v0.8, as one
    // self-contained surfaceUpdate; turn 2 goes to the real server. This covers the v0.8
    // action path from a surface no server turn produced.
    const page = await openA2ui(BASE, 'v0.8');
    const v = (s) => ({ literalString: s });
    const lines = [
      { type: 'text', text: 'Here is a surface for your message.\n' },
      { beginRendering: { surfaceId: 'surface-1', root: 'root' } },
      { surfaceUpdate: { surfaceId: 'surface-1', components: [
        { id: 'root', component: { Column: { children: { explicitList: ['title', 'card'] } } } },
        { id: 'title', component: { Text: { text: v('Offline reply'), usageHint: 'h3' } } },
        { id: 'card', component: { Card: { child: 'body' } } },
        { id: 'body', component: { Column: { children: { explicitList: ['message', 'reply', 'send'] } } } },
        { id: 'message', component: { Text: { text: v('You said: Hello') } } },
        { id: 'reply', component: { TextField: { label: v('Reply'), text: { path: '/form/reply' } } } },
        { id: 'send', component: { Button: { child: 'send-label', primary: true, action: { name: 'send', context: [{ key: 'reply', value: { path: '/form/reply' } }, { key: 'lang', value: v('en') }] } } } },
        { id: 'send-label', component: { Text: { text: v('Send') } } },
      ] } },
      { dataModelUpdate: { surfaceId: 'surface-1', path: '/form', contents: [{ key: 'reply', valueString: '' }] } },
      { type: 'result', result: { finishReason: 'stop' } },
    ];
    await page.route('**/generateA2ui', (route) => route.fulfill({
      status: 200, contentType: 'application/x-ndjson', body: lines.map((l) => JSON.stringify(l)).join('\n') + '\n',
    }), { times: 1 });
    const { turn } = await send(page, 'Hello');
    await waitTurn(page, turn);
    const s = surface(page, 'surface-1');
    const drawn = s.locator('a2ui-surface');
    await drawn.getByText('You said: Hello', { exact: true }).waitFor();
    assert.equal(await drawn.getByRole('textbox').count(), 1);
    await drawn.getByText('Reply', { exact: true }).waitFor();

    const next = await nextTurn(page);
    await drawn.getByRole('textbox').fill('oui');
    const request = page.waitForRequest((r) => r.url().endsWith('/generateA2ui'));
    await drawn.getByRole('button', { name: 'Send', exact: true }).click();
    const body = (await request).postDataJSON();
    await waitTurn(page, next);
    const conv = body.conversation;
    assert.deepEqual(conv.map((m) => m.role), ['user', 'model', 'user']);
    assert.deepEqual(conv[1].parts.map((p) => p.type === 'a2ui' ? Object.keys(p.message)[0] : p.type),
      ['text', 'beginRendering', 'surfaceUpdate', 'dataModelUpdate']);
    const { timestamp, ...action } = conv[2].parts[0].message.userAction;
    assert.deepEqual(action, { name: 'send', surfaceId: 'surface-1', sourceComponentId: 'send', context: { reply: 'oui', lang: 'en' } });
    assert.ok(timestamp.endsWith('Z'), timestamp);

    await drawn.getByText('You sent "send" with {"lang":"en","reply":"oui"}.', { exact: true }).waitFor();
    assert.equal(await drawn.getByRole('textbox').inputValue(), '');
    assert.deepEqual(await rejections(page), []);
    await shot(page, 'v08-action');
    await closePage(page);
  });
});

describe('A2UI errors and format switching', () => {
  it('(l) a server error and a message the renderer rejects are shown; the stream goes on', TEST, async () => {
    const page = await openA2ui(BASE, 'v0.9');
    // A scripted stream: a valid surface, a message for a surface that does not exist
    // (web_core throws), then the service's error line.
    const lines = [
      { type: 'text', text: 'Scripted.' },
      { version: 'v0.9', createSurface: { surfaceId: 's1', catalogId: BASIC } },
      { version: 'v0.9', updateComponents: { surfaceId: 's1', components: [{ id: 'root', component: 'Text', text: 'Still here' }] } },
      { version: 'v0.9', updateComponents: { surfaceId: 'nope', components: [{ id: 'root', component: 'Text', text: 'x' }] } },
      { type: 'error', error: { status: 'UNAVAILABLE', message: 'the model went away' } },
    ];
    await page.route('**/generateA2ui', (route) => route.fulfill({
      status: 200, contentType: 'application/x-ndjson', body: lines.map((l) => JSON.stringify(l)).join('\n') + '\n',
    }));
    const { turn } = await send(page, 'Hello');
    await waitTurn(page, turn);
    await surface(page, 's1').locator('a2ui-surface').getByText('Still here', { exact: true }).waitFor();
    const errors = await page.locator('.msg.error').allInnerTexts();
    assert.equal(errors.length, 2, errors.join('\n'));
    assert.match(errors[0], /The A2UI v0\.9 renderer rejected a updateComponents message: .*nope/s);
    assert.match(errors[1], /UNAVAILABLE: the model went away/);
    const labels = await eventLabels(page, turn);
    assert.ok(labels.some((l) => l.includes('updateComponents nope [root] (rejected by the renderer)')), labels.join('\n'));

    // The rejection goes to the server with the next message, as an A2UI client error;
    // the model message holds only what the renderer applied.
    await page.unroute('**/generateA2ui');
    const next = await send(page, 'Again');
    await waitTurn(page, next.turn);
    const conv = next.body.conversation;
    assert.deepEqual(conv[1].parts.map((p) => p.message ? Object.keys(p.message)[1] : p.type), ['text', 'createSurface', 'updateComponents']);
    const err = conv[2].parts[1];
    assert.equal(err.type, 'a2ui');
    assert.equal(err.message.version, 'v0.9');
    assert.equal(err.message.error.code, 'INVALID_MESSAGE');
    assert.equal(err.message.error.surfaceId, 'nope');
    await shot(page, 'l-errors');
    await closePage(page);
  });

  it('(n) A2UI mode works at 375 px wide without horizontal scrolling', TEST, async () => {
    const page = await openA2ui(BASE, 'v0.9', { width: 375, height: 812 });
    const { turn } = await send(page, 'Hello from a phone');
    await waitTurn(page, turn);
    await surface(page, 'surface-1').locator('a2ui-surface').getByText('You said: Hello from a phone', { exact: true }).waitFor();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `no horizontal scrolling at 375 px (overflow ${overflow}px)`);
    await shot(page, 'n-375');
    await closePage(page);
  });

  it('(k) switching the UI format: genui ↔ A2UI in place, v0.9 → v0.8 with a fresh page', TEST, async () => {
    const context = await browser().newContext({ viewport: { width: 1280, height: 860 } });
    const page = await context.newPage();
    page.setDefaultTimeout(WAIT);
    await page.goto(BASE);
    const format = page.getByLabel('UI format');
    assert.equal(await format.inputValue(), 'genui');
    await page.getByLabel('Catalog JSON').waitFor();

    await format.selectOption('a2ui-v0.9');
    await page.locator('#a2ui-status').filter({ hasText: 'A2UI v0.9: messages' }).waitFor();
    assert.ok(await page.getByLabel('Catalog JSON').isHidden());
    assert.ok(page.url().endsWith('?ui=a2ui-v0.9'), page.url());

    await format.selectOption('a2ui-v0.8'); // the other <a2ui-surface>: the page reloads
    await page.waitForURL(/\?ui=a2ui-v0\.8$/);
    await page.locator('#a2ui-status').filter({ hasText: 'A2UI v0.8: messages' }).waitFor();
    assert.equal(await page.getByLabel('UI format').inputValue(), 'a2ui-v0.8');

    await page.getByLabel('UI format').selectOption('genui');
    await page.getByLabel('Catalog JSON').waitFor();
    assert.ok(!page.url().includes('?ui='), page.url());
    await context.close();
  });
});
