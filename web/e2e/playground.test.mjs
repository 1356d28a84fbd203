// Browser tests of the playground in real headless Chromium, against a running server.
//
//   GENUI_URL=http://localhost:3400/ node --test playground.test.mjs
//
// Env: GENUI_URL (default http://localhost:3400/), CHROMIUM (default /usr/bin/chromium),
// ARTIFACTS (screenshot directory, default ../../test-artifacts).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { useBrowser } from './browser.mjs';

const BASE = new URL(process.env.GENUI_URL || 'http://localhost:3400/').href;
const ARTIFACTS = path.resolve(process.env.ARTIFACTS || fileURLToPath(new URL('../../test-artifacts', import.meta.url)));
const WAIT = 15_000;
const TEST = { timeout: 60_000 };

mkdirSync(ARTIFACTS, { recursive: true });

const browser = useBrowser();

/** Opens the playground; page.problems collects uncaught errors and console errors. */
async function openPage(viewport = { width: 1280, height: 860 }) {
  const context = await browser().newContext({ viewport });
  const page = await context.newPage();
  page.setDefaultTimeout(WAIT);
  page.problems = [];
  page.on('pageerror', (e) => page.problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    // A 4xx answer the page expects (and shows) is logged by Chromium as a console error.
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) page.problems.push(`console: ${m.text()}`);
  });
  await page.goto(BASE);
  await page.locator('#model-name').filter({ hasText: /\// }).waitFor();
  return page;
}

async function closePage(page) {
  assert.deepEqual(page.problems, [], 'the page logged errors');
  await page.context().close();
}

const shot = (page, name) => page.screenshot({ path: path.join(ARTIFACTS, `playground-${name}.png`), fullPage: true });
const surfacesRegion = (page) => page.getByRole('region', { name: 'Surfaces' });
const inspector = (page) => page.getByRole('region', { name: 'Stream inspector' });

async function startSession(page, catalog) {
  await page.getByLabel('Catalog', { exact: true }).selectOption(catalog);
  await page.getByRole('button', { name: 'Start session' }).click();
  await page.getByRole('status').filter({ hasText: `Session ` }).filter({ hasText: `catalog “${catalog}”` }).waitFor();
}

/** Sends a chat message and waits until the turn has finished (its total time is shown). */
async function send(page, text) {
  const turn = await nextTurn(page);
  await page.getByLabel('Message', { exact: true }).fill(text);
  await page.getByRole('button', { name: 'Send message' }).click();
  return waitTurn(page, turn);
}

async function nextTurn(page) {
  return (await page.locator('[data-turn]').count()) + 1;
}

async function waitTurn(page, n) {
  await page.locator(`[data-turn="${n}"] [data-metric="total"]`).filter({ hasText: / ms$/ }).waitFor();
  return n;
}

/** The single surface on the page, after checking there is exactly one. */
async function onlySurface(page) {
  const surfaces = surfacesRegion(page).locator('[data-surface-id]');
  assert.equal(await surfaces.count(), 1, 'one surface');
  return surfaces.first();
}

async function assertHelloSurface(page) {
  const surface = await onlySurface(page);
  const text = surface.getByText('You said: Hello', { exact: true });
  await text.waitFor();
  assert.equal(await text.getAttribute('data-widget-type'), 'Text');
  const field = surface.getByRole('textbox');
  assert.equal(await field.count(), 1, 'one text field');
  assert.equal(await field.getAttribute('placeholder'), 'Type a reply');
  assert.equal(await surface.locator('[data-widget-id="reply"]').getAttribute('data-widget-type'), 'TextField');
  const button = surface.getByRole('button', { name: 'Send', exact: true });
  assert.equal(await button.getAttribute('data-widget-type'), 'ElevatedButton');
  assert.equal(await button.getAttribute('data-widget-id'), 'send');
  return surface;
}

/** Types into the surface's field, taps its Send button; returns the request body sent. */
async function roundTrip(page, surface, reply) {
  const turn = await nextTurn(page);
  await surface.getByRole('textbox').fill(reply);
  const request = page.waitForRequest((r) => r.url().includes('/generateUi'));
  await surface.getByRole('button', { name: 'Send', exact: true }).click();
  const body = (await request).postDataJSON();
  await waitTurn(page, turn);
  return body;
}

function assertUIEventRequest(body, surfaceId, value) {
  const conv = body.data.conversation;
  assert.equal(typeof body.data.sessionId, 'string');
  assert.deepEqual(conv.map((m) => m.role), ['user', 'model', 'user']);
  // The model's turn is replayed: its text and the surface it showed.
  const ui = conv[1].parts.find((p) => p.type === 'ui');
  assert.equal(ui.definition.surfaceId, surfaceId);
  assert.equal(ui.definition.root, 'root');
  assert.ok(ui.definition.widgets.some((w) => w.id === 'reply'));
  assert.ok(conv[1].parts.some((p) => p.type === 'text' && p.text));
  const parts = conv[2].parts;
  assert.equal(parts.length, 1);
  assert.equal(parts[0].type, 'uiEvent');
  const ev = parts[0].event;
  assert.equal(ev.surfaceId, surfaceId);
  assert.equal(ev.widgetId, 'send');
  assert.equal(ev.eventType, 'onTap');
  assert.equal(ev.isAction, true);
  assert.deepEqual(ev.value, value);
  assert.ok(!Number.isNaN(Date.parse(ev.timestamp)) && ev.timestamp.endsWith('Z'), `ISO timestamp: ${ev.timestamp}`);
}

describe('NDJSON transport, basic catalog', () => {
  let page;
  let surfaceId;
  before(async () => { page = await openPage(); });
  after(async () => { await closePage(page); });

  it('(a) shows the offline model, renders "Hello" as a surface, times the stream', TEST, async () => {
    await page.locator('header').getByText('genui/offline', { exact: true }).waitFor();
    await page.locator('header').getByText('not an LLM', { exact: true }).waitFor();
    assert.equal(await page.getByLabel('Transport').inputValue(), 'ndjson');
    await startSession(page, 'basic');
    const turn = await send(page, 'Hello');

    const surface = await assertHelloSurface(page);
    surfaceId = await surface.getAttribute('data-surface-id');
    assert.equal(surfaceId, 'surface-1');
    await page.getByRole('log').getByText('Here is a surface for your message.').waitFor();

    const events = inspector(page).getByRole('list', { name: `Events of turn ${turn}` }).getByRole('listitem');
    const labels = await events.allInnerTexts();
    assert.ok(labels.length >= 3, `at least text, toolRequest, result: ${labels}`);
    for (const l of labels) assert.match(l, /^\+\d+\.\d ms /);
    assert.ok(labels.some((l) => l.includes('toolRequest addOrUpdateSurface surface-1')), labels.join('\n'));
    assert.ok(labels.at(-1).includes('result stop'), labels.at(-1));
    const first = await page.locator(`[data-turn="${turn}"] [data-metric="first-surface"]`).innerText();
    const total = await page.locator(`[data-turn="${turn}"] [data-metric="total"]`).innerText();
    assert.match(first, /^\d+\.\d ms$/);
    assert.ok(parseFloat(first) <= parseFloat(total), `first surface ${first} <= total ${total}`);
    assert.match(await page.locator(`[data-turn="${turn}"] [data-metric="status"]`).innerText(), /^200 application\/x-ndjson/);
    await shot(page, 'a-hello');
  });

  it('(b) a tap on the rendered Send button updates the same surface with the field value', TEST, async () => {
    const surface = await onlySurface(page);
    const body = await roundTrip(page, surface, 'yes');
    assertUIEventRequest(body, surfaceId, { reply: 'yes' });

    const updated = await onlySurface(page);
    assert.equal(await updated.getAttribute('data-surface-id'), surfaceId);
    await updated.getByText('You used "send"').waitFor();
    const text = await updated.locator('[data-widget-id="message"]').innerText();
    assert.ok(text.includes('"reply":"yes"'), text);
    // The field keeps what the user typed, like the Flutter client's data model.
    assert.equal(await updated.getByRole('textbox').inputValue(), 'yes');
    await shot(page, 'b-ui-event');
  });

  it('(b) Enter in the rendered text field sends onSubmitted', TEST, async () => {
    const surface = await onlySurface(page);
    const turn = await nextTurn(page);
    await surface.getByRole('textbox').fill('again');
    await surface.getByRole('textbox').press('Enter');
    await waitTurn(page, turn);
    const text = await (await onlySurface(page)).locator('[data-widget-id="message"]').innerText();
    assert.ok(text.includes('You used "reply" (onSubmitted)') && text.includes('"reply":"again"'), text);
  });

  it('(f) "please delete it" removes the surface', TEST, async () => {
    await send(page, 'please delete it');
    assert.equal(await surfacesRegion(page).locator('[data-surface-id]').count(), 0);
    await page.getByRole('log').getByText(`Removed surface ${surfaceId}`).waitFor();
    await surfacesRegion(page).getByText('No surfaces yet').waitFor();
    await shot(page, 'f-deleted');
  });
});

describe('Genkit SSE transport', () => {
  it('(c) the same flow works over SSE', TEST, async () => {
    const page = await openPage();
    await page.getByLabel('Transport').selectOption('sse');
    await startSession(page, 'basic');
    const request = page.waitForRequest((r) => r.url().includes('/generateUi'));
    const turn = await send(page, 'Hello');
    assert.match((await request).url(), /\/generateUi\?stream=true$/);
    assert.match(await page.locator(`[data-turn="${turn}"] [data-metric="status"]`).innerText(), /^200 text\/event-stream/);
    const labels = await inspector(page).getByRole('list', { name: `Events of turn ${turn}` }).getByRole('listitem').allInnerTexts();
    assert.ok(labels.some((l) => l.includes('toolRequest addOrUpdateSurface surface-1')), labels.join('\n'));
    assert.match(await page.locator(`[data-turn="${turn}"] [data-metric="first-surface"]`).innerText(), /^\d+\.\d ms$/);

    const surface = await assertHelloSurface(page);
    const body = await roundTrip(page, surface, 'yes');
    assertUIEventRequest(body, 'surface-1', { reply: 'yes' });
    const updated = await onlySurface(page);
    assert.equal(await updated.getAttribute('data-surface-id'), 'surface-1');
    await updated.getByText('You used "send"').waitFor();
    assert.ok((await updated.innerText()).includes('"reply":"yes"'));
    await shot(page, 'c-sse');
    await closePage(page);
  });
});

describe('rich catalog', () => {
  it('(d) a surface from the rich catalog renders', TEST, async () => {
    const page = await openPage();
    await startSession(page, 'rich');
    await send(page, 'Hello');
    const surface = await onlySurface(page);
    await surface.getByText('You said: Hello', { exact: true }).waitFor();
    assert.equal(await surface.getByRole('textbox').count(), 1);
    await surface.getByRole('button', { name: 'Send', exact: true }).waitFor();
    await shot(page, 'd-rich');
    await closePage(page);
  });

  it('(d) every widget of both sample catalogs renders; unknown widgets are inspectable', TEST, async () => {
    const page = await openPage({ width: 375, height: 800 });
    const result = await page.evaluate(async () => {
      const { renderSurface } = await import('./render.js');
      const w = (id, type, props) => ({ id, widget: { [type]: props } });
      const def = {
        root: 'root',
        widgets: [
          w('root', 'Column', { children: ['title', 'card', 'row', 'list', 'field', 'pw', 'notes', 'check', 'group', 'radio', 'slider', 'chips', 'div', 'img', 'asset', 'mystery', 'missing', 'btn'], spacing: 10 }),
          w('title', 'Text', { text: 'Every widget', style: 'headline' }),
          w('card', 'Card', { child: 'card-text', elevation: 2 }),
          w('card-text', 'Text', { text: 'Inside a card', style: 'body' }),
          w('row', 'Row', { children: ['i1', 'i2', 'i3', 'cap'], mainAxisAlignment: 'start', crossAxisAlignment: 'center', spacing: 6 }),
          w('i1', 'Icon', { name: 'star' }), w('i2', 'Icon', { name: 'check' }), w('i3', 'Icon', { name: 'no-such-icon' }),
          w('cap', 'Text', { text: 'caption text', style: 'caption' }),
          w('list', 'List', { children: ['tile1', 'tile2'], dividers: true }),
          w('tile1', 'ListTile', { title: 'Ada Lovelace', subtitle: 'Analyst', leading: 'person', trailing: 'chev' }),
          w('person', 'Icon', { name: 'person' }), w('chev', 'Icon', { name: 'info' }),
          w('tile2', 'ListTile', { title: 'No subtitle', subtitle: null }),
          w('field', 'TextField', { label: 'Name', value: 'Ada', hintText: 'Your name' }),
          w('pw', 'TextField', { label: 'Password', obscureText: true }),
          w('notes', 'TextField', { label: 'Notes', maxLines: 3 }),
          w('check', 'Checkbox', { label: 'Subscribe', value: false }),
          w('group', 'CheckboxGroup', { labels: ['Red', 'Green'], values: [true, false] }),
          w('radio', 'RadioGroup', { groupValue: 'Small', labels: ['Small', 'Large'] }),
          w('slider', 'Slider', { value: 3, min: 0, max: 10, divisions: 10 }),
          w('chips', 'Row', { children: ['chip1', 'chip2'] }),
          w('chip1', 'Chip', { label: 'Vegan', selected: true }), w('chip2', 'Chip', { label: 'Spicy' }),
          w('div', 'Divider', {}),
          w('img', 'Image', { url: 'data:image/svg+xml,%3Csvg xmlns=%22http://www.w3.org/2000/svg%22 width=%2240%22 height=%2240%22%3E%3Crect width=%2240%22 height=%2240%22 fill=%22%230b57d0%22/%3E%3C/svg%3E', alt: 'A blue square', fit: 'contain', height: 40 }),
          w('asset', 'Image', { assetName: 'logo.png', fit: 'fitWidth' }),
          w('mystery', 'Carousel', { items: [1, 2] }),
          w('btn', 'ElevatedButton', { child: 'btn-label', action: 'submit' }),
          w('btn-label', 'Text', { text: 'Submit' }),
        ],
      };
      const host = document.createElement('div');
      host.id = 'fixture';
      host.setAttribute('data-surface-id', 'fixture');
      host.className = 'surface';
      document.querySelector('#surfaces').append(host);
      document.querySelector('#surfaces-empty').hidden = true;
      const values = new Map();
      window.__events = [];
      host.append(renderSurface(def, { values, onEvent: (id, type) => window.__events.push({ id, type, value: Object.fromEntries(values) }) }));
      const types = [...host.querySelectorAll('[data-widget-type]')].map((e) => e.dataset.widgetType);
      return { types: [...new Set(types)].sort(), values: Object.fromEntries(values) };
    });
    const all = ['Card', 'Carousel', 'Checkbox', 'CheckboxGroup', 'Chip', 'Column', 'Divider', 'ElevatedButton', 'Icon',
      'Image', 'List', 'ListTile', 'RadioGroup', 'Row', 'Slider', 'Text', 'TextField'];
    assert.deepEqual(result.types, all);
    assert.deepEqual(result.values, { field: 'Ada', pw: '', notes: '', check: false, group: [true, false], radio: 'Small', slider: 3, chip1: true, chip2: false });

    const fx = page.locator('#fixture');
    // Unknown widget type: a box naming it, with its JSON in a <details>.
    const unknown = fx.getByRole('group', { name: 'Unknown widget: Carousel' });
    await unknown.getByText('JSON').click();
    assert.ok((await unknown.locator('pre').innerText()).includes('"Carousel"'));
    await fx.getByText('Missing widget "missing"').waitFor();
    await fx.getByRole('img', { name: 'A blue square' }).waitFor();
    await fx.getByRole('img', { name: 'star' }).waitFor();

    // Interactions update the values an action reports.
    await fx.getByLabel('Name').fill('Grace');
    await fx.getByLabel('Subscribe').check();
    await fx.getByLabel('Green').check();
    await fx.getByLabel('Large').check();
    await fx.getByRole('button', { name: 'Vegan' }).click();
    await fx.getByRole('slider').fill('7');
    await fx.getByRole('button', { name: 'Submit' }).click();
    const events = await page.evaluate(() => window.__events);
    assert.deepEqual(events, [{
      id: 'btn', type: 'onTap',
      value: { field: 'Grace', pw: '', notes: '', check: true, group: [true, true], radio: 'Large', slider: 7, chip1: false, chip2: false },
    }]);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `no horizontal scrolling at 375 px (overflow ${overflow}px)`);
    await fx.screenshot({ path: path.join(ARTIFACTS, 'playground-d-all-widgets-375.png') });
    await closePage(page);
  });
});

describe('errors and small screens', () => {
  it('(e) an invalid catalog shows the server\'s message', TEST, async () => {
    const page = await openPage();
    const editor = page.getByLabel('Catalog JSON');
    await editor.fill('{not json');
    await page.getByRole('button', { name: 'Start session' }).click();
    await page.getByRole('alert').filter({ hasText: 'not valid JSON' }).waitFor();

    await editor.fill('{"type":"object"}');
    assert.equal(await page.getByLabel('Catalog', { exact: true }).inputValue(), 'custom');
    const response = page.waitForResponse((r) => r.url().endsWith('/startSession'));
    await page.getByRole('button', { name: 'Start session' }).click();
    const res = await response;
    assert.equal(res.status(), 400);
    const serverMessage = (await res.json()).error.message;
    assert.match(serverMessage, /defines no widgets/);
    const alert = page.getByRole('alert').filter({ hasText: 'defines no widgets' });
    await alert.waitFor();
    const shown = await alert.innerText();
    assert.ok(shown.includes(serverMessage) && shown.includes('INVALID_ARGUMENT'), shown);
    await shot(page, 'e-invalid-catalog');
    await closePage(page);
  });

  it('works at 375 px wide without horizontal scrolling', TEST, async () => {
    const page = await openPage({ width: 375, height: 812 });
    await startSession(page, 'basic');
    await send(page, 'Hello');
    await assertHelloSurface(page);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `no horizontal scrolling at 375 px (overflow ${overflow}px)`);
    await shot(page, 'g-375');
    await closePage(page);
  });
});
