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
// GENUI_URL serves /mcp on the offline model (go test ./web/ starts such a server);
// GENUI_SLOW_URL one whose model pauses mid-surface, GENUI_TOOLS_URL one whose model asks
// the app for the user's context and location before it shows anything.
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
const SLOW = process.env.GENUI_SLOW_URL ? new URL(process.env.GENUI_SLOW_URL).href : '';
const TOOLS = process.env.GENUI_TOOLS_URL ? new URL(process.env.GENUI_TOOLS_URL).href : '';
const ARTIFACTS = path.resolve(process.env.ARTIFACTS || fileURLToPath(new URL('../../test-artifacts', import.meta.url)));
const RECORD = process.env.MCP_RECORD || '';
const here = path.dirname(fileURLToPath(import.meta.url));
const TEST = { timeout: 90_000 };
const WAIT = 15_000;

mkdirSync(ARTIFACTS, { recursive: true });
const browser = useBrowser();
const record = { results: [], appCalls: [], streamed: [], timing: null };
const shot = (page, name) => page.screenshot({ path: path.join(ARTIFACTS, `mcp-app-${name}.png`), fullPage: true });

/** An MCP client of the server at base, as a host holds one, with its tools. */
async function hostClient(base) {
  const client = new Client({ name: 'genui-e2e-host', version: '1.0.0' }, {
    capabilities: { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } },
  });
  await client.connect(new StreamableHTTPClientTransport(new URL('mcp', base)));
  return { client, tools: (await client.listTools()).tools };
}

/**
 * Opens a host page running the app of html, whose tools/calls go to client: a host
 * forwards the app's call only to a tool the app may see.
 */
async function openHost(client, tools, html, hostContext) {
  const page = await (await browser().newContext({ viewport: { width: 700, height: 900 } })).newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.exposeFunction('hostCallTool', async (params) => {
    record.appCalls.push(params);
    const tool = tools.find((t) => t.name === params.name);
    const visibility = tool?._meta?.ui?.visibility ?? ['model', 'app'];
    if (!visibility.includes('app')) return { isError: true, content: [{ type: 'text', text: `${params.name} is not the app's` }] };
    const result = await client.callTool(params);
    (params.name === 'ui_stream' ? record.streamed : record.results).push(result);
    return result;
  });
  await page.setContent('<!doctype html><html><head><title>host</title></head><body></body></html>');
  await page.addScriptTag({ content: await hostScript() });
  await page.evaluate(({ html, hostContext }) => window.startApp(html, hostContext), { html, hostContext });
  assert.ok(await page.evaluate(() => window.hostState.initialized), 'the app initialised');
  return { page, errors };
}

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
    ({ client, tools } = await hostClient(BASE));
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

    let errors;
    ({ page, errors } = await openHost(client, tools, app.text, {
      theme: 'light', displayMode: 'inline',
      styles: { variables: { '--color-background-primary': 'rgb(255, 251, 230)', '--font-sans': 'Georgia, serif' } },
    }));

    const args = { prompt: 'a sign-up form' };
    await page.evaluate((a) => window.sendToolInput(a), args);
    const result = await client.callTool({ name: 'generate_ui', arguments: args });
    record.results.push(result);
    assert.ok(!result.isError, JSON.stringify(result.content));
    await page.evaluate((r) => window.sendToolResult(r), result);

    const frame = page.frameLocator('iframe');
    await frame.getByText('You said: a sign-up form').waitFor({ timeout: WAIT });
    await frame.getByRole('button', { name: 'Send' }).waitFor({ timeout: WAIT });
    assert.equal(await frame.locator('a2ui-surface').count(), 1, 'one surface, drawn once');
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
    const call = record.appCalls.filter((c) => c.name === 'ui_action').at(-1);
    assert.equal(call?.name, 'ui_action');
    assert.equal(call.arguments.conversationId, result.structuredContent.conversationId);
    assert.equal(call.arguments.surfaceId, 'surface-1');
    assert.deepEqual(call.arguments.context, { reply: 'hello' });

    const sizes = await page.evaluate(() => window.hostState.sizes);
    assert.ok(sizes.length > 0 && sizes.at(-1).height > 100, `sizes reported: ${JSON.stringify(sizes)}`);
    assert.deepEqual(await page.evaluate(() => window.teardownApp()), {});
    assert.deepEqual(errors, [], 'no errors in the page or the app');
  });

  // A model that pauses mid-surface (GENUI_SLOW_URL): the app shows the first components
  // while generate_ui still runs, then the rest from its result, each component once.
  it('shows the surface growing while generate_ui runs', { ...TEST, skip: !SLOW && 'GENUI_SLOW_URL is not set' }, async () => {
    const slow = await hostClient(SLOW);
    try {
      const res = await slow.client.readResource({ uri: 'ui://genui/surface-v09' });
      const { page: p, errors } = await openHost(slow.client, slow.tools, res.contents[0].text, { theme: 'light' });
      const args = { prompt: 'a table booking form' };
      await p.evaluate((a) => window.sendToolInput(a), args);
      const started = Date.now();
      let returned = 0;
      const pending = slow.client.callTool({ name: 'generate_ui', arguments: args }).then((r) => { returned = Date.now(); return r; });
      const frame = p.frameLocator('iframe');
      await frame.getByText('Book a table').waitFor({ timeout: WAIT });
      const first = Date.now() - started;
      assert.equal(returned, 0, 'the first component showed before generate_ui returned');
      assert.equal(await frame.getByRole('button', { name: 'Book' }).count(), 0, 'the rest is not written yet');
      await shot(p, 'growing');
      const result = await pending;
      record.results.push(result);
      await p.evaluate((r) => window.sendToolResult(r), result);
      await frame.getByRole('button', { name: 'Book' }).waitFor({ timeout: WAIT });
      assert.equal(await frame.locator('a2ui-surface').count(), 1, 'one surface, drawn once');
      assert.equal(await frame.getByText('Book a table').count(), 1, 'the title, drawn once');
      await shot(p, 'grown');
      record.timing = { firstComponentMs: first, resultMs: returned - started };
      assert.deepEqual(errors, [], 'no errors in the page or the app');
      await p.close();
    } finally {
      await slow.client.close();
    }
  });

  // A model that asks for the user's context, then their location (GENUI_TOOLS_URL): the
  // app runs each call where the user is and answers it with ui_tool_result, through the
  // host; the surface that follows is drawn, and the host's model is told what it shows.
  it('runs the app\'s tools and goes on with their results', { ...TEST, skip: !TOOLS && 'GENUI_TOOLS_URL is not set' }, async () => {
    const h = await hostClient(TOOLS);
    try {
      const res = await h.client.readResource({ uri: 'ui://genui/surface-v09' });
      assert.deepEqual(res.contents[0]._meta?.ui?.permissions, { geolocation: {} }, 'the app asks for the location');
      const { page: p, errors } = await openHost(h.client, h.tools, res.contents[0].text,
        { theme: 'light', locale: 'fr-FR', timeZone: 'Europe/Paris' });
      const args = { prompt: 'plan my day near me' };
      await p.evaluate((a) => window.sendToolInput(a), args);
      const result = await h.client.callTool({ name: 'generate_ui', arguments: args });
      record.results.push(result);
      assert.ok(!result.isError, JSON.stringify(result.content));
      assert.deepEqual(result.structuredContent.toolCalls.map((c) => c.name), ['get_user_context']);
      assert.match(result.content[0].text, /waits for the app showing it to answer get_user_context/);
      await p.evaluate((r) => window.sendToolResult(r), result);

      const frame = p.frameLocator('iframe');
      await frame.getByText('Your time zone: Europe/Paris').waitFor({ timeout: WAIT });
      await frame.getByText('Your location: not given').waitFor({ timeout: WAIT });
      await shot(p, 'app-tools');
      const answers = record.appCalls.filter((c) => c.name === 'ui_tool_result');
      assert.equal(answers.length, 2, 'one answer per call');
      const [ctx, loc] = answers.map((c) => c.arguments.results[0]);
      assert.equal(ctx.name, 'get_user_context');
      assert.equal(ctx.output.timeZone, 'Europe/Paris');
      assert.equal(ctx.output.locale, 'fr-FR');
      assert.equal(loc.name, 'get_location');
      assert.ok(loc.error && !loc.output, `the frame has no location: ${JSON.stringify(loc)}`);
      assert.ok(answers.every((c) => c.arguments.conversationId === result.structuredContent.conversationId));

      const told = await p.evaluate(() => window.hostState.modelContext);
      assert.equal(told.length, 1, `update-model-context: ${JSON.stringify(told)}`);
      assert.match(told[0].content[0].text, /Shown to the user: surface "day"/);
      assert.deepEqual(errors, [], 'no errors in the page or the app');
      await p.close();
    } finally {
      await h.client.close();
    }
  });
});
