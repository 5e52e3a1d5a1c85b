/**
 * A non-JSON answer of a route (a CSV export): defineRoute writes it as given instead of as JSON.
 * `contentType` names the charset; `headers` may add e.g. Content-Disposition. `text` is the whole
 * text, or a function giving its parts one after another, which is streamed (no Content-Length):
 * a long export is then never one string in memory, nor one long task on the event loop.
 */
export class TextBody {
  constructor(
    readonly contentType: string,
    readonly text: string | (() => AsyncIterable<string>),
    readonly headers: Readonly<Record<string, string>> = {},
  ) {}
}
