// The page of a2a.test.mjs: the official A2UI v0.9 web renderer (the playground's bundle,
// /a2ui-v09.js: @a2ui/lit + @a2ui/web_core) and nothing else. The A2A client is the
// test's, in node: it hands the page each A2UI message it receives (window.a2a.process)
// and gets the user's actions back through window.onA2uiAction, which the test exposes.
import { packages } from '/a2ui-v09.js';
import { surfaceRenderer } from '/e2e/surfaces.js';

const surfaces = document.getElementById('surfaces');
const status = document.getElementById('status');

const state = {
  actions: [], // every action the renderer emitted
  clientErrors: [], // every error a surface reported
  rejected: [], // every server message the renderer refused: {message, error}
};

const renderer = surfaceRenderer(surfaces, state);

window.a2a = {
  packages,
  state,
  capabilities: () => renderer.capabilities(),
  dataModel: () => renderer.dataModel() ?? null,
  /** Applies one server message; returns null, or the renderer's error when it refuses it. */
  process(message) {
    try {
      renderer.process(message);
      return null;
    } catch (e) {
      const error = e?.message ?? String(e);
      state.rejected.push({ message, error });
      return error;
    }
  },
};

status.textContent = `Renderer ready: @a2ui/lit ${packages['@a2ui/lit']} + @a2ui/web_core ${packages['@a2ui/web_core']}`;
