// The playground's A2UI v0.9 renderer: @a2ui/web_core's MessageProcessor and @a2ui/lit's
// <a2ui-surface> with the basic catalog, behind the small interface the page uses for
// both versions (see createRenderer). Bundled by build.mjs into static/a2ui-v09.js.
import { basicCatalog } from '@a2ui/lit/v0_9';
import { Context, MessageProcessor } from '@a2ui/web_core/v0_9';
import { ContextProvider } from '@lit/context';
import { renderMarkdown } from './markdown.js';

export const version = 'v0.9';
export const catalogId = basicCatalog.id;
export const packages = { '@a2ui/lit': __A2UI_LIT_VERSION__, '@a2ui/web_core': __A2UI_WEB_CORE_VERSION__ };

/**
 * Creates a renderer for one conversation.
 *
 * @param {object} hooks
 * @param {(action: {name: string, surfaceId: string, sourceComponentId: string, timestamp: string, context: object}) => void} hooks.onAction
 *   a user action, its context already resolved from the data model by web_core
 * @param {(surfaceId: string) => void} hooks.onSurfaceCreated
 * @param {(surfaceId: string) => void} hooks.onSurfaceDeleted
 * @param {(error: object) => void} [hooks.onClientError] an error a surface reports
 *   (client_to_server.json's error object), for the server
 */
export function createRenderer({ onAction, onSurfaceCreated, onSurfaceDeleted, onClientError = () => {} }) {
  const processor = new MessageProcessor([basicCatalog], (action) => onAction(action));
  const subs = [
    processor.onSurfaceCreated((surface) => {
      subs.push(surface.onError.subscribe((error) => onClientError(error)));
      onSurfaceCreated(surface.id);
    }),
    processor.onSurfaceDeleted((id) => onSurfaceDeleted(id)),
  ];
  return {
    version,
    catalogId,

    /** a2uiClientCapabilities for the request: {"v0.9": {supportedCatalogIds: [...]}}. */
    capabilities: () => processor.getClientCapabilities(),

    /** a2uiClientDataModel for the request, or undefined when no surface asks for it. */
    dataModel: () => processor.getClientDataModel(),

    /**
     * Applies one server message. Throws (web_core's own error) when the renderer
     * rejects it; nothing of a rejected message is applied.
     */
    process(message) {
      processor.processMessages([message]);
    },

    /** Renders surfaceId into host (an element of the page). */
    mount(surfaceId, host) {
      const surface = processor.model.getSurface(surfaceId);
      if (!surface) throw new Error(`no surface ${surfaceId}`);
      new ContextProvider(host, { context: Context.markdown, initialValue: renderMarkdown });
      const el = document.createElement('a2ui-surface');
      el.surface = surface;
      host.append(el);
      return el;
    },

    /** Whether surfaceId has its root component, i.e. draws something. */
    hasRoot: (surfaceId) => !!processor.model.getSurface(surfaceId)?.componentsModel.get('root'),

    dispose() {
      for (const s of subs) s.unsubscribe?.();
      for (const id of [...processor.model.surfacesMap.keys()]) processor.processMessages([{ version, deleteSurface: { surfaceId: id } }]);
    },
  };
}
