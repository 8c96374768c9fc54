/**
 * JSON Schema types, and the conversion of a tool's schemas to JSON Schema:
 * valibot's through `@valibot/to-json-schema`, any other Standard Schema
 * library's (zod 4, ArkType) through its own converter.
 *
 * @module
 */

import type * as v from "valibot";
import { type OverrideActionContext, toJsonSchema } from "@valibot/to-json-schema";
import { closeObjects } from "./validation.ts";
import { isValibotSchema, libraryJsonSchema } from "./_standard_schema.ts";

/**
 * A schema of any library implementing Standard Schema v1 (valibot, zod 4,
 * ArkType, ...), as a tool's `input` or `output`: the `~standard` properties
 * toolfence uses. `types` carries the inferred input and output types.
 *
 * @example
 * ```ts
 * import { z } from "zod";
 * import type { StandardSchema } from "@toolfence/core";
 * const schema: StandardSchema<{ n: number }> = z.object({ n: z.number() });
 * ```
 */
export interface StandardSchema<Input = unknown, Output = Input> {
  /** The Standard Schema properties. */
  readonly "~standard": {
    /** The version of Standard Schema: 1. */
    readonly version: 1;
    /** The library: `valibot`, `zod`, `arktype`, ... */
    readonly vendor: string;
    /** Validates a value: its output, or the issues (each with a message and the path). */
    readonly validate: (value: unknown) =>
      | StandardSchemaResult<Output>
      | Promise<StandardSchemaResult<Output>>;
    /** The inferred types, for type checkers only. */
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
  };
}

/**
 * What a {@linkcode StandardSchema}'s `validate` returns: the output, or the
 * issues, each with a message and the path of keys to it.
 *
 * @example
 * ```ts
 * import { z } from "zod";
 * import type { StandardSchemaResult } from "@toolfence/core";
 * const result = z.string()["~standard"].validate(3) as StandardSchemaResult<string>;
 * console.log(result.issues?.[0].message);
 * ```
 */
export type StandardSchemaResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | {
    readonly issues: ReadonlyArray<{
      readonly message: string;
      readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
    }>;
  };

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
 * Converts a tool's input schema to the JSON Schema of its input, matching
 * what the validator enforces: `additionalProperties: false` on every object
 * that does not say otherwise.
 *
 * - valibot: descriptions from `v.description()`, defaults, enums from
 *   `v.picklist`; objects closed unless `v.looseObject` or `v.objectWithRest`.
 * - zod 4, ArkType and any library implementing Standard JSON Schema: that
 *   library's own converter (`~standard.jsonSchema.input`, draft-07; for zod
 *   that is `z.toJSONSchema`), then every object without its own
 *   `additionalProperties` closed (`z.looseObject` keeps `{}`, so stays open).
 *
 * Throws when the schema holds something JSON Schema cannot express, or when
 * its library has no JSON Schema converter.
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import { inputJsonSchema } from "@toolfence/core";
 * console.log(inputJsonSchema(v.object({ path: v.pipe(v.string(), v.description("A path")) })));
 * ```
 */
export function inputJsonSchema(schema: StandardSchema): JsonSchema {
  if (isValibotSchema(schema)) {
    const converted = toJsonSchema(schema as v.GenericSchema, {
      errorMode: "throw",
      typeMode: "input",
      overrideAction: valibotFormat,
      overrideSchema(context) {
        if (context.valibotSchema.type === "object") {
          return { ...context.jsonSchema, additionalProperties: false };
        }
        if (context.valibotSchema.type === "intersect") {
          const merged = intersectionJsonSchema(context.jsonSchema as JsonSchema);
          return merged as typeof context.jsonSchema | undefined;
        }
        return undefined;
      },
    }) as JsonSchema;
    delete converted.$schema;
    return converted;
  }
  return closeObjects(libraryJsonSchema(schema));
}

// valibot's converter writes `format: "date-time"` for `v.isoDateTime()` and `format: "time"` for `v.isoTime()`, but
// those take minutes only ("2024-01-01T10:30", "10:30") where the formats (RFC 3339) need seconds and, for a time,
// an offset: a model held to the format (OpenAI's strict mode enforces it; Gemini and Anthropic read it) sends
// "2024-01-01T10:30:00Z", which the validation refuses, so no value the schema advertises is accepted. They are
// written as the pattern the action checks instead (`v.isoTimestamp()` stays date-time: it takes every RFC 3339
// date-time a model writes). Beside another pattern the format is left out: the schema is then wider, never narrower.
const MINUTE_FORMATS = new Set(["iso_date_time", "iso_time"]);
function valibotFormat(context: OverrideActionContext): OverrideActionContext["jsonSchema"] | undefined {
  const action = context.valibotAction as { type: string; requirement?: unknown };
  if (!MINUTE_FORMATS.has(action.type) || !(action.requirement instanceof RegExp)) return undefined;
  const { format: _format, ...rest } = context.jsonSchema;
  return typeof rest.pattern === "string" ? rest : { ...rest, pattern: action.requirement.source };
}

// `v.intersect` converts to an allOf of its members, each object closed (`additionalProperties: false`), which no
// value satisfies: each member refuses the other's keys. Closed objects whose properties do not clash become the one
// object the intersection is, as zod's and ArkType's converters write it; any other intersection keeps its allOf with
// its members' objects left open (the validation still refuses unknown keys).
function intersectionJsonSchema(schema: JsonSchema): JsonSchema | undefined {
  const members = schema.allOf;
  if (!Array.isArray(members)) return undefined;
  const { allOf: _allOf, ...rest } = schema;
  const closed = (m: unknown): m is JsonSchema =>
    typeof m === "object" && m !== null && (m as JsonSchema).type === "object" &&
    (m as JsonSchema).additionalProperties === false &&
    Object.keys(m).every((k) => ["type", "properties", "required", "additionalProperties", "description"].includes(k));
  if (members.every(closed)) {
    const properties: Record<string, JsonSchema> = {};
    let clash = false;
    for (const member of members) {
      for (const [name, property] of Object.entries(member.properties ?? {})) {
        if (name in properties && JSON.stringify(properties[name]) !== JSON.stringify(property)) clash = true;
        properties[name] = property as JsonSchema;
      }
    }
    if (!clash) {
      const required = [...new Set(members.flatMap((m) => m.required ?? []))];
      return { ...rest, type: "object", properties, required, additionalProperties: false };
    }
  }
  const open = (m: unknown): unknown => {
    if (typeof m !== "object" || m === null || (m as JsonSchema).additionalProperties !== false) return m;
    const { additionalProperties: _closed, ...kept } = m as JsonSchema;
    return kept;
  };
  return { ...rest, allOf: members.map(open) as JsonSchema[] };
}

/**
 * Converts a tool's output schema (valibot, or another Standard Schema library
 * with a JSON Schema converter: zod 4, ArkType) to the JSON Schema of its
 * output, as MCP's `outputSchema` advertises it. It describes the JSON the
 * tool returns, as the check on the way out accepts it (the schema's input
 * side): a `v.object` or `z.object` admits unknown keys (the check passes them
 * on), a `v.strictObject` or `z.strictObject` does not.
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
export function outputJsonSchema(schema: StandardSchema): JsonSchema {
  let converted: JsonSchema;
  if (isValibotSchema(schema)) {
    converted = toJsonSchema(schema as v.GenericSchema, {
      errorMode: "throw",
      typeMode: "input",
      overrideAction: valibotFormat,
      // Custom checks have no JSON Schema form; the schema is then wider than the check, never narrower.
      ignoreActions: ["check", "check_items", "partial_check", "raw_check"],
    }) as JsonSchema;
    delete converted.$schema;
  } else {
    converted = libraryJsonSchema(schema);
  }
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
