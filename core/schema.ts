/**
 * JSON Schema types and the conversion of valibot input schemas to JSON Schema.
 *
 * @module
 */

import type * as v from "valibot";
import { toJsonSchema } from "@valibot/to-json-schema";

/** A JSON Schema document (draft-07 subset), as plain JSON. */
export type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema | JsonSchema[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  description?: string;
  default?: unknown;
  additionalProperties?: boolean | JsonSchema;
  [keyword: string]: unknown;
};

/**
 * Converts a valibot object schema to the JSON Schema of a tool's input:
 * descriptions from `v.description()`, defaults, enums from `v.picklist`, and
 * `additionalProperties: false` on every object that is not a `v.looseObject`
 * or `v.objectWithRest`, matching what the validator enforces.
 * Throws when the schema holds something JSON Schema cannot express.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import { inputJsonSchema } from "@toolfence/core";
 * console.log(inputJsonSchema(v.object({ path: v.pipe(v.string(), v.description("A path")) })));
 * ```
 */
export function inputJsonSchema(schema: v.GenericSchema): JsonSchema {
  const converted = toJsonSchema(schema, {
    errorMode: "throw",
    typeMode: "input",
    overrideSchema(context) {
      if (context.valibotSchema.type === "object") {
        return { ...context.jsonSchema, additionalProperties: false };
      }
      return undefined;
    },
  }) as JsonSchema;
  delete converted.$schema;
  return converted;
}
