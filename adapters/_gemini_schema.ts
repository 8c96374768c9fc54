// Gemini's function parameters: the OpenAPI 3.0 subset of its `Schema` type.
// One upper-case type per schema, `nullable` instead of a "null" type, string
// enums only, no `$ref` (local references are inlined), no
// `additionalProperties` (records become lists of {key, value} entries, the
// same encoding OpenAI's strict mode uses, so `fromStrictArguments` maps them back).

import type { JsonSchema } from "@toolfence/core";
import { SchemaDialectError } from "./dialect_error.ts";
import {
  acceptsAnyValue,
  acceptsNull,
  fail,
  isPlainObject,
  isRecordSchema,
  note,
  pointer,
  resolveRef,
  typesOf,
  unwrapAllOf,
  type WalkContext,
  withNotes,
} from "./_schema_walk.ts";

/** The type names of Gemini's `Type` enum. */
export type GeminiType = "STRING" | "NUMBER" | "INTEGER" | "BOOLEAN" | "ARRAY" | "OBJECT";

/** Gemini's `Schema` (the fields toolfence writes). */
export interface GeminiSchema {
  /** The one type of the value. */
  type?: GeminiType;
  /** What the value means. */
  description?: string;
  /** Whether `null` is allowed. */
  nullable?: boolean;
  /** Possible string values. */
  enum?: string[];
  /** `enum` or `date-time` for strings. */
  format?: string;
  /** Members, any of which the value may match. */
  anyOf?: GeminiSchema[];
  /** Object properties. */
  properties?: Record<string, GeminiSchema>;
  /** Required property names. */
  required?: string[];
  /** Array items. */
  items?: GeminiSchema;
  /** Array length bounds. */
  minItems?: string;
  /** Array length bounds. */
  maxItems?: string;
  /** String length bounds. */
  minLength?: string;
  /** String length bounds. */
  maxLength?: string;
  /** Property count bounds. */
  minProperties?: string;
  /** Property count bounds. */
  maxProperties?: string;
  /** Number bounds. */
  minimum?: number;
  /** Number bounds. */
  maximum?: number;
  /** A regular expression strings must match. */
  pattern?: string;
  /** The value used when none is given. */
  default?: unknown;
  /** A short title. */
  title?: string;
}

const TYPES: Record<string, GeminiType> = {
  string: "STRING",
  number: "NUMBER",
  integer: "INTEGER",
  boolean: "BOOLEAN",
  array: "ARRAY",
  object: "OBJECT",
};
// Gemini's Schema declares these counts as int64, which its JSON form writes as strings.
const COUNTS = new Set(["minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties"]);
const KEPT = new Set(["minimum", "maximum", "pattern", "default", "title"]);
const NOTED = new Set([
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "uniqueItems",
  "contentEncoding",
  "contentMediaType",
]);
const DROPPED = new Set([
  "examples",
  "$schema",
  "$id",
  "$comment",
  "readOnly",
  "writeOnly",
  "deprecated",
  "$defs",
  "definitions",
]);
const STRUCTURAL = new Set([
  "type",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "anyOf",
  "oneOf",
  "enum",
  "const",
  "description",
  "format",
  "$ref",
  "propertyNames",
  // A draft-07 tuple's (zod's, ArkType's, v.strictTuple's): refused with the tuple, by what the user wrote.
  "additionalItems",
]);

/**
 * Refuses a tool name Gemini does not take. toolfence's names (letters,
 * digits, `_` and `-`) fit Gemini's but for the first character: a function
 * name must start with a letter or an underscore (`@google/genai`'s
 * `FunctionDeclaration.name`), so `2fa_check` or `-x` would fail the request.
 */
export function checkGeminiName(toolName: string, dialect = "gemini"): void {
  if (!/^[A-Za-z_]/.test(toolName)) {
    throw new SchemaDialectError(
      dialect,
      toolName,
      "",
      "Gemini takes a function name only when it starts with a letter or an underscore; rename the tool",
    );
  }
}

/** Converts a tool's input schema; undefined for a tool without parameters (Gemini omits them). */
export function toGeminiParameters(schema: JsonSchema, toolName: string): GeminiSchema | undefined {
  const ctx: WalkContext = { dialect: "gemini", toolName, root: schema };
  if (!typesOf(schema).includes("object") || schema.anyOf || schema.oneOf || schema.allOf) {
    fail(ctx, "", "the arguments must be one object schema (type: object)");
  }
  if (!schema.properties || Object.keys(schema.properties).length === 0) {
    if (isPlainObject(schema.additionalProperties) || schema.additionalProperties === true) {
      fail(ctx, "", "the arguments object has no declared properties");
    }
    return undefined;
  }
  return geminiNode(ctx, schema, "", []);
}

// The one JSON type an enum's values share ("integer" where every number is whole), or undefined when they mix
// types or hold arrays or objects.
function valuesKind(values: readonly unknown[]): "string" | "integer" | "number" | "boolean" | undefined {
  const kinds = new Set(
    values.map((v) => typeof v === "number" ? (Number.isInteger(v) ? "integer" : "number") : typeof v),
  );
  if (kinds.size === 2 && kinds.has("integer") && kinds.has("number")) return "number";
  if (kinds.size !== 1) return undefined;
  const [kind] = kinds;
  return kind === "string" || kind === "integer" || kind === "number" || kind === "boolean" ? kind : undefined;
}

function geminiNode(ctx: WalkContext, input: JsonSchema | boolean, path: string, refs: string[]): GeminiSchema {
  if (input === true || input === false) fail(ctx, path, "a boolean schema cannot be expressed");
  // zod's `{ allOf: [{ $ref }], description }` (an optional or described schema with an id) is the schema it wraps.
  const schema = unwrapAllOf(input);
  if (typeof schema.$ref === "string") {
    if (refs.includes(schema.$ref)) fail(ctx, path, `the reference ${schema.$ref} is recursive; Gemini has no $ref`);
    const target = resolveRef(ctx.root, schema.$ref);
    if (!target) fail(ctx, pointer(path, "$ref"), `the reference ${schema.$ref} cannot be resolved`);
    const { $ref: _ref, ...siblings } = schema;
    return geminiNode(ctx, { ...target, ...siblings }, path, [...refs, schema.$ref]);
  }
  const out: GeminiSchema = {};
  const notes: string[] = [];
  for (const [keyword, value] of Object.entries(schema)) {
    if (STRUCTURAL.has(keyword)) continue;
    if (COUNTS.has(keyword)) (out as Record<string, unknown>)[keyword] = String(value);
    else if (KEPT.has(keyword)) (out as Record<string, unknown>)[keyword] = value;
    else if (NOTED.has(keyword)) notes.push(note(keyword, value));
    else if (!DROPPED.has(keyword)) {
      fail(ctx, pointer(path, keyword), `Gemini does not support the keyword "${keyword}"`);
    }
  }
  const description = () => {
    const text = withNotes(schema.description, notes);
    if (text !== undefined) out.description = text;
  };

  const members = schema.anyOf ?? schema.oneOf;
  if (members !== undefined) {
    const key = schema.anyOf ? "anyOf" : "oneOf";
    const nonNull = members.map((m, i) => [m, i] as const).filter(([m]) => !isNullSchema(m));
    const nullable = nonNull.length < members.length;
    if (nonNull.length === 0) fail(ctx, path, "a value that can only be null");
    if (nonNull.length === 1) {
      const [member, index] = nonNull[0];
      const single = geminiNode(ctx, member as JsonSchema, pointer(path, key, index), refs);
      Object.assign(out, single);
      if (nullable) out.nullable = true;
      if (schema.description !== undefined || notes.length) {
        out.description = withNotes(schema.description ?? single.description, notes);
      }
      return out;
    }
    out.anyOf = nonNull.map(([m, i]) => geminiNode(ctx, m as JsonSchema, pointer(path, key, i), refs));
    if (nullable) out.nullable = true;
    description();
    return out;
  }

  const values = "const" in schema ? [schema.const] : Array.isArray(schema.enum) ? schema.enum : undefined;
  let types = typesOf(schema);
  if (types.includes("null")) out.nullable = true;
  types = types.filter((t) => t !== "null");
  if (values !== undefined) {
    const where = pointer(path, "const" in schema ? "const" : "enum");
    if (values.includes(null)) out.nullable = true;
    const kept = values.filter((v) => v !== null);
    const kind = valuesKind(kept);
    if (kind === undefined || types.some((t) => t !== kind && !(t === "number" && kind === "integer"))) {
      fail(ctx, where, "Gemini enums hold strings, or else values of one other type (number, integer or boolean)");
    }
    if (kind === "string") {
      out.type = "STRING";
      out.format = "enum";
      out.enum = kept as string[];
    } else {
      // Gemini's enum is for strings only: the value keeps its type, and the values go into the description (the
      // call's validation still holds the arguments to them, and tells the model the values when it strays).
      out.type = TYPES[types.includes("number") ? "number" : kind];
      notes.push(note("enum", kept));
    }
    description();
    return out;
  }
  if (types.length > 1) {
    out.anyOf = types.map((t) => geminiNode(ctx, { ...schema, type: t, description: undefined }, path, refs));
    description();
    return out;
  }
  if (types.length === 0) fail(ctx, path, "the schema names no type; Gemini needs one type for every value");
  const type = types[0];
  if (!(type in TYPES)) fail(ctx, pointer(path, "type"), `Gemini has no type "${type}"`);
  out.type = TYPES[type];

  if (typeof schema.format === "string") {
    if (type === "string" && schema.format === "date-time") out.format = "date-time";
    else notes.push(note("format", schema.format));
  }
  if (type === "object") {
    if (isRecordSchema(schema)) return recordAsPairs(ctx, schema, out, notes, path, refs);
    const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
    const names = Object.keys(properties);
    if (names.length === 0) fail(ctx, path, "an object with no declared properties; Gemini needs at least one");
    // An open object's extra keys (`{}` from zod and ArkType, absent from valibot) are left out, as Gemini has none.
    if (isPlainObject(schema.additionalProperties) && !acceptsAnyValue(schema.additionalProperties)) {
      fail(ctx, pointer(path, "additionalProperties"), "an object with named properties and free extra properties");
    }
    out.properties = Object.fromEntries(
      names.map((name) => [name, geminiNode(ctx, properties[name], pointer(path, "properties", name), refs)]),
    );
    const required = (schema.required ?? []).filter((name) => names.includes(name));
    if (required.length) out.required = required;
  }
  if (type === "array") {
    if (Array.isArray(schema.items)) fail(ctx, pointer(path, "items"), "Gemini cannot express tuples");
    if (!isPlainObject(schema.items)) fail(ctx, path, "an array of values of any type; give its items a schema");
    out.items = geminiNode(ctx, schema.items as JsonSchema, pointer(path, "items"), refs);
  }
  for (
    const refused of ["allOf", "not", "if", "then", "else", "patternProperties", "dependentSchemas", "prefixItems"]
  ) {
    if (refused in schema) fail(ctx, pointer(path, refused), `Gemini does not support "${refused}"`);
  }
  description();
  return out;
}

function isNullSchema(schema: JsonSchema | boolean): boolean {
  return isPlainObject(schema) && typesOf(schema).length === 1 && schema.type === "null" &&
    acceptsNull(schema, schema);
}

function recordAsPairs(
  ctx: WalkContext,
  schema: JsonSchema,
  out: GeminiSchema,
  notes: string[],
  path: string,
  refs: string[],
): GeminiSchema {
  const key: GeminiSchema = { type: "STRING" };
  if (isPlainObject(schema.propertyNames) && typeof schema.propertyNames.pattern === "string") {
    key.pattern = schema.propertyNames.pattern;
  }
  // A record keyed by an enum (z.record(z.enum([...]), ...), v.record(v.picklist([...]), ...)): the model is told the keys.
  const names = isPlainObject(schema.propertyNames) ? schema.propertyNames.enum : undefined;
  if (Array.isArray(names) && names.length > 0 && names.every((n) => typeof n === "string")) {
    key.format = "enum";
    key.enum = [...names];
  }
  const value = geminiNode(ctx, schema.additionalProperties as JsonSchema, pointer(path, "additionalProperties"), refs);
  const pairs: GeminiSchema = {
    type: "ARRAY",
    items: { type: "OBJECT", properties: { key, value }, required: ["key", "value"] },
  };
  if (out.nullable) pairs.nullable = true;
  const description = withNotes(schema.description, [...notes, "a map, sent as a list of {key, value} entries"]);
  if (description !== undefined) pairs.description = description;
  return pairs;
}
