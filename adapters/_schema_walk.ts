// Helpers shared by the dialects that rewrite JSON Schema (OpenAI strict mode,
// Gemini's OpenAPI subset) and by the inverse mapping of the arguments.

import type { JsonSchema } from "@toolfence/core";
import { SchemaDialectError } from "./dialect_error.ts";

/** Where a rewrite is: the dialect and tool for errors, the JSON Pointer, the root for `$ref`. */
export interface WalkContext {
  dialect: string;
  toolName: string;
  root: JsonSchema;
  /** The references being written out in place on the current path (OpenAI strict mode), to stop at a cycle. */
  inlining?: string[];
}

/** Appends a JSON Pointer segment (RFC 6901 escaping). */
export function pointer(path: string, ...segments: (string | number)[]): string {
  return path + segments.map((s) => "/" + String(s).replace(/~/g, "~0").replace(/\//g, "~1")).join("");
}

/** Throws the dialect error for `path`. */
export function fail(ctx: WalkContext, path: string, reason: string): never {
  throw new SchemaDialectError(ctx.dialect, ctx.toolName, path, reason);
}

/** Whether a value is a plain JSON object (not an array, not null). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Resolves a local `$ref` (`#/$defs/X`, `#/definitions/X`) against the root; undefined when unresolvable. */
export function resolveRef(root: JsonSchema, ref: string): JsonSchema | undefined {
  if (!ref.startsWith("#")) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(1).split("/").slice(1)) {
    const key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    if (!isPlainObject(node)) return undefined;
    node = node[key];
  }
  return isPlainObject(node) ? node as JsonSchema : undefined;
}

/**
 * A node whose `allOf` holds one schema, as that schema with the node's
 * annotations: the wrapper a draft-07 converter puts around a `$ref` to give it
 * siblings (zod's `.optional()`, `.describe()` or `.default()` of a schema with
 * an id or a recursive one: `{ allOf: [{ $ref }], description }`). The node is
 * returned as it is when it has a keyword besides annotations next to `allOf`,
 * or the member is not an object: that is a real intersection.
 */
export function unwrapAllOf(schema: JsonSchema): JsonSchema {
  let current = schema;
  for (let i = 0; i < 32; i++) {
    const members = current.allOf;
    if (!Array.isArray(members) || members.length !== 1 || !isPlainObject(members[0])) return current;
    const { allOf: _allOf, ...siblings } = current;
    if (!Object.keys(siblings).every((k) => ANNOTATIONS.has(k))) return current;
    current = { ...(members[0] as JsonSchema), ...siblings };
  }
  return current;
}

/** The schema behind `$ref` chains and one-member `allOf` wrappers (cycles give up and return the last node). */
export function deref(root: JsonSchema, schema: JsonSchema): JsonSchema {
  let current = unwrapAllOf(schema);
  for (let i = 0; i < 32 && typeof current.$ref === "string"; i++) {
    const next = resolveRef(root, current.$ref);
    if (!next) return current;
    current = unwrapAllOf(next);
  }
  return current;
}

/** The types a schema names in `type`, as a list. */
export function typesOf(schema: JsonSchema): string[] {
  if (Array.isArray(schema.type)) return schema.type;
  return typeof schema.type === "string" ? [schema.type] : [];
}

/** The JSON type of a value as JSON Schema names it. */
export function jsonTypeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

/** Whether `null` is a valid value of the schema (by its type, members, enum or const). */
export function acceptsNull(root: JsonSchema, schema: JsonSchema | boolean | undefined): boolean {
  if (schema === undefined || schema === true) return true;
  if (schema === false) return false;
  const s = deref(root, schema);
  if (Object.keys(s).every((k) => k === "description" || k === "title" || k === "default" || k === "examples")) {
    return true;
  }
  if (typesOf(s).includes("null")) return true;
  if (Array.isArray(s.enum) && s.enum.includes(null)) return true;
  if ("const" in s && s.const === null) return true;
  const members = (s.anyOf ?? s.oneOf) as JsonSchema[] | undefined;
  return Array.isArray(members) && members.some((m) => acceptsNull(root, m));
}

// Keywords that describe a value without constraining it.
const ANNOTATIONS = new Set([
  "description",
  "title",
  "examples",
  "default",
  "$comment",
  "deprecated",
  "readOnly",
  "writeOnly",
]);

/**
 * Whether a schema accepts any value: `true`, or one with annotations only
 * (`{}`, which zod and ArkType write for an open object's extra keys, the
 * same as valibot's `v.looseObject` leaving `additionalProperties` out).
 */
export function acceptsAnyValue(schema: unknown): boolean {
  return schema === true || (isPlainObject(schema) && Object.keys(schema).every((k) => ANNOTATIONS.has(k)));
}

/**
 * Whether the schema is a record: an object whose keys are free and whose
 * values all follow one schema (`v.record`), with no named properties.
 */
export function isRecordSchema(schema: JsonSchema): boolean {
  const isObject = typesOf(schema).includes("object") ||
    (schema.type === undefined && "additionalProperties" in schema);
  return isObject && isPlainObject(schema.additionalProperties) &&
    (!schema.properties || Object.keys(schema.properties).length === 0);
}

/** The type names of enum values, for an enum that has no `type`. */
export function enumTypes(values: readonly unknown[]): string[] {
  const types = new Set(values.map((v) => (typeof v === "number" ? "number" : jsonTypeOf(v))));
  return [...types];
}

/** Adds notes (constraints a dialect cannot carry) to a description, in parentheses. */
export function withNotes(description: unknown, notes: readonly string[]): string | undefined {
  const base = typeof description === "string" ? description : "";
  if (notes.length === 0) return base || undefined;
  const note = `(${notes.join("; ")})`;
  return base ? `${base} ${note}` : note;
}

/** One constraint as a short note, e.g. `minLength: 1` or `default: "x"`. */
export function note(keyword: string, value: unknown): string {
  return `${keyword}: ${JSON.stringify(value)}`;
}
