// How Chromium reads URLs: each string of INPUT (a JSON array) parsed by new URL() against
// the base https://app.example/dir/, as a page resolves an <img src> or a link; the
// protocol, hostname and credentials of each, or null where it throws, are written to
// OUTPUT as a JSON array.
//
// Env: INPUT, OUTPUT, CHROMIUM.
import { test } from 'node:test';
import { readFile, writeFile } from 'node:fs/promises';
import { useBrowser } from './browser.mjs';

const browser = useBrowser();

test('new URL() in Chromium', async () => {
  const input = JSON.parse(await readFile(process.env.INPUT, 'utf8'));
  const page = await browser().newPage();
  const out = await page.evaluate((list) => list.map((s) => {
    try {
      const u = new URL(s, 'https://app.example/dir/');
      return { protocol: u.protocol, hostname: u.hostname, credentials: u.username !== '' || u.password !== '' };
    } catch {
      return null;
    }
  }), input);
  await page.close();
  await writeFile(process.env.OUTPUT, JSON.stringify(out));
});
