// The headless Chromium the browser tests share: launched before a test file's tests,
// closed after them.
//
// Env: CHROMIUM (default /usr/bin/chromium).
import { after, before } from 'node:test';
import { chromium } from 'playwright-core';

/** Launches Chromium for the calling test file; the returned getter yields it. */
export function useBrowser() {
  let browser;
  before(async () => {
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  });
  after(async () => {
    await browser?.close();
  });
  return () => browser;
}
