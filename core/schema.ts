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

/**
 * Converts a tool's output schema (valibot) to the JSON Schema of its output,
 * as MCP's `outputSchema` advertises it. It describes the JSON the tool
 * returns, exactly as the check on the way out accepts it: a `v.object`
 * admits unknown keys (the check passes them on), a `v.strictObject` does not.
 * A union or variant of object schemas gets `type: "object"` at its root (see
 * {@linkcode isObjectJsonSchema}). Custom checks (`v.check`) are left out: the
 * JSON Schema may then admit more than the check, never less. Throws a
 * `TypeError` for what JSON Schema cannot express.
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import { outputJsonSchema } from "@toolfence/core";
 * console.log(outputJsonSchema(v.strictObject({ path: v.string(), created: v.boolean() })));
 * // { type: "object", properties: { ... }, required: ["path", "created"], additionalProperties: false }
 * ```
 */
export function outputJsonSchema(schema: v.GenericSchema | v.GenericSchemaAsync): JsonSchema {
  const converted = toJsonSchema(schema as v.GenericSchema, {
    errorMode: "throw",
    typeMode: "input",
    // Custom checks have no JSON Schema form; the schema is then wider than the check, never narrower.
    ignoreActions: ["check", "check_items", "partial_check", "raw_check"],
  }) as JsonSchema;
  delete converted.$schema;
  const members = converted.anyOf ?? converted.oneOf;
  if (converted.type === undefined && members?.length && members.every((m) => m.type === "object")) {
    return { type: "object", ...converted };
  }
  return converted;
}

/**
 * Whether a JSON Schema admits only objects: `type: "object"` at its root
 * (what {@linkcode outputJsonSchema} gives an object schema, or a union or
 * variant of them). MCP's `structuredContent` must be an object; an output
 * whose schema is not is sent wrapped, as `{ result }`.
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import { isObjectJsonSchema, outputJsonSchema } from "@toolfence/core";
 * console.log(isObjectJsonSchema(outputJsonSchema(v.object({ a: v.string() })))); // true
 * console.log(isObjectJsonSchema(outputJsonSchema(v.string()))); // false
 * ```
 */
export function isObjectJsonSchema(schema: JsonSchema): boolean {
  return schema.type === "object";
}
