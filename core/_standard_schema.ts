// What toolfence needs of a Standard Schema (valibot, zod 4, ArkType, ...):
// recognising one, telling valibot's apart (toolfence walks those itself for
// unknown keys and array parameters), and another library's own JSON Schema.

import type * as v from "valibot";
import type { JsonSchema, StandardSchema } from "./schema.ts";

/** Standard JSON Schema's converter, as zod 4 and ArkType carry it in `~standard.jsonSchema`. */
interface JsonSchemaConverter {
  input(options: { target: "draft-07"; libraryOptions?: Record<string, unknown> }): Record<string, unknown>;
}

/** What ArkType hands a fallback for a part of a type JSON Schema cannot carry. */
interface ArkTypeFallbackContext {
  base: Record<string, unknown>;
  domain?: string;
  proto?: { name?: string };
  unit?: unknown;
}

function noJsonForm(what: string, hint = ""): never {
  throw new TypeError(`${what} cannot be represented in JSON Schema${hint}`);
}

// ArkType's Standard JSON Schema converter replaces what JSON cannot carry (a
// Date, a bigint, a symbol, undefined, a Map) with {}, a value of any type: the
// tool would advertise "anything" and refuse every call. These fail when the
// tool is made instead, as zod's z.date() and valibot's v.date() do. What
// ArkType narrows further (predicates, morphs) keeps its base type: the
// library's own validation still runs.
const ARKTYPE_FALLBACK = {
  date: () => noJsonForm("Date"),
  proto: (ctx: ArkTypeFallbackContext) => noJsonForm(ctx.proto?.name || "an instance of a class"),
  domain: (ctx: ArkTypeFallbackContext) => noJsonForm(ctx.domain === undefined ? "a value" : `a ${ctx.domain}`),
  unit: (ctx: ArkTypeFallbackContext) =>
    ctx.unit === undefined
      ? noJsonForm("undefined", " (make the key optional instead)")
      : noJsonForm(`the value ${typeof ctx.unit === "bigint" ? `${ctx.unit}n` : String(ctx.unit)}`),
};

/** Whether a value is a Standard Schema: a `~standard` object of version 1 with a `validate` function. */
export function isStandardSchema(value: unknown): value is StandardSchema {
  if ((typeof value !== "object" && typeof value !== "function") || value === null) return false;
  const props = (value as { "~standard"?: { version?: unknown; validate?: unknown } })["~standard"];
  return typeof props === "object" && props !== null && props.version === 1 && typeof props.validate === "function";
}

/** Whether a Standard Schema is valibot's. */
export function isValibotSchema(schema: StandardSchema): schema is StandardSchema & v.GenericSchema {
  const s = schema as unknown as { kind?: unknown; "~run"?: unknown };
  return schema["~standard"].vendor === "valibot" && s.kind === "schema" && typeof s["~run"] === "function";
}

/**
 * Another library's JSON Schema from its own converter, through Standard JSON
 * Schema (zod 4's is z.toJSONSchema, ArkType's toJsonSchema): draft-07, the
 * schema's input side (what validation accepts), without `$schema`.
 */
export function libraryJsonSchema(schema: StandardSchema): JsonSchema {
  const props = schema["~standard"] as StandardSchema["~standard"] & { jsonSchema?: JsonSchemaConverter };
  if (typeof props.jsonSchema?.input !== "function") {
    // zod's own schemas lack it in zod 3, in "zod/v3" and "zod/mini" of zod 4, and before zod 4.2: "use zod 4"
    // would send a zod/mini user in a circle.
    const fix = props.vendor === "zod"
      ? 'zod has one from 4.2 on, on the schemas of `import { z } from "zod"` (zod 3, "zod/v3" and "zod/mini" ' +
        "schemas carry none): make the schema with that z, or use valibot, ArkType or a class tool with a JSON Schema"
      : "use valibot, zod 4 or ArkType, or a class tool with a JSON Schema";
    throw new TypeError(
      `a ${props.vendor} schema has no JSON Schema converter (Standard JSON Schema's ~standard.jsonSchema); ${fix}`,
    );
  }
  const libraryOptions = props.vendor === "arktype" ? { fallback: ARKTYPE_FALLBACK } : undefined;
  const converted = props.jsonSchema.input({ target: "draft-07", libraryOptions }) as JsonSchema;
  delete converted.$schema;
  return converted;
}
