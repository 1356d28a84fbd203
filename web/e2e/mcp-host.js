// The host side of MCP Apps for mcp.test.mjs, in the page: the official AppBridge
// (@modelcontextprotocol/ext-apps 2.0.4), without an MCP client of its own (its 2.x
// bridge expects the 2.x client; node holds the 1.x SDK client), so that each tools/call
// of the app goes to node (window.hostCallTool, exposed by the test), which decides and
// forwards it. The app runs as a host runs it: in a sandboxed iframe (scripts only, an
// opaque origin) under the MCP Apps default CSP. mcp.test.mjs bundles this file with
// esbuild and adds it to a blank page.
import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';

// The CSP a host MUST apply to an app that declares none (MCP Apps 2026-01-26).
const DEFAULT_CSP = "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; " +
  "img-src 'self' data:; media-src 'self' data:; connect-src 'none'";

const state = { sizes: [], initialized: false, bridge: null, frame: null, cspViolations: [], modelContext: [] };
window.hostState = state;

/** Loads the app's HTML into a sandboxed frame and runs the handshake with it. */
window.startApp = async (html, hostContext) => {
  const frame = document.createElement('iframe');
  frame.setAttribute('sandbox', 'allow-scripts');
  frame.style.cssText = 'width: 640px; height: 200px; border: 1px solid #ccc;';
  frame.srcdoc = html.replace('<head>', `<head><meta http-equiv="Content-Security-Policy" content="${DEFAULT_CSP}">`);
  document.body.append(frame);
  state.frame = frame;

  const bridge = new AppBridge(null, { name: 'genui-test-host', version: '1.0.0' },
    { serverTools: {}, openLinks: {}, logging: {}, updateModelContext: { text: {} } }, { hostContext });
  bridge.oncalltool = (params) => window.hostCallTool(params);
  bridge.onupdatemodelcontext = async (params) => {
    state.modelContext.push(params);
    return {};
  };
  bridge.onsizechange = ({ width, height }) => {
    state.sizes.push({ width, height });
    if (height) frame.style.height = `${height}px`;
  };
  const initialized = new Promise((resolve) => {
    bridge.oninitialized = () => {
      state.initialized = true;
      resolve();
    };
  });
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  state.bridge = bridge;
  await initialized;
};

window.sendToolInput = (args) => state.bridge.sendToolInput({ arguments: args });
window.sendToolResult = (result) => state.bridge.sendToolResult(result);
window.teardownApp = async () => {
  const res = await state.bridge.teardownResource({});
  return res ?? {};
};
