// @ts-check
/** @typedef {{ event: string, id?: string, retry?: number, data?: string }} StreamMessage */

/**
 * A server-sent event reader over fetch: EventSource cannot send the x-user-id or Authorization
 * header. Reconnects with Last-Event-ID after the server's `retry:` (2 s) when the stream drops.
 * T is the type the route's schema gives each message's data: the page trusts the API's answer, as it
 * does every JSON body (app.js getJson), and does not check it again at run time.
 * @template T
 * @param {string} url
 * @param {Record<string, string>} headers
 * @param {(event: string, data: T) => void} onMessage
 * @returns {() => void} closes the stream
 */
export function openStream(url, headers, onMessage) {
  const abort = new AbortController();
  /** @type {string | null} */
  let lastId = null;
  let retryMs = 2000;
  async function run() {
    while (!abort.signal.aborted) {
      try {
        const response = await fetch(url, {
          headers: { ...headers, accept: 'text/event-stream', ...(lastId ? { 'last-event-id': lastId } : {}) },
          signal: abort.signal,
        });
        if (!response.ok || !response.body) throw new Error(`stream answered ${response.status}`);
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value;
          let end;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const message = parse(block);
            if (message.retry) retryMs = message.retry;
            if (message.id) lastId = message.id;
            if (message.data !== undefined) {
              onMessage(message.event, JSON.parse(message.data));
              if (message.event === 'end') return;
            }
          }
        }
      } catch {
        if (abort.signal.aborted) return;
      }
      await new Promise((resolve) => setTimeout(resolve, retryMs));
    }
  }
  run();
  return () => abort.abort();
}

/**
 * @param {string} block
 * @returns {StreamMessage}
 */
function parse(block) {
  /** @type {StreamMessage} */
  const message = { event: 'message' };
  /** @type {string[]} */
  const data = [];
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') message.event = value;
    else if (field === 'id') message.id = value;
    else if (field === 'data') data.push(value);
    else if (field === 'retry' && /^\d+$/.test(value)) message.retry = Number(value);
  }
  if (data.length > 0) message.data = data.join('\n');
  return message;
}
