// The playground's A2UI v0.8 renderer: @a2ui/lit's signal message processor and the v0.8
// <a2ui-surface> with the standard catalog's components, behind the same interface as
// v09.js (see createRenderer). Bundled by build.mjs into static/a2ui-v08.js.
//
// What v0.8 leaves to the host, done here: a theme for the components (a Lit context),
// noticing surfaces appear (beginRendering) and disappear, and turning a button's
// a2uiaction DOM event into a userAction with its context resolved from the data model.
import { Data } from '@a2ui/lit/v0_8';
import * as UI from '@a2ui/lit/ui';
import { ContextProvider } from '@lit/context';
import { renderMarkdown } from './markdown.js';
import { theme } from './theme08.js';

export const version = 'v0.8';
export const catalogId = 'https://a2ui.org/specification/v0_8/standard_catalog_definition.json';
export const packages = { '@a2ui/lit': __A2UI_LIT_VERSION__, '@a2ui/web_core': __A2UI_WEB_CORE_VERSION__ };

/** A data model value as plain JSON (the processor keeps maps as Map). */
function plain(v) {
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [k, plain(x)]));
  if (Array.isArray(v)) return v.map(plain);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  return v === undefined ? null : v;
}

/** A v0.8 bound value: its path read from the data model, else its literal. */
function resolve(processor, node, surfaceId, value) {
  if (!value || typeof value !== 'object') return value ?? null;
  if (typeof value.path === 'string') return plain(processor.getData(node, value.path, surfaceId));
  for (const k of ['literalString', 'literalNumber', 'literalBoolean', 'literalArray']) {
    if (k in value) return value[k];
  }
  return null;
}

/**
 * Creates a renderer for one conversation; see v09.js for the interface.
 * onAction receives {name, surfaceId, sourceComponentId, timestamp, context}, the
 * fields of a v0.8 userAction.
 */
export function createRenderer({ onAction, onSurfaceCreated, onSurfaceDeleted }) {
  const processor = Data.createSignalA2uiMessageProcessor();
  const shown = new Map(); // surfaceId → its <a2ui-surface>, or null before it is mounted

  const surfaceOf = (message) => {
    const body = message && typeof message === 'object' ? Object.values(message)[0] : null;
    return typeof body?.surfaceId === 'string' ? body.surfaceId : null;
  };

  return {
    version,
    catalogId,

    /** a2uiClientCapabilities for the request (v0.8: no version key). */
    capabilities: () => ({ supportedCatalogIds: [catalogId] }),

    /** v0.8 has no data model sync. */
    dataModel: () => undefined,

    /** Applies one server message; throws when the processor rejects it. */
    process(message) {
      processor.processMessages([message]);
      const id = surfaceOf(message);
      if (id === null) return;
      const surfaces = processor.getSurfaces(); // only those that may render (beginRendering seen)
      if (surfaces.has(id) && !shown.has(id)) {
        shown.set(id, null);
        onSurfaceCreated(id);
      } else if (!surfaces.has(id) && shown.has(id)) {
        shown.delete(id);
        onSurfaceDeleted(id);
      } else {
        // The processor rebuilds the surface's component tree in place; make sure the
        // element re-renders even where no signal reaches it.
        shown.get(id)?.requestUpdate();
      }
    },

    /** Renders surfaceId into host, which also provides the theme and catches its actions. */
    mount(surfaceId, host) {
      const surface = processor.getSurfaces().get(surfaceId);
      if (!surface) throw new Error(`no surface ${surfaceId}`);
      new ContextProvider(host, { context: UI.Context.themeContext, initialValue: theme });
      new ContextProvider(host, { context: UI.Context.markdown, initialValue: renderMarkdown });
      host.addEventListener('a2uiaction', (ev) => {
        ev.stopPropagation();
        const { action, sourceComponentId, sourceComponent } = ev.detail ?? {};
        if (!action?.name) return;
        const context = {};
        for (const entry of Array.isArray(action.context) ? action.context : []) {
          if (typeof entry?.key === 'string') context[entry.key] = resolve(processor, sourceComponent, surfaceId, entry.value);
        }
        onAction({ name: action.name, surfaceId, sourceComponentId, timestamp: new Date().toISOString(), context });
      });
      const el = document.createElement('a2ui-surface');
      el.surfaceId = surfaceId;
      el.processor = processor;
      el.surface = surface;
      host.append(el);
      shown.set(surfaceId, el);
      return el;
    },

    /** Whether surfaceId draws something: it has a root component and a tree. */
    hasRoot: (surfaceId) => !!processor.getSurfaces().get(surfaceId)?.componentTree,

    dispose() {
      processor.clearSurfaces();
      for (const id of [...shown.keys()]) {
        shown.delete(id);
        onSurfaceDeleted(id);
      }
    },
  };
}
