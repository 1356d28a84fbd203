// JSON-RPC 2.0 over one WebSocket, as GET /ws speaks it: text frames, one message each
// (a batch, an array, is split into its messages). The page sends requests and answers
// the server's requests (client_tool); the server sends responses, notifications
// (session_update) and requests.

/** The WebSocket URL of path, relative to the page: ws: for an http: page, wss: for https:. */
export function wsURL(path, base = location.href) {
  const url = new URL(path, base);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  url.hash = '';
  return url.href;
}

/** A JSON-RPC error the server answered a request with. */
export class RpcError extends Error {
  constructor(error) {
    super(error?.message ?? 'unknown error');
    this.name = 'RpcError';
    this.code = error?.code;
    this.data = error?.data;
  }
}

export class RpcSocket {
  /** @param {string} url a ws: or wss: URL */
  constructor(url) {
    this.url = url;
    this.ws = null;
    this.lastId = 0;
    this.pending = new Map(); // id → {resolve, reject}
    this.closed = null; // {code, reason} once closed
    /** (message, raw): a request of the server; answer it with respond or respondError. */
    this.onRequest = null;
    /** (message, raw): a notification of the server. */
    this.onNotification = null;
    /** (raw, problem): a frame that is no JSON-RPC message, or a response to no request. */
    this.onStray = null;
    /** ({code, reason}): the connection closed. */
    this.onClose = null;
  }

  /** Connects; resolves once the socket is open, rejects if it closes first. */
  open() {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(this.url);
      this.ws = ws;
      let opened = false;
      ws.addEventListener('open', () => {
        opened = true;
        resolve();
      });
      ws.addEventListener('message', (e) => this.receive(e.data));
      ws.addEventListener('close', (e) => {
        this.closed = { code: e.code, reason: e.reason };
        const err = new Error(`the WebSocket closed (${e.code}${e.reason ? `: ${e.reason}` : ''})`);
        for (const p of this.pending.values()) p.reject(err);
        this.pending.clear();
        if (!opened) reject(new Error(`could not connect to ${this.url} (${e.code})`));
        else this.onClose?.(this.closed);
      });
    });
  }

  get isOpen() {
    return this.ws?.readyState === WebSocket.OPEN;
  }

  /** A request message with a new id, not sent yet. */
  message(method, params) {
    return { jsonrpc: '2.0', id: ++this.lastId, method, params };
  }

  /**
   * Sends a request message (from message); resolves with {message, raw}, the response,
   * an error response included. Rejects when the connection closes first.
   */
  call(msg) {
    const raw = this.send(msg);
    const response = new Promise((resolve, reject) => this.pending.set(msg.id, { resolve, reject }));
    return { raw, response };
  }

  /** Sends a notification; returns the frame sent. */
  notify(method, params) {
    return this.send({ jsonrpc: '2.0', method, params });
  }

  /** Answers a request of the server with a result; returns the frame sent. */
  respond(id, result) {
    return this.send({ jsonrpc: '2.0', id, result: result ?? null });
  }

  /** Answers a request of the server with an error; returns the frame sent. */
  respondError(id, code, message) {
    return this.send({ jsonrpc: '2.0', id, error: { code, message } });
  }

  send(msg) {
    const raw = JSON.stringify(msg);
    if (!this.isOpen) throw new Error('the WebSocket is not open');
    this.ws.send(raw);
    return raw;
  }

  close(code = 1000, reason = '') {
    this.ws?.close(code, reason);
  }

  receive(raw) {
    let msg;
    try {
      msg = JSON.parse(raw);
    } catch (e) {
      this.onStray?.(raw, `not JSON (${e.message})`);
      return;
    }
    for (const m of Array.isArray(msg) ? msg : [msg]) this.dispatch(m, Array.isArray(msg) ? JSON.stringify(m) : raw);
  }

  dispatch(m, raw) {
    if (!m || typeof m !== 'object' || m.jsonrpc !== '2.0') {
      this.onStray?.(raw, 'not a JSON-RPC 2.0 message');
    } else if (typeof m.method === 'string') {
      if ('id' in m) this.onRequest?.(m, raw);
      else this.onNotification?.(m, raw);
    } else if (this.pending.has(m.id)) {
      const p = this.pending.get(m.id);
      this.pending.delete(m.id);
      p.resolve({ message: m, raw });
    } else {
      this.onStray?.(raw, m.error ? `error ${m.error.code}` : 'a response to no request');
    }
  }
}
