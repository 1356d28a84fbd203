// The page of agui.test.mjs: the official A2UI v0.9 web renderer (the playground's bundle,
// /a2ui-v09.js: @a2ui/lit + @a2ui/web_core) and nothing else. The AG-UI client is the
// test's, in node: it hands the page each a2ui-surface activity snapshot it receives
// (window.agui.draw) and gets the user's actions back through window.onA2uiAction, which
// the test exposes.
//
// An activity snapshot replaces its activity message: it holds the whole surface so far
// (createSurface, updateComponents, updateDataModel), so the page draws each one anew,
// with a renderer of its own, in the place of the activity message's previous drawing.
import { catalogId, packages } from '/a2ui-v09.js';
import { surfaceRenderer } from '/e2e/surfaces.js';

const surfaces = document.getElementById('surfaces');
const status = document.getElementById('status');

const state = {
  actions: [], // every action a renderer emitted
  clientErrors: [], // every error a surface reported
  rejected: [], // every message a renderer refused: {messageId, message, error}
  drawn: 0, // snapshots drawn
};

/** The drawing of each activity message: its element and the renderer of its latest snapshot. */
const activities = new Map();

/** The element of an activity message, made at the end of the surfaces when new. */
function activityElement(messageId) {
  let el = activities.get(messageId)?.el;
  if (!el) {
    el = document.createElement('div');
    el.className = 'activity';
    el.dataset.messageId = messageId;
    surfaces.append(el);
  }
  return el;
}

window.agui = {
  packages,
  catalogId,
  state,
  /**
   * Draws one a2ui-surface activity snapshot anew: the previous drawing of the activity
   * message is disposed of, and a fresh renderer applies the snapshot's messages. Returns
   * null, or the renderer's error when it refuses one of them.
   */
  draw(messageId, operations) {
    const el = activityElement(messageId);
    activities.get(messageId)?.renderer.dispose();
    el.replaceChildren();
    const renderer = surfaceRenderer(el, state);
    activities.set(messageId, { el, renderer });
    state.drawn++;
    for (const message of operations) {
      try {
        renderer.process(message);
      } catch (e) {
        const error = e?.message ?? String(e);
        state.rejected.push({ messageId, message, error });
        return error;
      }
    }
    return null;
  },
};

status.textContent = `Renderer ready: @a2ui/lit ${packages['@a2ui/lit']} + @a2ui/web_core ${packages['@a2ui/web_core']}`;
