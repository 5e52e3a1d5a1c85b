import { expectDocumented, loadDocument } from './documented-answers.ts';
import { testAuthHeaders } from './test-auth.ts';

/**
 * A small JSON client for the tests: status, parsed body (JSON answers only) and raw text of every answer.
 * Every answer is checked against the process's /openapi.json first (documented-answers.ts).
 */
export interface Answer<T = Record<string, unknown>> {
  readonly status: number;
  readonly body: T;
  readonly text: string;
  readonly headers: Headers;
}

export async function call<T = Record<string, unknown>>(
  url: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer<T>> {
  await loadDocument(url);
  const response = await fetch(`${url}${path}`, {
    method,
    headers: {
      ...testAuthHeaders(),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  const contentType = response.headers.get('content-type');
  // A followed redirect (307 to the path with or without its trailing slash) answered for the path it led to.
  const answered = response.url.startsWith(url) ? response.url.slice(url.length) : path;
  await expectDocumented(url, method, answered, { status: response.status, contentType, text });
  const json = (contentType ?? '').includes('json');
  return {
    status: response.status,
    body: (text === '' || !json ? null : JSON.parse(text)) as T,
    text,
    headers: response.headers,
  };
}
