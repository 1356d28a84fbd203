// The A2UI test pages' renderer: the official A2UI v0.9 web renderer (the playground's
// bundle, /a2ui-v09.js), each surface drawn in an article of its own inside a container,
// every action and client error recorded in state.
import { createRenderer } from '/a2ui-v09.js';

/**
 * @param {HTMLElement} container where the surfaces go
 * @param {{actions: object[], clientErrors: object[]}} state
 */
export function surfaceRenderer(container, state) {
  const renderer = createRenderer({
    onSurfaceCreated(surfaceId) {
      const host = document.createElement('article');
      host.className = 'surface a2ui a2ui-v09';
      host.dataset.surfaceId = surfaceId;
      host.setAttribute('aria-label', `Surface ${surfaceId}`);
      const body = document.createElement('div');
      body.className = 'surface-body a2ui-host';
      host.append(body);
      container.append(host);
      renderer.mount(surfaceId, body);
    },
    onSurfaceDeleted(surfaceId) {
      container.querySelector(`[data-surface-id="${CSS.escape(surfaceId)}"]`)?.remove();
    },
    onAction(action) {
      state.actions.push(action);
      window.onA2uiAction?.(action);
    },
    onClientError(error) {
      state.clientErrors.push(error);
    },
  });
  return renderer;
}
