import { Ajv } from 'ajv';
import {
  pyAliasesKeyword,
  pyCheckKeyword,
  pyEmptyAbsentKeyword,
  pyNullableKeyword,
  pyTypeKeyword,
} from './py-keywords.ts';

let shared: Ajv | undefined;

/**
 * The one ajv instance for HTTP requests, made on first use (never at import). allErrors because
 * pydantic reports every field; verbose for the list length in too_long; useDefaults and
 * removeAdditional give the validated value pydantic's shape (defaults in, unknown keys out).
 * strictTypes is off because field schemas deliberately have no `type` (see schemas/dialect/schema-dialect.ts).
 */
export function requestAjv(): Ajv {
  shared ??= new Ajv({
    allErrors: true,
    verbose: true,
    useDefaults: true,
    removeAdditional: 'all',
    strict: true,
    strictTypes: false,
    keywords: [pyTypeKeyword, pyCheckKeyword, pyAliasesKeyword, pyNullableKeyword, pyEmptyAbsentKeyword],
  });
  return shared;
}
