// The tools' JSON Schema is draft-07 (what the schema libraries' converters write); Anthropic's API takes an
// input_schema only when it is valid JSON Schema 2020-12 ("tools.N.custom.input_schema: JSON schema is invalid. It
// must match JSON Schema draft 2020-12"), and MCP 2025-11-25 reads a schema without `$schema` as 2020-12. The one
// draft-07 form 2020-12 refuses is the tuple: `items` as an array (with `additionalItems` for what follows), which
// 2020-12 spells `prefixItems` (and `items`); and draft-07's `dependencies`, which 2020-12 ignores, is split into
// `dependentRequired` and `dependentSchemas`. This rewrites both at every depth; the rest of what the converters write
// means the same under both. Gemini's JSON Schema (the Google ADK's `parametersJsonSchema`) reads 2020-12's too.

import type { JsonSchema } from "@toolfence/core";
import { isPlainObject } from "./_schema_walk.ts";

// Keywords whose value is one schema, a list of schemas, or a map of schemas.
const ONE = [
  "additionalProperties",
  "items",
  "additionalItems",
  "contains",
  "not",
  "if",
  "then",
  "else",
  "propertyNames",
];
const LIST = ["anyOf", "oneOf", "allOf", "prefixItems"];
const MAP = ["properties", "patternProperties", "definitions", "$defs", "dependentSchemas"];

/** `schema` in JSON Schema 2020-12: draft-07 tuples as `prefixItems`; a new object, the input untouched. */
export function toDraft2020(schema: JsonSchema): JsonSchema {
  return rewrite(schema, 0, { draft2020: true, at: "" }) as JsonSchema;
}

/**
 * `schema` as it must be written to sit at `at` (a JSON Pointer) inside another schema: its local references (`#`,
 * `#/definitions/X`), which point from its own root, made to point from there; a new object, the input untouched.
 * The draft stays as it is.
 */
export function placedAt(schema: JsonSchema, at: string): JsonSchema {
  return rewrite(schema, 0, { draft2020: false, at }) as JsonSchema;
}

function rewrite(node: unknown, depth: number, how: { draft2020: boolean; at: string }): unknown {
  if (!isPlainObject(node) || depth > 256) return node;
  const out: Record<string, unknown> = { ...node };
  if (how.at && typeof out.$ref === "string" && (out.$ref === "#" || out.$ref.startsWith("#/"))) {
    out.$ref = `#${how.at}${out.$ref.slice(1)}`;
  }
  if (!how.draft2020) {
    // As it is: a draft-07 tuple's `items` list and `dependencies`' schemas are schemas too.
    if (Array.isArray(out.items)) out.items = out.items.map((member) => rewrite(member, depth + 1, how));
    if (isPlainObject(out.dependencies)) {
      out.dependencies = Object.fromEntries(
        Object.entries(out.dependencies).map(([name, sub]) => [name, rewrite(sub, depth + 1, how)]),
      );
    }
  } else if (Array.isArray(out.items)) {
    out.prefixItems = out.items;
    if ("additionalItems" in out) out.items = out.additionalItems;
    else delete out.items;
    delete out.additionalItems;
  } else if ("additionalItems" in out) {
    // Draft-07 ignores additionalItems beside a single `items` schema (or none); 2020-12 has no such keyword.
    delete out.additionalItems;
  }
  for (const key of ONE) if (key in out) out[key] = rewrite(out[key], depth + 1, how);
  for (const key of LIST) {
    if (Array.isArray(out[key])) out[key] = (out[key] as unknown[]).map((member) => rewrite(member, depth + 1, how));
  }
  for (const key of MAP) {
    const map = out[key];
    if (isPlainObject(map)) {
      out[key] = Object.fromEntries(Object.entries(map).map(([name, sub]) => [name, rewrite(sub, depth + 1, how)]));
    }
  }
  // Draft-07's `dependencies` is two keywords in 2020-12: a list of names is `dependentRequired`, a schema
  // `dependentSchemas` (2020-12 validators ignore `dependencies`, so the dependency would not hold).
  if (how.draft2020 && isPlainObject(out.dependencies)) {
    const required: Record<string, unknown> = {};
    const schemas: Record<string, unknown> = {};
    for (const [name, sub] of Object.entries(out.dependencies)) {
      if (Array.isArray(sub)) required[name] = sub;
      else schemas[name] = rewrite(sub, depth + 1, how);
    }
    delete out.dependencies;
    if (Object.keys(required).length) out.dependentRequired = { ...required, ...(out.dependentRequired as object) };
    if (Object.keys(schemas).length) out.dependentSchemas = { ...schemas, ...(out.dependentSchemas as object) };
  }
  return out;
}
