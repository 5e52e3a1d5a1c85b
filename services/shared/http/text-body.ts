/**
 * A non-JSON answer of a route (a CSV export, a Parquet file): defineRoute writes it as given instead
 * of as JSON. `contentType` names the charset of a text; `headers` may add e.g. Content-Disposition.
 * `text` is the whole text, or a function giving its parts (text or bytes) one after another, which is
 * streamed (no Content-Length): a long export is then never one string in memory, nor one long task
 * on the event loop.
 */
export class TextBody {
  constructor(
    readonly contentType: string,
    readonly text: string | (() => AsyncIterable<string | Uint8Array>),
    readonly headers: Readonly<Record<string, string>> = {},
  ) {}
}
