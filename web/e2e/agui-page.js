// The page of agui.test.mjs: the official A2UI v0.9 web renderer (the playground's bundle,
// /a2ui-v09.js: @a2ui/lit + @a2ui/web_core) and nothing else. The AG-UI client is the
// test's, in node: after each a2ui-surface activity event it receives, it hands the page
// the activity message's content as the client holds it (window.agui.draw) and gets the
// user's actions back through window.onA2uiAction, which the test exposes.
//
// An activity's content is the A2UI messages that build its surface, in order. An
// ACTIVITY_SNAPSHOT replaces it (the whole surface so far: createSurface, updateComponents,
// updateDataModel), so the page draws it anew, with a renderer of its own, in the place
// of the activity message's previous drawing; an ACTIVITY_DELTA appends messages to it,
// so the page's renderer of that activity applies the messages it has not yet applied.
import { catalogId, packages } from '/a2ui-v09.js';
import { surfaceRenderer } from '/e2e/surfaces.js';

const surfaces = document.getElementById('surfaces');
const status = document.getElementById('status');

const state = {
  actions: [], // every action a renderer emitted
  clientErrors: [], // every error a surface reported
  rejected: [], // every message a renderer refused: {messageId, message, error}
  drawn: 0, // contents drawn anew (snapshots)
  updated: 0, // contents whose new messages were applied (deltas)
};

/**
 * The drawing of each activity message: its element, the renderer of its latest snapshot,
 * and how many of the content's messages that renderer applied.
 */
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
   * Draws the content of an a2ui-surface activity message, its operations, after an
   * event: after a snapshot (replace), anew: the previous drawing of the activity message
   * is disposed of, and a fresh renderer applies every message; after a delta, the
   * activity's renderer applies the messages after those it applied. Returns null, or
   * the renderer's error when it refuses one of them.
   */
  draw(messageId, operations, replace) {
    let activity = activities.get(messageId);
    let from = 0;
    if (replace || !activity) {
      const el = activityElement(messageId);
      activity?.renderer.dispose();
      el.replaceChildren();
      activity = { el, renderer: surfaceRenderer(el, state), applied: 0 };
      activities.set(messageId, activity);
      state.drawn++;
    } else {
      from = activity.applied;
      if (operations.length <= from) return `a delta that adds nothing: ${operations.length} messages, ${from} applied`;
      state.updated++;
    }
    for (const message of operations.slice(from)) {
      try {
        activity.renderer.process(message);
        activity.applied++;
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
