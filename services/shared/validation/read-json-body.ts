import type { ValidationItem } from '../errors.ts';
import { decodeJsonBytes } from './decode-body-text.ts';
import { parsePythonJson } from './python-json.ts';
import { stripPython } from './py-whitespace.ts';
import type { PyValue } from './py-value.ts';

export interface RawBody {
  /** The Content-Type header as received; `undefined` or `''` when absent. */
  readonly contentType: string | undefined;
  readonly raw: Uint8Array;
}

/**
 * `value` is what FastAPI hands to validation: `undefined` for no body (empty bytes, or JSON
 * `null`), the parsed JSON for a JSON content type, or the raw text for any other content type
 * (which then fails validation with `model_attributes_type` echoing that text).
 */
export type BodyReadResult =
  | { readonly ok: true; readonly value: PyValue | undefined }
  | { readonly ok: false; readonly status: 400; readonly detail: 'There was an error parsing the body' }
  | { readonly ok: false; readonly status: 422; readonly items: readonly ValidationItem[] };

const PARSE_ERROR = { ok: false, status: 400, detail: 'There was an error parsing the body' } as const;

/**
 * FastAPI >= 0.132 (`routing.py` get_request_handler): only JSON content types are parsed, a
 * missing Content-Type is not JSON, a JSONDecodeError becomes one `json_invalid` item, and any
 * other failure (bad encoding, huge integer, nesting too deep) a 400.
 */
export function readJsonBody(body: RawBody): BodyReadResult {
  if (body.raw.length === 0) return { ok: true, value: undefined };
  if (!isJsonContentType(body.contentType)) return readRawText(body.raw);
  const text = decodeJsonBytes(body.raw);
  if (text === undefined) return PARSE_ERROR;
  const parsed = parsePythonJson(text);
  if (parsed.ok) return { ok: true, value: parsed.value === null ? undefined : parsed.value };
  if (parsed.kind === 'tooComplex') return PARSE_ERROR;
  const item: ValidationItem = {
    type: 'json_invalid',
    loc: ['body', parsed.pos],
    msg: 'JSON decode error',
    input: {},
    ctx: { error: parsed.msg },
  };
  return { ok: false, status: 422, items: [item] };
}

/**
 * Python decodes the raw bytes with strict UTF-8 to echo them; where it fails FastAPI answers
 * 500, and callmeter answers the 400 a badly encoded JSON body gets.
 */
function readRawText(raw: Uint8Array): BodyReadResult {
  try {
    return { ok: true, value: new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(raw) };
  } catch {
    return PARSE_ERROR;
  }
}

/**
 * Python's `email.message.Message` reading of the header: the part before `;`, stripped and
 * lower-cased, must be `application/json` or `application/<anything>+json`; a value that is not
 * exactly one `type/subtype` pair counts as `text/plain`.
 */
export function isJsonContentType(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const mediaType = stripPython(contentType.split(';', 1)[0]!).toLowerCase();
  const parts = mediaType.split('/');
  if (parts.length !== 2 || parts[0] !== 'application') return false;
  const subtype = parts[1]!;
  return subtype === 'json' || subtype.endsWith('+json');
}
