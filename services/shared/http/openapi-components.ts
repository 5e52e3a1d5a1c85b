import { isDeepStrictEqual } from 'node:util';
import { errorDetailSchema, validationErrorSchema } from '../../../schemas/http/error-responses.ts';

type Json = Record<string, unknown>;

/**
 * The document's named schemas. A response schema's titled parts (a Session, a CostBreakdown) are
 * placed here once and referred to by `$ref`, so that tools reading the document (Swagger UI, code
 * generators such as openapi-typescript) see one named type where the code has one schema.
 */
export class SchemaComponents {
  readonly schemas: Record<string, Json> = {};

  constructor() {
    this.refOf(errorDetailSchema);
    this.refOf(validationErrorSchema);
  }

  /** Adds a schema under its title, or fails when another schema already has that title. */
  add(title: string, schema: Json): void {
    const known = this.schemas[title];
    if (known !== undefined && !isDeepStrictEqual(known, schema))
      throw new Error(`Two different schemas are named ${title} in the OpenAPI document`);
    this.schemas[title] = schema;
  }

  /** The schema with each titled object in it (itself included) replaced by a `$ref` to its component. */
  refOf(schema: unknown): unknown {
    if (Array.isArray(schema)) return schema.map((item: unknown) => this.refOf(item));
    if (schema === null || typeof schema !== 'object') return schema;
    const hoisted: Json = Object.fromEntries(
      Object.entries(schema).map(([key, value]) => [
        key,
        key === 'enum' || key === 'const' ? value : this.refOf(value),
      ]),
    );
    // `properties` maps names to schemas: a property named `title` is not a schema's title.
    const title = hoisted.type === 'object' ? hoisted.title : undefined;
    if (typeof title !== 'string') return hoisted;
    this.add(title, hoisted);
    return { $ref: `#/components/schemas/${title}` };
  }
}
