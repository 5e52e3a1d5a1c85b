import { laxFail, laxOk, parsingError, plainError, type Lax } from './pydantic-errors.ts';

const HYPHENATED = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const SIMPLE = /^[0-9a-fA-F]{32}$/;
const URN = 'urn:uuid:';

/**
 * pydantic's `UUID` (`validators/uuid.rs`): only strings; simple, hyphenated, `{braced}` or
 * `urn:uuid:` forms in any case. The value is the lowercase hyphenated form, as `str(uuid)`.
 * Errors carry the uuid 1.18 crate's texts (pydantic <= 2.12).
 */
export function laxUuid(input: unknown): Lax<string> {
  if (typeof input !== 'string') return laxFail(plainError('uuid_type'));
  const { core, valid } = uuidShape(input);
  if (!valid) return laxFail(parsingError('uuid_parsing', uuidErrorText(core)));
  const hex = core.replaceAll('-', '').toLowerCase();
  return laxOk(`${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`);
}

/**
 * uuid `try_parse`: the accepted shapes, judged by UTF-8 byte length as the crate does. The
 * part it hands to the error analysis is the inner one for a braced or URN input of the right
 * length, the whole input otherwise.
 */
function uuidShape(input: string): { readonly core: string; readonly valid: boolean } {
  const length = Buffer.byteLength(input, 'utf8');
  if (length === 32) return { core: input, valid: SIMPLE.test(input) };
  let core = input;
  if (length === 38 && input.startsWith('{') && input.endsWith('}')) core = input.slice(1, -1);
  else if (length === 45 && input.startsWith(URN)) core = input.slice(URN.length);
  else if (length !== 36) return { core, valid: false };
  return { core, valid: HYPHENATED.test(core) };
}

const GROUP_STARTS = [0, 9, 14, 19, 24] as const;
const GROUP_LENGTHS = [8, 4, 4, 4, 12] as const;

/** uuid 1.18 `InvalidUuid::into_err`: which check fails first decides the text. */
function uuidErrorText(input: string): string {
  const utf8Length = Buffer.byteLength(input, 'utf8');
  let body = input;
  let offset = 0;
  let simple = true;
  if (utf8Length >= 2 && input.startsWith('{') && input.endsWith('}'))
    [body, offset, simple] = [input.slice(1, -1), 1, false];
  else if (input.startsWith(URN)) [body, offset, simple] = [input.slice(URN.length), URN.length, false];
  const hyphens: number[] = [];
  let byteIndex = 0;
  for (const ch of body) {
    if (ch === '-') hyphens.push(byteIndex);
    else if (!/^[0-9a-fA-F]$/.test(ch)) {
      return `invalid character: expected an optional prefix of \`urn:uuid:\` followed by [0-9a-fA-F-], found \`${ch}\` at ${byteIndex + offset + 1}`;
    }
    byteIndex += Buffer.byteLength(ch, 'utf8');
  }
  if (hyphens.length === 0 && simple)
    return `invalid length: expected length 32 for simple format, found ${utf8Length}`;
  if (hyphens.length !== 4) return `invalid group count: expected 5, found ${hyphens.length + 1}`;
  for (let group = 0; group < 4; group++) {
    if (hyphens[group] !== GROUP_STARTS[group + 1]! - 1) {
      return `invalid group length in group ${group}: expected ${GROUP_LENGTHS[group]}, found ${hyphens[group]! - GROUP_STARTS[group]!}`;
    }
  }
  return `invalid group length in group 4: expected 12, found ${utf8Length - GROUP_STARTS[4]}`;
}
