// Browser test of the playground's A2UI v0.9 mode with a long list: the server streams a
// surface of LONGLIST_ROWS Text rows ("Row i of the list") as the model writes it, and the
// official renderer (@a2ui/lit, bundled as a2ui-v09.js) draws every row.
//
//   GENUI_URL=http://localhost:3400/ LONGLIST_RECORD=/tmp/longlist.json node --test longlist.test.mjs
//
// GENUI_URL serves a model that writes a2uitest.LongList(LONGLIST_ROWS) (go test ./web/
// starts it). LONGLIST_RECORD: a file to write what the page received and drew to, for the
// Go test to check: the A2UI lines of the response, the rows drawn, and the times from the
// click on Send to the first row drawn and to the last. Env as in playground.test.mjs:
// CHROMIUM, ARTIFACTS.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { useBrowser } from './browser.mjs';

const BASE = new URL(process.env.GENUI_URL || 'http://localhost:3400/').href;
const ROWS = Number(process.env.LONGLIST_ROWS || 2000);
const ARTIFACTS = path.resolve(process.env.ARTIFACTS || fileURLToPath(new URL('../../test-artifacts', import.meta.url)));
const WAIT = 15_000;
const TEST = { timeout: 60_000 };

mkdirSync(ARTIFACTS, { recursive: true });

const browser = useBrowser();

const record = {};
after(() => {
  if (process.env.LONGLIST_RECORD) writeFileSync(process.env.LONGLIST_RECORD, JSON.stringify(record, null, 2));
});

/**
 * Installed in the page: rows(root) returns the indices of the rendered Text elements
 * under root reading "Row i of the list", looking into every shadow root; a watcher
 * notes, from the next click on, the first animation frame with a row drawn and the
 * first with all of them (window.__longList).
 */
function watchRows(want) {
  const roots = function* (r) {
    yield r;
    for (const el of r.querySelectorAll('*')) if (el.shadowRoot) yield* roots(el.shadowRoot);
  };
  window.__rows = (root) => {
    const found = [];
    for (const r of roots(root)) {
      for (const el of r.querySelectorAll('a2ui-basic-text')) {
        const m = /^Row (\d+) of the list$/.exec((el.shadowRoot ?? el).textContent.trim());
        if (m) found.push(Number(m[1]));
      }
    }
    return found;
  };
  const w = window.__longList = { start: null, firstRow: null, lastRow: null };
  document.addEventListener('click', () => { w.start ??= performance.now(); }, { capture: true });
  const tick = () => {
    if (w.start !== null) {
      const n = window.__rows(document.body).length;
      const t = performance.now() - w.start;
      if (n > 0 && w.firstRow === null) w.firstRow = t;
      if (n >= want) {
        w.lastRow = t;
        return;
      }
    }
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}

describe('A2UI v0.9, a long list', () => {
  it(`(o) the official renderer draws all ${ROWS} rows of a streamed list`, TEST, async () => {
    const context = await browser().newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(WAIT);
    const problems = [];
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(`console: ${m.text()}`);
    });
    await page.goto(`${BASE}?ui=a2ui-v0.9`);
    await page.locator('#a2ui-status').filter({ hasText: 'A2UI v0.9: messages go to /generateA2ui' }).waitFor();
    await page.evaluate(watchRows, ROWS);

    const response = page.waitForResponse((r) => r.url().endsWith('/generateA2ui'));
    await page.getByLabel('Message', { exact: true }).fill('List my contacts');
    await page.getByRole('button', { name: 'Send message' }).click();
    const metric = (name) => page.locator(`[data-turn="1"] [data-metric="${name}"]`);
    await metric('total').filter({ hasText: / ms$/ }).waitFor({ timeout: 45_000 });
    const res = await response;
    assert.equal(res.status(), 200);

    // The A2UI lines of the response as the page received it: those without a "type".
    const lines = (await res.body()).toString('utf8').split('\n').filter((l) => l.trim());
    const a2ui = lines.filter((l) => !('type' in JSON.parse(l)));
    const ends = lines.map((l) => JSON.parse(l).type).filter(Boolean);
    assert.equal(ends.at(-1), 'result', `the stream ended with ${lines.at(-1)?.slice(0, 300)}`);

    // The surface, with every row drawn: counted in the page, through shadow roots, and
    // with a locator.
    const s = page.getByRole('region', { name: 'Surfaces' }).locator('[data-surface-id="s"]');
    const drawn = s.locator('a2ui-surface');
    await drawn.getByText(`Row ${ROWS - 1} of the list`, { exact: true }).waitFor();
    const rows = await s.evaluate((el) => window.__rows(el));
    const distinct = new Set(rows.filter((i) => i >= 0 && i < ROWS));
    assert.equal(await drawn.getByText(/^Row \d+ of the list$/).count(), ROWS);
    await page.waitForFunction(() => window.__longList.lastRow !== null);
    const watched = await page.evaluate(() => window.__longList);

    const errors = await page.locator('.msg.error').allInnerTexts();
    const labels = await page.getByRole('region', { name: 'Stream inspector' }).getByRole('list', { name: 'Events of turn 1' })
      .getByRole('listitem').allInnerTexts();
    const rejected = labels.filter((l) => l.includes('rejected'));
    Object.assign(record, {
      rows: rows.length, distinct: distinct.size,
      received: a2ui, bytes: a2ui.reduce((n, l) => n + Buffer.byteLength(l), 0),
      firstRowMs: watched.firstRow, lastRowMs: watched.lastRow,
      firstSurfaceMs: parseFloat(await metric('first-surface').innerText()),
      totalMs: parseFloat(await metric('total').innerText()),
      problems: [...problems, ...errors.map((e) => `error shown: ${e}`), ...rejected.map((l) => `inspector: ${l}`)],
    });
    await page.screenshot({ path: path.join(ARTIFACTS, 'playground-a2ui-v09-long-list.png') });
    await drawn.getByText(`Row ${ROWS - 1} of the list`, { exact: true }).scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(ARTIFACTS, 'playground-a2ui-v09-long-list-end.png') });

    assert.deepEqual(record.problems, [], 'the page saw errors');
    assert.equal(rows.length, ROWS, `${rows.length} rows drawn`);
    assert.equal(distinct.size, ROWS, `${distinct.size} distinct rows drawn`);
    assert.ok(watched.firstRow !== null && watched.firstRow <= watched.lastRow, JSON.stringify(watched));
    assert.ok(a2ui.length > 1, `${a2ui.length} A2UI lines: the surface streamed`);
    await context.close();
  });
});
