// Incremental readers for the two streaming formats of POST /generateUi, and the events
// of a /ws session's updates.
//
// Both buffer across network reads: an event may arrive split over several chunks (and a
// multi-byte character split between two), so bytes go through one streaming TextDecoder
// and only complete events (NDJSON: a line ending in \n; SSE: a block ending in a blank
// line) are parsed. Each event is normalised into actions:
//   {kind:'text', text} | {kind:'tool', name, input} | {kind:'result', result} | {kind:'error', error}
//   | {kind:'a2ui', message}
// The last is an A2UI message of POST /generateA2ui: an NDJSON line without "type" holding
// one A2UI operation (v0.9 or v0.8), passed on exactly as it arrived.

/**
 * Reads a response body and yields one parsed event per complete NDJSON line or SSE block.
 * @param {ReadableStream<Uint8Array>} body
 * @param {'ndjson'|'sse'} format
 * @returns {AsyncGenerator<{raw: string, label: string, actions: object[], invalid?: string}>}
 */
export async function* readEvents(body, format) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const sep = format === 'sse' ? '\n\n' : '\n';
  let buf = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += decoder.decode(value, { stream: true });
      if (buf.includes('\r\n')) buf = buf.replace(/\r\n/g, '\n');
      for (let i = buf.indexOf(sep); i >= 0; i = buf.indexOf(sep)) {
        const chunk = buf.slice(0, i);
        buf = buf.slice(i + sep.length);
        const ev = parseEvent(chunk, format);
        if (ev) yield ev;
      }
    }
    buf += decoder.decode();
    const ev = parseEvent(buf, format);
    if (ev) yield ev;
  } finally {
    reader.releaseLock();
  }
}

/** Parses one NDJSON line or SSE block; null for blank lines and SSE comments. */
export function parseEvent(chunk, format) {
  let data = chunk.trim();
  if (format === 'sse') {
    const lines = chunk.split('\n').filter((l) => l.startsWith('data:'));
    if (lines.length === 0) {
      // A comment such as ": keepalive" is still an event worth showing; blank is not.
      return chunk.trim() ? { raw: chunk, label: 'comment (ignored)', actions: [] } : null;
    }
    data = lines.map((l) => l.slice(l.startsWith('data: ') ? 6 : 5)).join('\n');
  }
  if (!data) return null;
  let obj;
  try {
    obj = JSON.parse(data);
  } catch (e) {
    return { raw: chunk, label: 'not JSON', actions: [], invalid: e.message };
  }
  const actions = format === 'sse' ? fromSSE(obj) : fromNDJSON(obj);
  return { raw: chunk, label: describe(obj, actions, format), actions };
}

/** The operations of A2UI server messages: v0.9, then those only v0.8 has. */
export const A2UI_OPS = ['createSurface', 'updateComponents', 'updateDataModel', 'deleteSurface',
  'beginRendering', 'surfaceUpdate', 'dataModelUpdate'];

/** The operation key of an A2UI server message, or null if it is not one. */
export function a2uiOp(o) {
  if (!o || typeof o !== 'object' || Array.isArray(o) || 'type' in o) return null;
  return A2UI_OPS.find((k) => k in o) ?? null;
}

/** A short description of an A2UI message: its operation, surface and what it touches. */
export function describeA2ui(o) {
  const op = a2uiOp(o);
  const body = o?.[op] ?? {};
  const parts = [op, body.surfaceId ?? '?'];
  if (Array.isArray(body.components)) parts.push(`[${body.components.map((c) => c?.id ?? '?').join(', ')}]`);
  if (op === 'updateDataModel' || op === 'dataModelUpdate') parts.push(body.path ?? '/');
  if (op === 'beginRendering') parts.push(`root=${body.root ?? '?'}`);
  return parts.join(' ');
}

/**
 * The event of a /ws session update (params.update of a session_update notification),
 * as readEvents yields it: a ui_update's event is exactly the object an NDJSON line
 * carries, an agent_message_chunk's chunk is model text. raw is the whole message.
 */
export function sessionUpdateEvent(update, raw) {
  if (update?.type === 'agent_message_chunk') {
    return { raw, label: 'agent_message_chunk', actions: [{ kind: 'text', text: String(update.chunk ?? '') }] };
  }
  if (update?.type === 'ui_update' && update.event && typeof update.event === 'object') {
    const actions = fromNDJSON(update.event);
    return { raw, label: `ui_update: ${describe(update.event, actions, 'ndjson')}`, actions };
  }
  return { raw, label: `${update?.type ?? 'update'} (ignored)`, actions: [] };
}

function fromNDJSON(o) {
  if (a2uiOp(o)) return [{ kind: 'a2ui', message: o }];
  switch (o?.type) {
    case 'text':
      return [{ kind: 'text', text: String(o.text ?? '') }];
    case 'toolRequest':
      return (Array.isArray(o.toolRequests) ? o.toolRequests : []).map((tr) => ({
        kind: 'tool', name: tr?.name, input: tr?.input,
      }));
    case 'result':
      return [{ kind: 'result', result: o.result }];
    case 'error':
      return [{ kind: 'error', error: o.error }];
    default:
      return []; // clients ignore line types they do not know
  }
}

function fromSSE(o) {
  if (o && typeof o === 'object') {
    if (o.error) return [{ kind: 'error', error: o.error }];
    if ('result' in o) return [{ kind: 'result', result: o.result }];
    const m = o.message;
    if (m && Array.isArray(m.content) && (m.role === undefined || m.role === 'model')) {
      const out = [];
      for (const p of m.content) {
        if (typeof p?.text === 'string') out.push({ kind: 'text', text: p.text });
        else if (p?.toolRequest) out.push({ kind: 'tool', name: p.toolRequest.name, input: p.toolRequest.input });
      }
      return out;
    }
  }
  return [];
}

function describe(obj, actions, format) {
  if (actions.length === 0) {
    if (format === 'ndjson' && typeof obj?.type === 'string') return obj.type + ' (ignored)';
    const keys = obj && typeof obj === 'object' ? Object.keys(obj) : [];
    return (keys[0] ?? typeof obj) + ' (ignored)';
  }
  return actions.map((a) => {
    switch (a.kind) {
      case 'text': return 'text';
      case 'tool': return `toolRequest ${a.name ?? '?'} ${a.input?.surfaceId ?? ''}`.trim();
      case 'result': return `result${a.result?.finishReason ? ' ' + a.result.finishReason : ''}`;
      case 'error': return `error ${a.error?.status ?? ''}`.trim();
      case 'a2ui': return describeA2ui(a.message);
      default: return a.kind;
    }
  }).join(', ');
}
