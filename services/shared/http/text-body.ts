/**
 * A non-JSON answer of a route (a CSV export): defineRoute writes it as given instead of as JSON.
 * `contentType` names the charset; `headers` may add e.g. Content-Disposition.
 */
export class TextBody {
  constructor(
    readonly contentType: string,
    readonly text: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {}
}
