// @ts-check

/**
 * @typedef {import('../../../../test/openapi/callmeter-api.ts').components['schemas']} Schemas
 * @typedef {{ userId: string, token: string }} Caller who the page reads for
 */

export const AUTH_MODE = document.body.dataset.authMode === 'on' ? 'on' : 'off';

/**
 * @param {Caller} identity
 * @returns {Record<string, string>}
 */
export function headersOf(identity) {
  /** @type {Record<string, string>} */
  const headers = {};
  if (identity.userId) headers['x-user-id'] = identity.userId;
  if (AUTH_MODE === 'on' && identity.token) headers.authorization = `Bearer ${identity.token}`;
  return headers;
}

/** A GET the API refused or failed, with its status (a 403 is a credential without the route's scope). */
export class ApiError extends Error {
  /**
   * @param {string} message
   * @param {number} status
   */
  constructor(message, status) {
    super(message);
    this.status = status;
  }
}

/**
 * A GET's JSON answer. T is the type the route's response schema gives it, inferred from where the
 * answer goes: the page trusts the API's answer and does not check it again at run time.
 * @template T
 * @param {string} path
 * @param {Caller} identity
 * @returns {Promise<T>}
 */
export async function getJson(path, identity) {
  const response = await fetch(path, { headers: headersOf(identity) });
  const text = await response.text();
  /** @type {unknown} */
  const body = text ? JSON.parse(text) : null;
  if (!response.ok) {
    const failed = /** @type {Schemas['ErrorDetail'] | Schemas['HTTPValidationError'] | null} */ (body);
    throw new ApiError(`${path.split('?')[0]}: ${response.status} ${failed?.detail ?? text}`, response.status);
  }
  return /** @type {T} */ (body);
}

/**
 * @param {string} path
 * @param {Caller} identity
 * @param {string} name the file's name
 */
export async function downloadCsv(path, identity, name) {
  const response = await fetch(path, { headers: { ...headersOf(identity), accept: 'text/csv' } });
  if (!response.ok) throw new Error(`${name}: ${response.status}`);
  const link = document.createElement('a');
  link.href = URL.createObjectURL(await response.blob());
  link.download = name;
  link.click();
  URL.revokeObjectURL(link.href);
}
