// The official TypeScript MCP SDK (@modelcontextprotocol/sdk 1.32.2, from npm) against
// /mcp on two replicas that share Redis: discovery by initialize, the tools and the UI
// resource listed with their _meta.ui, the resource read, generate_ui called on the first
// replica and its conversation continued on the second (a second call, then the user's
// action through ui_action), and an unknown handle refused.
//
//   GENUI_A=http://localhost:3400/ GENUI_B=http://localhost:3401/ node --test replicas.test.mjs
//
// MCP_RECORD, if set, is a file to write every tool result to, for the Go test to check
// its A2UI against the specification's schemas.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const A = new URL(process.env.GENUI_A || 'http://localhost:3400/').href;
const B = new URL(process.env.GENUI_B || 'http://localhost:3401/').href;
const RECORD = process.env.MCP_RECORD || '';
const APP = 'ui://genui/surface-v09';
const results = [];
const clients = [];

/** A host's MCP client of the replica at base, which renders MCP Apps. */
async function connect(base) {
  const client = new Client({ name: 'genui-mcp-compat', version: '1.0.0' }, {
    capabilities: { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } },
  });
  await client.connect(new StreamableHTTPClientTransport(new URL('mcp', base)));
  clients.push(client);
  return client;
}

async function call(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  results.push({ name, result: res });
  return res;
}

describe('the TypeScript MCP SDK on two replicas', () => {
  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    if (RECORD) writeFileSync(RECORD, JSON.stringify(results));
  });

  it('discovers the server, its tools and its app', async () => {
    const a = await connect(A);
    assert.equal(a.getServerVersion()?.name, 'genui');
    assert.ok(a.getServerCapabilities()?.tools, 'tools');
    assert.ok(a.getInstructions()?.includes('generate_ui'));
    const { tools } = await a.listTools();
    assert.deepEqual(tools.map((t) => t.name), ['generate_ui', 'ui_action', 'ui_stream', 'ui_tool_result']);
    const gen = tools[0];
    assert.equal(gen._meta?.ui?.resourceUri, APP);
    assert.equal(gen._meta?.['ui/resourceUri'], APP);
    assert.deepEqual(gen.inputSchema.required, ['prompt']);
    assert.ok(gen.outputSchema?.properties?.messages, 'an output schema');
    for (const t of tools.slice(1)) assert.deepEqual(t._meta?.ui?.visibility, ['app'], `${t.name} is the app's`);
    const { resources } = await a.listResources();
    assert.deepEqual(resources.map((r) => [r.uri, r.mimeType]), [[APP, 'text/html;profile=mcp-app']]);
    const read = await a.readResource({ uri: APP });
    const app = read.contents[0];
    assert.equal(app.mimeType, 'text/html;profile=mcp-app');
    assert.ok(app.text.startsWith('<!doctype html>') && app.text.length < 1 << 20, `${app.text.length} bytes`);
    assert.deepEqual(app._meta?.ui?.permissions, { geolocation: {} });
  });

  it('continues a conversation on the other replica', async () => {
    const a = await connect(A);
    const b = await connect(B);
    const first = await call(a, 'generate_ui', { prompt: 'a sign-up form' });
    assert.ok(!first.isError, JSON.stringify(first.content));
    const { conversationId, messages } = first.structuredContent;
    assert.ok(conversationId && messages.length > 0);
    assert.ok(messages.some((m) => m.createSurface?.surfaceId === 'form'), 'the form is created');
    assert.match(first.content[0].text, /Shown to the user: surface "form"/);
    assert.ok(first.content[0].text.includes(conversationId), 'the text gives the handle to continue');

    const second = await call(b, 'generate_ui', { prompt: 'make the title friendlier', conversationId });
    assert.ok(!second.isError, JSON.stringify(second.content));
    assert.equal(second.structuredContent.conversationId, conversationId);
    assert.ok(second.structuredContent.messages.some((m) => m.updateComponents?.surfaceId === 'form'), 'the same surface, updated');

    const action = await call(b, 'ui_action', {
      conversationId, name: 'join', surfaceId: 'form', sourceComponentId: 'submit', context: { email: 'ada@example.com' },
    });
    assert.ok(!action.isError, JSON.stringify(action.content));
    assert.equal(action.structuredContent.conversationId, conversationId);
  });

  it('refuses an unknown conversation, naming the field', async () => {
    const b = await connect(B);
    const res = await b.callTool({ name: 'generate_ui', arguments: { prompt: 'more', conversationId: 'never-was' } });
    assert.equal(res.isError, true);
    assert.match(res.content[0].text, /^conversationId: unknown or expired conversation/);
    // A missing argument is a tool error naming it, as the SDKs validate input.
    const bad = await b.callTool({ name: 'generate_ui', arguments: {} });
    assert.equal(bad.isError, true);
    assert.match(bad.content[0].text, /prompt/);
  });
});
