import {
  STANDARD_FIELD_KEYS,
  type BodySchema,
  type FieldSchema,
  type ModelSchema,
} from '../../../schemas/dialect/schema-dialect.ts';

type Json = Record<string, unknown>;

const KIND_SCHEMAS: Record<FieldSchema['x-py'], Json> = {
  str: { type: 'string' },
  int: { type: 'integer' },
  // pydantic reads a decimal from a number or a numeric string.
  decimal: {
    anyOf: [{ type: 'number' }, { type: 'string', pattern: '^\\s*[+-]?(\\d+\\.?\\d*|\\.\\d+)([eE][+-]?\\d+)?\\s*$' }],
  },
  datetime: {
    anyOf: [{ type: 'string', format: 'date-time' }, { type: 'string', format: 'date' }, { type: 'number' }],
  },
  dict: { type: 'object', additionalProperties: true },
  uuid: { type: 'string', format: 'uuid' },
  bool: { type: 'boolean' },
  enum: {},
  literal: {},
  list: { type: 'array' },
};

/** The plain JSON Schema (OpenAPI 3.1) of one field of the request dialect. */
export function fieldToJsonSchema(field: FieldSchema): Json {
  const schema: Json = { ...KIND_SCHEMAS[field['x-py']] };
  if (field.enum !== undefined) schema.enum = [...field.enum];
  if (field.items !== undefined) schema.items = fieldToJsonSchema(field.items);
  for (const key of STANDARD_FIELD_KEYS) if (field[key] !== undefined) schema[key] = field[key];
  const orEmpty = field['x-py-empty-absent'] ? { anyOf: [schema, { type: 'string', maxLength: 0 }] } : schema;
  return field['x-py-nullable'] ? { anyOf: [orEmpty, { type: 'null' }] } : orEmpty;
}

export function modelToJsonSchema(model: ModelSchema): Json {
  const properties = Object.fromEntries(
    Object.entries(model.properties).map(([name, field]) => [name, fieldToJsonSchema(field)]),
  );
  return {
    type: 'object',
    ...(model.title === undefined ? {} : { title: model.title }),
    ...(model.description === undefined ? {} : { description: model.description }),
    properties,
    ...(model.required === undefined || model.required.length === 0 ? {} : { required: [...model.required] }),
  };
}

export function bodyToJsonSchema(body: BodySchema): Json {
  if (body.type === 'object') return modelToJsonSchema(body);
  return {
    type: 'array',
    items: modelToJsonSchema(body.items),
    ...(body.maxItems === undefined ? {} : { maxItems: body.maxItems }),
  };
}
