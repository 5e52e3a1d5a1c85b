/** An error as ClickHouse's HTTP handler sends it: status, the exception code header and the text body. */
export interface ErrorAnswer {
  readonly status: number;
  readonly code: number;
  readonly body: string;
}

// ClickHouse's exceptionCodeToHTTPStatus (src/Server/HTTP/exceptionCodeToHTTPStatus.cpp), by the error's
// name; every other error is a 500.
const STATUS_BY_TYPE: Record<string, number> = {
  REQUIRED_PASSWORD: 401,
  ...same(403, 'UNKNOWN_USER WRONG_PASSWORD AUTHENTICATION_FAILED SET_NON_GRANTED_ROLE ACCESS_DENIED'),
  ...same(
    400,
    'BAD_ARGUMENTS CANNOT_COMPILE_REGEXP CANNOT_PARSE_TEXT CANNOT_PARSE_ESCAPE_SEQUENCE CANNOT_PARSE_QUOTED_STRING ' +
      'CANNOT_PARSE_DATE CANNOT_PARSE_DATETIME CANNOT_PARSE_NUMBER CANNOT_PARSE_DOMAIN_VALUE_FROM_STRING ' +
      'CANNOT_PARSE_IPV4 CANNOT_PARSE_IPV6 CANNOT_PARSE_INPUT_ASSERTION_FAILED CANNOT_PARSE_UUID DUPLICATE_COLUMN ' +
      'ILLEGAL_COLUMN UNKNOWN_ELEMENT_IN_AST UNKNOWN_TYPE_OF_AST_NODE THERE_IS_NO_COLUMN TOO_DEEP_AST TOO_BIG_AST ' +
      'UNEXPECTED_AST_STRUCTURE SYNTAX_ERROR INCORRECT_DATA TYPE_MISMATCH VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE',
  ),
  ...same(
    404,
    'UNKNOWN_TABLE UNKNOWN_FUNCTION UNKNOWN_IDENTIFIER UNKNOWN_TYPE UNKNOWN_STORAGE UNKNOWN_DATABASE UNKNOWN_SETTING ' +
      'UNKNOWN_DIRECTION_OF_SORTING UNKNOWN_AGGREGATE_FUNCTION UNKNOWN_FORMAT UNKNOWN_DATABASE_ENGINE ' +
      'UNKNOWN_TYPE_OF_QUERY UNKNOWN_ROLE',
  ),
  QUERY_IS_TOO_LARGE: 413,
  NOT_IMPLEMENTED: 501,
  ...same(503, 'SOCKET_TIMEOUT CANNOT_OPEN_FILE CANNOT_SCHEDULE_TASK'),
  HTTP_LENGTH_REQUIRED: 411,
  TIMEOUT_EXCEEDED: 408,
  UNSUPPORTED_MEDIA_TYPE: 415,
};

const EXCEPTION = /^Code: (\d+)\. .*\(([A-Z0-9_]+)\)$/s;

/**
 * The answer to a failed statement. The engine's message is already the server's text
 * (`Code: 60. DB::Exception: … (UNKNOWN_TABLE)`); the server adds its version, so this does too.
 * An error that is not the engine's (the endpoint's own) is STD_EXCEPTION, as the server reports
 * a C++ exception it did not expect.
 */
export function errorAnswer(error: unknown, version: string): ErrorAnswer {
  const message = (error instanceof Error ? error.message : String(error)).trim();
  const match = EXCEPTION.exec(message);
  if (match === null) {
    return {
      status: 500,
      code: 1001,
      body: `Code: 1001. DB::Exception: ${message}. (STD_EXCEPTION) (version ${version})\n`,
    };
  }
  return {
    status: STATUS_BY_TYPE[match[2]!] ?? 500,
    code: Number(match[1]),
    body: `${message} (version ${version})\n`,
  };
}

function same(status: number, types: string): Record<string, number> {
  return Object.fromEntries(types.split(/\s+/).map((type) => [type, status]));
}
