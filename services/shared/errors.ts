/** One item of a FastAPI/pydantic 422 body; keys are written in this order on the wire. */
export interface ValidationItem {
  readonly type: string;
  readonly loc: readonly (string | number)[];
  readonly msg: string;
  readonly input: unknown;
  readonly ctx?: Readonly<Record<string, unknown>>;
}

export type ErrorCode =
  | 'BAD_REQUEST'
  | 'UNAUTHORIZED'
  | 'PAYMENT_REQUIRED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'CONFLICT'
  | 'PAYLOAD_TOO_LARGE'
  | 'VALIDATION'
  | 'TOO_MANY_REQUESTS'
  | 'DEPENDENCY_UNAVAILABLE'
  | 'INTERNAL';

interface AppErrorOptions {
  readonly cause?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * The one error type of the code base. `detail` is what the client sees: a sentence, or the
 * list of validation items for VALIDATION. INTERNAL details never reach the client.
 */
export class AppError extends Error {
  readonly headers: Readonly<Record<string, string>>;

  private constructor(
    readonly code: ErrorCode,
    readonly detail: string | readonly ValidationItem[],
    options: AppErrorOptions = {},
  ) {
    super(typeof detail === 'string' ? detail : `${detail.length} validation error(s)`, { cause: options.cause });
    this.name = 'AppError';
    this.headers = options.headers ?? {};
  }

  static of(code: Exclude<ErrorCode, 'VALIDATION'>, detail: string, options?: AppErrorOptions): AppError {
    return new AppError(code, detail, options);
  }

  static validation(items: readonly ValidationItem[]): AppError {
    return new AppError('VALIDATION', items);
  }
}

export function statusOf(code: ErrorCode): number {
  switch (code) {
    case 'BAD_REQUEST':
      return 400;
    case 'UNAUTHORIZED':
      return 401;
    case 'PAYMENT_REQUIRED':
      return 402;
    case 'FORBIDDEN':
      return 403;
    case 'NOT_FOUND':
      return 404;
    case 'METHOD_NOT_ALLOWED':
      return 405;
    case 'CONFLICT':
      return 409;
    case 'PAYLOAD_TOO_LARGE':
      return 413;
    case 'VALIDATION':
      return 422;
    case 'TOO_MANY_REQUESTS':
      return 429;
    case 'DEPENDENCY_UNAVAILABLE':
      return 503;
    case 'INTERNAL':
      return 500;
  }
}
