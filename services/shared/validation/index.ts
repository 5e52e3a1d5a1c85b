/**
 * The request validation engine: JSON Schemas in, FastAPI/pydantic v2 422 items out.
 * Routes use `compileRequest` + `parseRequest`; the error middleware renders a validation
 * detail with `toPythonJson` (inputs hold bigints and Python floats that JSON.stringify cannot
 * write the way Python does).
 */
export { compileRequest, type RequestParts, type RequestSchemas, type RequestValidation, type ValidatedRequest } from './compile-request.ts';
export { parseRequest, type RawRequestParts } from './parse-request.ts';
export { readJsonBody, isJsonContentType, type BodyReadResult, type RawBody } from './read-json-body.ts';
export { parsePythonJson, MAX_DEPTH, type PythonJsonResult } from './python-json.ts';
export { toPythonJson } from './to-python-json.ts';
export { PyFloat, isPyDict, pyDictOf, type PyDict, type PyValue } from './py-value.ts';
export type { BodySchema, FieldSchema, ListSchema, ModelSchema, PyKind } from './schema-dialect.ts';
export type { FieldValue, FromPySchema, ModelValue } from './schema-types.ts';
export type { JsonObject, JsonValue } from './lax-scalars.ts';
