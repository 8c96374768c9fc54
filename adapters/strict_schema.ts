/**
 * OpenAI's strict mode and its inverse. A strict schema closes every object,
 * makes every property required and turns optional properties into nullable
 * ones; records (`v.record`) become arrays of `{ key, value }` pairs, since a
 * strict object cannot have free keys. {@linkcode fromStrictArguments} maps what
 * a model sends back: `null` for an optional property that does not itself
 * accept `null` means "absent" (so defaults apply), and pairs become the record
 * again. Validation then runs against the tool's own schema, so the round trip
 * is lossless.
 *
 * Constraints strict mode does not take (`default`, `minLength`, `maxLength`,
 * `uniqueItems`, unsupported `format`s) move into the description; the tool's
 * own validation still enforces them.
 *
 * @module
 */

import type { JsonSchema } from "@toolfence/core";
import {
  acceptsAnyValue,
  acceptsNull,
  deref,
  enumTypes,
  fail,
  isPlainObject,
  isRecordSchema,
  jsonTypeOf,
  note,
  pointer,
  resolveRef,
  typesOf,
  unwrapAllOf,
  type WalkContext,
  withNotes,
} from "./_schema_walk.ts";

// Keywords strict mode accepts as they are (besides the structural ones handled below).
const KEPT = new Set([
  "pattern",
  "multipleOf",
  "maximum",
  "exclusiveMaximum",
  "minimum",
  "exclusiveMinimum",
  "minItems",
  "maxItems",
]);
// Constraints strict mode refuses; they become notes in the description.
const NOTED = new Set([
  "default",
  "minLength",
  "maxLength",
  "uniqueItems",
  "minProperties",
  "maxProperties",
  // A string's encoding (zod's z.base64(), z.hex() carry `contentEncoding`): the model is told, validation holds it.
  "contentEncoding",
  "contentMediaType",
]);
// Annotations that carry nothing the model needs.
const DROPPED = new Set(["title", "examples", "$schema", "$id", "$comment", "readOnly", "writeOnly", "deprecated"]);
const STRICT_FORMATS = new Set(["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"]);
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
  "$defs",
  "definitions",
  "propertyNames",
  // A draft-07 tuple's (zod's, ArkType's, v.strictTuple's): refused with the tuple, by what the user wrote.
  "additionalItems",
]);

/**
 * Rewrites a tool's input schema for OpenAI's strict mode (chat completions
 * and responses). Throws {@linkcode SchemaDialectError} naming the tool, the
 * schema path and the reason for what strict mode cannot express: values of
 * any type, objects with no declared properties, tuples, `allOf`, `not`,
 * conditionals, objects that mix named and free properties.
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import { toStrictSchema } from "@toolfence/adapters";
 * const strict = toStrictSchema({
 *   type: "object",
 *   properties: { path: { type: "string" }, limit: { type: "integer", default: 10 } },
 *   required: ["path"],
 *   additionalProperties: false,
 * }, "read", "openai-chat");
 * console.log(strict.required); // ["path", "limit"]
 * console.log(strict.properties!.limit); // { type: ["integer", "null"], description: "(default: 10; null for the default)" }
 * ```
 */
export function toStrictSchema(schema: JsonSchema, toolName: string, dialect = "openai-chat"): JsonSchema {
  const ctx: WalkContext = { dialect, toolName, root: schema };
  if (!typesOf(schema).includes("object") || schema.anyOf || schema.oneOf) {
    fail(ctx, "", "the arguments must be one object schema (type: object)");
  }
  // OpenAI takes parameters only of `type: "object"`: a map at the root would be sent as its list of {key, value}
  // entries (`type: "array"`), and the whole request refused.
  if (isRecordSchema(schema) && !acceptsAnyValue(schema.additionalProperties as JsonSchema)) {
    fail(
      ctx,
      "",
      "the arguments are a map (record) with no named properties; strict mode sends a map as a list, " +
        "and the arguments must be an object: wrap the map in an object property",
    );
  }
  const strict = strictNode(ctx, schema, "");
  if (strict.type !== "object") fail(ctx, "", 'the arguments must be of type "object" alone (not nullable)');
  checkStrictLimits(ctx, strict);
  return strict;
}

/**
 * OpenAI's documented limits of a strict schema (Structured Outputs, "Supported schemas"): up to 10 levels of
 * object nesting, 5,000 object properties in all, 1,000 enum values in all, 120,000 characters of property names,
 * definition names, enum and const values, and 15,000 characters of values in a string enum of more than 250. A
 * schema over one is refused by the API with the whole request (400 "... levels of nesting exceeds limit ...").
 * Measured on the strict rendering (a map sent as a list of {key, value} adds a level; the root object is the first
 * level), so that it fails here.
 */
const OPENAI_STRICT_LIMITS = {
  depth: 10,
  properties: 5_000,
  enumValues: 1_000,
  textChars: 120_000,
  largeEnumValues: 250,
  largeEnumChars: 15_000,
} as const;

function checkStrictLimits(ctx: WalkContext, strict: JsonSchema): void {
  const limits = OPENAI_STRICT_LIMITS;
  const total = { properties: 0, enumValues: 0, textChars: 0 };
  const over = (path: string, what: string) => fail(ctx, path, `${what}, over what OpenAI's strict mode takes`);
  const textOf = (value: unknown) => typeof value === "string" ? value.length : JSON.stringify(value ?? null).length;
  const walk = (node: unknown, path: string, depth: number): void => {
    if (!isPlainObject(node)) return;
    const level = typesOf(node as JsonSchema).includes("object") && isPlainObject(node.properties) ? depth + 1 : depth;
    if (level > limits.depth) over(path, `${level} levels of object nesting (at most ${limits.depth})`);
    if (isPlainObject(node.properties)) {
      for (const [name, sub] of Object.entries(node.properties)) {
        total.properties++;
        total.textChars += name.length;
        walk(sub, pointer(path, "properties", name), level);
      }
    }
    if (Array.isArray(node.enum)) {
      total.enumValues += node.enum.length;
      const chars = node.enum.reduce((sum: number, value) => sum + textOf(value), 0);
      total.textChars += chars;
      if (node.enum.length > limits.largeEnumValues && node.enum.every((v) => typeof v === "string" || v === null)) {
        if (chars > limits.largeEnumChars) {
          over(
            pointer(path, "enum"),
            `an enum of ${node.enum.length} strings totalling ${chars} characters (at most ${limits.largeEnumChars} ` +
              `once there are more than ${limits.largeEnumValues})`,
          );
        }
      }
    }
    if ("const" in node) total.textChars += textOf(node.const);
    if (isPlainObject(node.items)) walk(node.items, pointer(path, "items"), level);
    for (const key of ["anyOf", "oneOf"]) {
      const members = node[key];
      if (Array.isArray(members)) members.forEach((member, i) => walk(member, pointer(path, key, i), level));
    }
    for (const key of ["$defs", "definitions"]) {
      const defs = node[key];
      if (!isPlainObject(defs)) continue;
      for (const [name, sub] of Object.entries(defs)) {
        total.textChars += name.length;
        walk(sub, pointer(path, key, name), 0);
      }
    }
  };
  walk(strict, "", 0);
  if (total.properties > limits.properties) {
    over("", `${total.properties} object properties in all (at most ${limits.properties})`);
  }
  if (total.enumValues > limits.enumValues) {
    over("", `${total.enumValues} enum values in all (at most ${limits.enumValues})`);
  }
  if (total.textChars > limits.textChars) {
    over(
      "",
      `${total.textChars} characters of property names, definition names, enum and const values ` +
        `(at most ${limits.textChars})`,
    );
  }
}

// `optional`: the node is an optional property, sent as nullable (with a note) unless it accepts null already.
function strictNode(ctx: WalkContext, input: JsonSchema | boolean, path: string, optional = false): JsonSchema {
  // zod's `{ allOf: [{ $ref }], description }` (an optional or described schema with an id, a recursive one) is the
  // schema it wraps, as the OpenAI SDK's own strict transform reads it.
  const schema = isPlainObject(input) ? unwrapAllOf(input) : input;
  if (isPlainObject(schema) && typeof schema.$ref === "string" && hasSiblings(schema)) {
    return inlineRef(ctx, schema, path, optional);
  }
  if (
    schema === true ||
    (isPlainObject(schema) && Object.keys(schema).every((k) => DROPPED.has(k) || k === "description"))
  ) {
    fail(ctx, path, "it accepts a value of any type; strict mode needs a type for every value");
  }
  if (schema === false) fail(ctx, path, "it accepts no value at all");
  const out: JsonSchema = {};
  const notes: string[] = [];
  for (const [keyword, value] of Object.entries(schema)) {
    if (STRUCTURAL.has(keyword)) continue;
    if (KEPT.has(keyword)) out[keyword] = value;
    else if (NOTED.has(keyword)) notes.push(note(keyword, value));
    else if (!DROPPED.has(keyword)) {
      fail(ctx, pointer(path, keyword), `strict mode does not support the keyword "${keyword}"`);
    }
  }
  if (typeof schema.format === "string") {
    if (STRICT_FORMATS.has(schema.format)) out.format = schema.format;
    else notes.push(note("format", schema.format));
  }
  for (const defs of ["$defs", "definitions"] as const) {
    if (isPlainObject(schema[defs])) {
      out[defs] = Object.fromEntries(
        Object.entries(schema[defs] as Record<string, JsonSchema>).map((
          [name, def],
        ) => [name, strictNode(ctx, def, pointer(path, defs, name))]),
      );
    }
  }
  if (typeof schema.$ref === "string") {
    if (!schema.$ref.startsWith("#")) fail(ctx, pointer(path, "$ref"), "only references inside the schema can be sent");
    out.$ref = schema.$ref;
  }

  const members = schema.anyOf ?? schema.oneOf;
  if (members !== undefined) {
    const key = schema.anyOf ? "anyOf" : "oneOf";
    out.anyOf = members.map((m, i) => strictNode(ctx, m, pointer(path, key, i)));
  }
  if ("const" in schema) {
    out.type = schema.type ?? collapse(enumTypes([schema.const]));
    out.enum = [schema.const];
  }
  if (Array.isArray(schema.enum)) {
    out.type = schema.type ?? collapse(enumTypes(schema.enum));
    out.enum = [...schema.enum];
  }
  if (schema.type !== undefined && out.type === undefined) out.type = structuredClone(schema.type);

  let result = out;
  const types = typesOf(schema);
  if (types.includes("object") || (schema.type === undefined && (schema.properties || schema.additionalProperties))) {
    if (isRecordSchema(schema)) result = recordAsPairs(ctx, schema, notes, path);
    else strictObject(ctx, schema, out, path);
  }
  if (types.includes("array")) {
    if (Array.isArray(schema.items)) fail(ctx, pointer(path, "items"), "strict mode cannot express tuples");
    if (schema.items === undefined) fail(ctx, path, "an array of values of any type; give its items a schema");
    out.items = strictNode(ctx, schema.items, pointer(path, "items"));
  }
  for (
    const refused of ["allOf", "not", "if", "then", "else", "patternProperties", "dependentSchemas", "prefixItems"]
  ) {
    if (refused in schema) fail(ctx, pointer(path, refused), `strict mode does not support "${refused}"`);
  }
  if (result.type === undefined && result.anyOf === undefined && result.$ref === undefined) {
    fail(ctx, path, "the schema names no type");
  }
  if (optional && !acceptsNull(ctx.root, schema)) {
    result = nullable(result);
    notes.push("default" in schema ? "null for the default" : "null when not needed");
  }
  const description = withNotes(schema.description, notes);
  if (description !== undefined) result.description = description;
  return result;
}

// Keywords besides `$ref` that would reach the strict schema next to it.
function hasSiblings(schema: JsonSchema): boolean {
  return Object.keys(schema).some((k) => k !== "$ref" && !DROPPED.has(k));
}

// Strict mode refuses a `$ref` with sibling keywords ("$ref cannot have keywords {'description'}"): the target is
// written in its place with the siblings (its own references stay references). A reference already being written
// out on this path (a recursive one) stays a bare `$ref`, without its siblings.
function inlineRef(ctx: WalkContext, schema: JsonSchema, path: string, optional: boolean): JsonSchema {
  const ref = schema.$ref as string;
  const { $ref: _ref, ...siblings } = schema;
  const inlining = ctx.inlining ?? (ctx.inlining = []);
  const target = resolveRef(ctx.root, ref);
  if (target === undefined || inlining.includes(ref)) {
    const bare = strictNode(ctx, { $ref: ref }, path, optional);
    // Made nullable, it is an anyOf, which may carry the description (before the null note).
    if (typeof siblings.description !== "string" || bare.anyOf === undefined) return bare;
    return { ...bare, description: [siblings.description, bare.description].filter(Boolean).join(" ") };
  }
  const { $defs: _defs, definitions: _definitions, ...body } = target;
  inlining.push(ref);
  try {
    return strictNode(ctx, { ...body, ...siblings }, path, optional);
  } finally {
    inlining.pop();
  }
}

function collapse(types: string[]): string | string[] {
  return types.length === 1 ? types[0] : types;
}

function strictObject(ctx: WalkContext, schema: JsonSchema, out: JsonSchema, path: string): void {
  const properties = schema.properties ?? {};
  const names = Object.keys(properties);
  if (names.length === 0 && schema.additionalProperties !== false) {
    fail(ctx, path, "an object with no declared properties; strict mode closes every object");
  }
  if (isPlainObject(schema.additionalProperties) && !acceptsAnyValue(schema.additionalProperties)) {
    fail(ctx, pointer(path, "additionalProperties"), "an object with named properties and free extra properties");
  }
  // Open objects (v.looseObject, z.looseObject's `additionalProperties: {}`) are closed: the model may send only the
  // declared properties.
  const required = new Set(schema.required ?? []);
  out.properties = Object.fromEntries(
    names.map((
      name,
    ) => [name, strictNode(ctx, properties[name], pointer(path, "properties", name), !required.has(name))]),
  );
  out.required = names;
  out.additionalProperties = false;
}

function nullable(strict: JsonSchema): JsonSchema {
  if (strict.$ref !== undefined) return { anyOf: [{ $ref: strict.$ref }, { type: "null" }] };
  if (strict.anyOf !== undefined) return { ...strict, anyOf: [...strict.anyOf, { type: "null" }] };
  const result: JsonSchema = { ...strict, type: [...typesOf(strict), "null"] };
  if (Array.isArray(strict.enum)) result.enum = [...strict.enum, null];
  return result;
}

function recordAsPairs(ctx: WalkContext, schema: JsonSchema, notes: string[], path: string): JsonSchema {
  const keySchema: JsonSchema = { type: "string" };
  if (isPlainObject(schema.propertyNames)) {
    const names = schema.propertyNames as JsonSchema;
    if (typeof names.pattern === "string") keySchema.pattern = names.pattern;
    if (Array.isArray(names.enum)) keySchema.enum = [...names.enum];
  }
  const value = strictNode(ctx, schema.additionalProperties as JsonSchema, pointer(path, "additionalProperties"));
  const pairs: JsonSchema = {
    type: "array",
    items: {
      type: "object",
      properties: { key: keySchema, value },
      required: ["key", "value"],
      additionalProperties: false,
    },
  };
  notes.push("a map, sent as a list of {key, value} entries");
  return pairs;
}

/**
 * The inverse of {@linkcode toStrictSchema} for arguments: given the tool's
 * original input schema, returns a copy of `args` in which `null` for an
 * optional property that does not accept `null` is removed (so the default
 * applies) and `{ key, value }` lists sent for records are objects again, at
 * every depth. Anything else is left as it is for validation to judge.
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import { fromStrictArguments } from "@toolfence/adapters";
 * const schema = {
 *   type: "object",
 *   properties: { path: { type: "string" }, limit: { type: "integer", default: 10 } },
 *   required: ["path"],
 * };
 * console.log(fromStrictArguments(schema, { path: "a.txt", limit: null })); // { path: "a.txt" }
 * ```
 */
export function fromStrictArguments(schema: JsonSchema, args: unknown): unknown {
  return restoreStrictArguments(schema, args).args;
}

/**
 * A `{ key, value }` list sent for a map that cannot be mapped back: where (dotted, as validation names paths) and
 * why (an entry that is no `{ key, value }` pair, a key named twice).
 */
export interface MapListFault {
  /** The map's path in the arguments (e.g. `env`, `jobs.1.vars`), or its entry's (`env.0`). */
  path: string;
  /** What is wrong there, for the model. */
  why: string;
}

/**
 * {@linkcode fromStrictArguments}, and the first `{ key, value }` list sent for a map that could not be mapped back
 * (it is left as it is). Validation would refuse it too, but in words about the map's values ("env.0: expected
 * string, received an object") that ask the model for the very shape it was told not to send; the adapters refuse
 * such a call with `fault` instead.
 */
export function restoreStrictArguments(schema: JsonSchema, args: unknown): { args: unknown; fault?: MapListFault } {
  const ctx: Restoring = { root: schema, memo: new Map() };
  const restored = restore(ctx, schema, args, 0, []);
  return ctx.fault === undefined ? { args: restored } : { args: restored, fault: ctx.fault };
}

// The schema, and what `fits` found for each object or array of the value against each schema node: it judges a
// union's member at every depth, and without the memo nested unions that all fail deep down (a recursive schema)
// would be judged again at every level, 2^depth times.
interface Restoring {
  root: JsonSchema;
  memo: Map<object, Map<JsonSchema, boolean>>;
  /** The first list sent for a map that could not be mapped back. */
  fault?: MapListFault;
}

function restore(
  ctx: Restoring,
  schema: JsonSchema | boolean | undefined,
  value: unknown,
  depth: number,
  path: readonly (string | number)[],
): unknown {
  const root = ctx.root;
  if (schema === undefined || typeof schema === "boolean" || depth > 64) return value;
  const s = deref(root, schema);
  const members = s.anyOf ?? s.oneOf;
  if (Array.isArray(members)) {
    const member = members.find((m) => fits(ctx, m, value));
    if (member !== undefined) return restore(ctx, member, value, depth + 1, path);
    // A list that fits no member of a union whose one map takes lists (a nullable map): that map's list, judged so.
    if (Array.isArray(value)) {
      const schemas = members.filter((m): m is JsonSchema => typeof m !== "boolean").map((m) => deref(root, m));
      const maps = schemas.filter((m) => isRecordSchema(m));
      if (maps.length === 1 && !schemas.some((m) => typesOf(m).includes("array"))) {
        return restore(ctx, maps[0], value, depth + 1, path);
      }
    }
    return value;
  }
  if (isRecordSchema(s)) {
    const valueSchema = s.additionalProperties as JsonSchema;
    if (Array.isArray(value)) {
      // A list that is no list of {key, value} pairs, or that names a key twice (one of its values would be lost
      // without a word), stays a list, named in ctx.fault.
      const odd = value.findIndex((entry) => !isPair(entry));
      if (odd >= 0) {
        const sent = JSON.stringify(value[odd]) ?? String(value[odd]);
        ctx.fault ??= {
          path: [...path, odd].join("."),
          why: `an entry of this map's list must be {"key": <a string>, "value": <its value>}, not ${
            sent.length > 80 ? `${sent.slice(0, 80)}...` : sent
          }`,
        };
        return value;
      }
      const seen = new Set<string>();
      const twice = (value as { key: string; value: unknown }[]).find((pair) => seen.size === seen.add(pair.key).size);
      if (twice === undefined) {
        return Object.fromEntries(
          value.map((pair) => [pair.key, restore(ctx, valueSchema, pair.value, depth + 1, [...path, pair.key])]),
        );
      }
      const key = JSON.stringify(twice.key.length > 100 ? `${twice.key.slice(0, 100)}...` : twice.key);
      ctx.fault ??= {
        path: path.join("."),
        why: `the key ${key} is sent twice in this map's list of {key, value} entries`,
      };
      return value;
    }
    if (isPlainObject(value)) {
      return Object.fromEntries(
        Object.entries(value).map(([k, v]) => [k, restore(ctx, valueSchema, v, depth + 1, [...path, k])]),
      );
    }
    return value;
  }
  if (isPlainObject(value) && isPlainObject(s.properties)) {
    const properties = s.properties as Record<string, JsonSchema>;
    const required = new Set(s.required ?? []);
    const out: [string, unknown][] = [];
    for (const [key, item] of Object.entries(value)) {
      const property = Object.hasOwn(properties, key) ? properties[key] : undefined;
      if (item === null && property !== undefined && !required.has(key) && !acceptsNull(root, property)) continue;
      out.push([key, restore(ctx, property, item, depth + 1, [...path, key])]);
    }
    // Own properties, every key as sent: an assignment of `__proto__` (Node has the accessor) would set the
    // object's prototype instead, and the schema library would read the model's values through it.
    return Object.fromEntries(out);
  }
  if (Array.isArray(value) && isPlainObject(s.items)) {
    return value.map((item, i) => restore(ctx, s.items as JsonSchema, item, depth + 1, [...path, i]));
  }
  return value;
}

function isPair(value: unknown): value is { key: string; value: unknown } {
  return isPlainObject(value) && typeof value.key === "string" && "value" in value && Object.keys(value).length === 2;
}

// Which member of a union a value belongs to, judged by shape only, at every depth. An array fits a member whose
// items its values fit, so that a union of a list of strings and a list of objects maps an object's nulls by the
// objects' schema; an object fits a member whose properties its values fit, a map one whose values they fit.
function fits(ctx: Restoring, member: JsonSchema | boolean, value: unknown, depth = 0): boolean {
  if (typeof member === "boolean" || depth > 64) return member !== false;
  const s = deref(ctx.root, member);
  if (typeof value !== "object" || value === null) return fitsNode(ctx, s, value, depth);
  let known = ctx.memo.get(value);
  if (known === undefined) ctx.memo.set(value, known = new Map());
  let found = known.get(s);
  if (found === undefined) known.set(s, found = fitsNode(ctx, s, value, depth));
  return found;
}

function fitsNode(ctx: Restoring, s: JsonSchema, value: unknown, depth: number): boolean {
  const root = ctx.root;
  const members = s.anyOf ?? s.oneOf;
  if (Array.isArray(members)) return members.some((m) => fits(ctx, m, value, depth + 1));
  const types = typesOf(s);
  if (value === null) return acceptsNull(root, s);
  if (isRecordSchema(s)) {
    const valueSchema = s.additionalProperties as JsonSchema;
    const values = Array.isArray(value)
      ? (value.every(isPair) ? value.map((pair) => pair.value) : undefined)
      : isPlainObject(value)
      ? Object.values(value)
      : undefined;
    return values !== undefined && values.every((item) => fits(ctx, valueSchema, item, depth + 1));
  }
  if (Array.isArray(value)) {
    if (!types.includes("array")) return false;
    const items = s.items;
    return !isPlainObject(items) || value.every((item) => fits(ctx, items as JsonSchema, item, depth + 1));
  }
  if (typeof value !== "object") {
    if (Array.isArray(s.enum)) return s.enum.includes(value);
    if ("const" in s) return s.const === value;
    if (types.length === 0) return true;
    const type = jsonTypeOf(value);
    return types.includes(type) || (type === "integer" && types.includes("number"));
  }
  if (isPlainObject(value)) {
    if (!types.includes("object") && !isPlainObject(s.properties)) return false;
    const properties = (s.properties ?? {}) as Record<string, JsonSchema>;
    const required = new Set(s.required ?? []);
    // Judged at every depth: a member whose nested object differs (a discriminator one level down) is not the one,
    // and null for an optional property is "absent" under strict mode.
    return Object.entries(value).every(([key, item]) =>
      Object.hasOwn(properties, key) &&
      ((item === null && !required.has(key)) || fits(ctx, properties[key], item, depth + 1))
    ) &&
      Object.entries(properties).every(([key, p]) => !("const" in p) || value[key] === p.const);
  }
  return false;
}
