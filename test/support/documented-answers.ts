import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

/** What the hook reads of /openapi.json: each operation's answers by status, each by media type. */
interface Media {
  readonly schema?: unknown;
  readonly example?: unknown;
}
interface Documented {
  readonly description?: string;
  readonly content?: Readonly<Record<string, Media>>;
}
interface OpenApiDocument {
  readonly paths: Readonly<
    Record<string, Readonly<Record<string, { readonly responses: Record<string, Documented> }>>>
  >;
}

/** One answer as the test client received it. */
export interface ReceivedAnswer {
  readonly status: number;
  readonly contentType: string | null;
  readonly text: string;
}

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const DOCUMENT_ID = 'openapi.json';

/**
 * The document of one process and the validators of its answers, compiled once each. OpenAPI 3.1
 * schemas are JSON Schema 2020-12: the whole document is added to ajv under one id, so that a
 * response schema's `#/components/schemas/…` references resolve inside it.
 */
export class AnswerChecker {
  private readonly ajv: Ajv2020;
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly templates: readonly {
    readonly template: string;
    readonly pattern: RegExp;
    readonly literal: number;
  }[];

  constructor(private readonly document: OpenApiDocument) {
    // strict: a misspelt keyword in a response schema is an error here, not a schema that accepts anything.
    this.ajv = addFormats(new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true }));
    this.ajv.addVocabulary(['openapi', 'info', 'paths', 'components', 'servers', 'tags', 'security']);
    this.ajv.addSchema(document as object, DOCUMENT_ID);
    this.templates = Object.keys(document.paths).map((template) => ({
      template,
      pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{\w+\}/g, '[^/]+')}$`),
      literal: template.replace(/\{\w+\}/g, '').length,
    }));
    // Compiled now, before the test's first request: compiling on an answer would put a pause between two requests.
    for (const [template, methods] of Object.entries(document.paths))
      for (const [method, { responses }] of Object.entries(methods))
        for (const [status, { content }] of Object.entries(responses))
          if (content?.['application/json'] !== undefined) this.validator([template, method, 'responses', status]);
  }

  /** The problem with an answer to `method path`, or null when the document describes it (or has no such route). */
  problem(method: string, pathAndQuery: string, answer: ReceivedAnswer): string | null {
    const template = this.routeOf(method.toLowerCase(), pathAndQuery.split('?')[0]!);
    if (template === null) return null;
    const route = `${method.toUpperCase()} ${template}`;
    const responses = this.document.paths[template]![method.toLowerCase()]!.responses;
    const status = String(answer.status);
    const documented = responses[status] ?? responses.default;
    if (documented === undefined)
      return `${route} answered ${status}, which /openapi.json does not list (it lists ${Object.keys(responses).join(', ')}): ${answer.text.slice(0, 300)}`;
    if (documented.content === undefined)
      return answer.text === '' ? null : `${route} answered ${status} with a body where the document says none`;
    const mediaType = (answer.contentType ?? '').split(';')[0]!.trim();
    if (documented.content[mediaType] === undefined)
      return `${route} answered ${status} as ${mediaType || 'no content type'}, which the document does not list (${Object.keys(documented.content).join(', ')})`;
    if (mediaType !== 'application/json') return null;
    const validate = this.validator([
      template,
      method.toLowerCase(),
      'responses',
      status in responses ? status : 'default',
    ]);
    if (validate(JSON.parse(answer.text))) return null;
    return `${route} answered ${status} with a body outside its schema in /openapi.json: ${errorsOf(validate)}\n${answer.text.slice(0, 2000)}`;
  }

  /** Each JSON example of an answer that its own schema refuses, named by route, status and why. */
  exampleProblems(): string[] {
    return Object.entries(this.document.paths).flatMap(([template, methods]) =>
      Object.entries(methods).flatMap(([method, { responses }]) =>
        Object.entries(responses).flatMap(([status, { content }]) => {
          const example = content?.['application/json']?.example;
          if (example === undefined) return [];
          const validate = this.validator([template, method, 'responses', status]);
          return validate(example) ? [] : [`${method.toUpperCase()} ${template} ${status}: ${errorsOf(validate)}`];
        }),
      ),
    );
  }

  /** The path template that routes `path` for `method`, as the router picks it: the most literal one. */
  private routeOf(method: string, path: string): string | null {
    const matching = this.templates
      .filter(({ template, pattern }) => pattern.test(path) && this.document.paths[template]![method] !== undefined)
      .sort((a, b) => b.literal - a.literal);
    return matching[0]?.template ?? null;
  }

  private validator(location: readonly string[]): ValidateFunction {
    const pointer = ['paths', ...location, 'content', 'application/json', 'schema']
      .map((part) => encodeURIComponent(part.replace(/~/g, '~0').replace(/\//g, '~1')))
      .join('/');
    let validate = this.validators.get(pointer);
    if (validate === undefined) {
      validate = this.ajv.compile({ $ref: `${DOCUMENT_ID}#/${pointer}` });
      this.validators.set(pointer, validate);
    }
    return validate;
  }
}

/** Where and why: `/by_service/0 must NOT have additional properties {"additionalProperty":"parts"}`. */
function errorsOf(validate: ValidateFunction): string {
  return (validate.errors ?? [])
    .map((error: ErrorObject) => `${error.instancePath || '/'} ${error.message ?? ''} ${JSON.stringify(error.params)}`)
    .join('; ');
}

const checkers = new Map<string, Promise<AnswerChecker>>();

async function checkerOf(baseUrl: string): Promise<AnswerChecker> {
  let checker = checkers.get(baseUrl);
  if (checker === undefined) {
    checker = fetch(`${baseUrl}/openapi.json`).then(async (response) => {
      if (response.status !== 200) throw new Error(`${baseUrl}/openapi.json answered ${response.status}`);
      return new AnswerChecker((await response.json()) as OpenApiDocument);
    });
    // A process that failed to answer is asked again next time, not remembered as failed.
    checker.catch(() => checkers.delete(baseUrl));
    checkers.set(baseUrl, checker);
  }
  return checker;
}

/** Reads and compiles the process's /openapi.json, once: a test client does it before its first request. */
export async function loadDocument(baseUrl: string): Promise<void> {
  await checkerOf(baseUrl);
}

/** The examples of /openapi.json that their own schemas refuse (none, when the document is right). */
export async function examplesOutsideTheirSchemas(baseUrl: string): Promise<string[]> {
  return (await checkerOf(baseUrl)).exampleProblems();
}

/**
 * The test client's hook: every answer a test receives from a route must be one that the process's own
 * /openapi.json describes, its status listed for that route and its JSON body valid against the
 * response schema of that status. Throws (failing the test) with what does not match.
 */
export async function expectDocumented(
  baseUrl: string,
  method: string,
  pathAndQuery: string,
  answer: ReceivedAnswer,
): Promise<void> {
  if (pathAndQuery.split('?')[0] === '/openapi.json') return;
  const problem = (await checkerOf(baseUrl)).problem(method, pathAndQuery, answer);
  if (problem !== null) throw new Error(problem);
}
