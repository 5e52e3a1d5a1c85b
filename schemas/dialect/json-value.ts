/** A JSON value as JSON.parse gives it: what a `dict` field holds after validation. */
export type JsonObject = { [key: string]: JsonValue };
export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;
