// The MCP App in real headless Chromium, with the official SDKs on both sides: node is the
// host's MCP client (@modelcontextprotocol/sdk 1.32.2 over Streamable HTTP to /mcp) and the
// page is the host's UI side (@modelcontextprotocol/ext-apps 2.0.4's AppBridge, see
// mcp-host.js). The test reads generate_ui's UI resource, loads it as a host does (a
// sandboxed frame, the default CSP), runs the handshake, gives it the tool's input and
// result, and checks what @a2ui/lit drew. A click on the drawn button comes back through
// the bridge as the app's tools/call of ui_action, which node forwards only because the
// tool's visibility includes the app, and the answer is drawn on the same surface. The
// app reports its size, adopts the host's theme variables and answers teardown.
//
//   GENUI_URL=http://localhost:3400/ node --test mcp.test.mjs
//
// GENUI_URL serves /mcp on the offline model (go test ./web/ starts such a server).
// MCP_RECORD, if set, is a file to write what crossed the wire: {"results": [every tool
// result], "appCalls": [every tools/call of the app]}. Env as in playground.test.mjs:
// CHROMIUM, ARTIFACTS.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { useBrowser } from './browser.mjs';

const BASE = new URL(process.env.GENUI_URL || 'http://localhost:3400/').href;
const ARTIFACTS = path.resolve(process.env.ARTIFACTS || fileURLToPath(new URL('../../test-artifacts', import.meta.url)));
const RECORD = process.env.MCP_RECORD || '';
const here = path.dirname(fileURLToPath(import.meta.url));
const TEST = { timeout: 90_000 };
const WAIT = 15_000;

mkdirSync(ARTIFACTS, { recursive: true });
const browser = useBrowser();
const record = { results: [], appCalls: [] };
const shot = (page, name) => page.screenshot({ path: path.join(ARTIFACTS, `mcp-app-${name}.png`), fullPage: true });

/** The host page's script: mcp-host.js and AppBridge, one IIFE. */
async function hostScript() {
  const out = await esbuild.build({
    entryPoints: [path.join(here, 'mcp-host.js')], bundle: true, format: 'iife', platform: 'browser',
    target: 'es2022', write: false, logLevel: 'warning',
  });
  return out.outputFiles[0].text;
}

describe('MCP App', () => {
  let client;
  let tools;
  let page;

  before(async () => {
    client = new Client({ name: 'genui-e2e-host', version: '1.0.0' }, {
      capabilities: { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } },
    });
    await client.connect(new StreamableHTTPClientTransport(new URL('mcp', BASE)));
    tools = (await client.listTools()).tools;
  });
  after(async () => {
    await page?.close();
    await client?.close();
    if (RECORD) writeFileSync(RECORD, JSON.stringify(record));
  });

  it('renders generate_ui in a host, and sends the user\'s action back', TEST, async () => {
    const gen = tools.find((t) => t.name === 'generate_ui');
    const uri = gen?._meta?.ui?.resourceUri;
    assert.equal(uri, 'ui://genui/surface-v09', 'generate_ui links its app');
    const res = await client.readResource({ uri });
    const app = res.contents[0];
    assert.equal(app.mimeType, 'text/html;profile=mcp-app');
    assert.ok(app.text.length < 1 << 20, `the app is ${app.text.length} bytes`);

    page = await (await browser().newContext({ viewport: { width: 700, height: 900 } })).newPage();
    const errors = [];
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    page.on('pageerror', (e) => errors.push(String(e)));
    // The app's tools/call: a host forwards it only to a tool the app may see.
    await page.exposeFunction('hostCallTool', async (params) => {
      record.appCalls.push(params);
      const tool = tools.find((t) => t.name === params.name);
      const visibility = tool?._meta?.ui?.visibility ?? ['model', 'app'];
      if (!visibility.includes('app')) return { isError: true, content: [{ type: 'text', text: `${params.name} is not the app's` }] };
      const result = await client.callTool(params);
      record.results.push(result);
      return result;
    });
    await page.setContent('<!doctype html><html><head><title>host</title></head><body></body></html>');
    await page.addScriptTag({ content: await hostScript() });
    await page.evaluate(({ html }) => window.startApp(html, {
      theme: 'light', displayMode: 'inline',
      styles: { variables: { '--color-background-primary': 'rgb(255, 251, 230)', '--font-sans': 'Georgia, serif' } },
    }), { html: app.text });
    assert.ok(await page.evaluate(() => window.hostState.initialized), 'the app initialised');

    const args = { prompt: 'a sign-up form' };
    await page.evaluate((a) => window.sendToolInput(a), args);
    const result = await client.callTool({ name: 'generate_ui', arguments: args });
    record.results.push(result);
    assert.ok(!result.isError, JSON.stringify(result.content));
    await page.evaluate((r) => window.sendToolResult(r), result);

    const frame = page.frameLocator('iframe');
    await frame.getByText('You said: a sign-up form').waitFor({ timeout: WAIT });
    await frame.getByRole('button', { name: 'Send' }).waitFor({ timeout: WAIT });
    await shot(page, 'generated');

    // The host's theme variables are the app's.
    const bg = await frame.locator('body').evaluate((b) => getComputedStyle(b).backgroundColor);
    assert.equal(bg, 'rgb(255, 251, 230)');

    // The user's action goes back through the host as tools/call ui_action, and the
    // answer is drawn.
    await frame.getByRole('textbox').first().fill('hello');
    await frame.getByRole('button', { name: 'Send' }).click();
    await frame.getByText(/You sent "send"/).waitFor({ timeout: WAIT });
    await shot(page, 'after-action');
    const call = record.appCalls.at(-1);
    assert.equal(call?.name, 'ui_action');
    assert.equal(call.arguments.conversationId, result.structuredContent.conversationId);
    assert.equal(call.arguments.surfaceId, 'surface-1');
    assert.deepEqual(call.arguments.context, { reply: 'hello' });

    const sizes = await page.evaluate(() => window.hostState.sizes);
    assert.ok(sizes.length > 0 && sizes.at(-1).height > 100, `sizes reported: ${JSON.stringify(sizes)}`);
    assert.deepEqual(await page.evaluate(() => window.teardownApp()), {});
    assert.deepEqual(errors, [], 'no errors in the page or the app');
  });
});
