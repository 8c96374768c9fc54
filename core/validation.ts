/**
 * Strict argument validation: the schema of a tool made with `tool()`
 * (valibot, zod 4, ArkType: any Standard Schema), JSON Schema for class
 * tools, the same rules for all.
 *
 * @module
 */

import { textPrefix, textSuffix } from "./_text_prefix.ts";
import * as v from "valibot";
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import {
  acceptsArrayFromString,
  type AnySchema,
  flatObjectNames,
  unknownFlatKeys,
  unknownKeyPaths,
  unwrap,
} from "./_valibot_walk.ts";
import { coerceArrayStrings } from "./_array_string.ts";
import type { JsonSchema, StandardSchema } from "./schema.ts";
import { isValibotSchema } from "./_standard_schema.ts";
import {
  ArgumentsTooComplex,
  budgetFor,
  instrumentValibot,
  isStackOverflow,
  MAX_ARGUMENT_DEPTH,
  pathOf,
  spend,
  withBudget,
} from "./_validation_budget.ts";

/** One problem with the arguments, for the model and for the developer. */
export interface ArgumentIssue {
  /** Dotted path of the argument, e.g. `options.depth` or `paths[2]`. */
  path: string;
  /** What is wrong, e.g. `expected boolean, received "yes"`. */
  message: string;
}

/**
 * The outcome of {@linkcode validateArguments}. `code` is `arguments_too_complex` when validation stopped at its work
 * budget (a recursive schema met a deeply nested value) rather than at an issue; absent for ordinary issues.
 */
export type ValidationOutcome =
  | { ok: true; value: Record<string, unknown> }
  | { ok: false; issues: ArgumentIssue[]; code?: "arguments_too_complex" };

// The refusal when a validation spent its budget or met a value nested too deep: the limit, and the path of the value
// it was judging.
function tooComplex(error: unknown, args: unknown, at?: string): ValidationOutcome & { ok: false } {
  const known = error instanceof ArgumentsTooComplex
    ? error
    : new ArgumentsTooComplex(MAX_ARGUMENT_DEPTH, undefined, undefined, "depth");
  const found = at ?? pathOf(args, known.at) ?? "";
  const path = found.length > 200 ? `${textPrefix(found, 100)}…${textSuffix(found, 99)}` : found;
  return {
    ok: false,
    code: "arguments_too_complex",
    issues: [{
      path,
      message: known.reason === "depth"
        ? `nested more than ${known.limit} levels deep, over the limit for arguments; send a shallower value`
        : `validation stopped after ${known.limit} steps here: the schema is recursive and the value too deeply ` +
          "nested or too ambiguous for it; send a shallower value",
    }],
  };
}

/** Whether `error` ends a validation with {@linkcode tooComplex}; anything else is rethrown. */
function isTooComplex(error: unknown): boolean {
  return error instanceof ArgumentsTooComplex || isStackOverflow(error);
}

/** The longest validation message a model gets; the details keep every issue. */
export const MAX_VALIDATION_MESSAGE = 1000;

/**
 * Formats issues as one line a model can act on, capped in length:
 * `Invalid arguments for list_dir: details: expected boolean, received "yes"; extra: unexpected argument`.
 *
 * @example
 * ```ts
 * import { formatIssues } from "@toolfence/core";
 * console.log(formatIssues("list_dir", [{ path: "extra", message: "unexpected argument" }]));
 * ```
 */
export function formatIssues(toolName: string, issues: readonly ArgumentIssue[]): string {
  const head = `Invalid arguments for ${toolName}: `;
  const parts = issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message));
  let text = head;
  for (let i = 0; i < parts.length; i++) {
    const next = (i === 0 ? "" : "; ") + parts[i];
    const rest = parts.length - i - 1;
    const tail = rest > 0 ? `; … (${rest} more)` : "";
    if (text.length + next.length + tail.length > MAX_VALIDATION_MESSAGE) {
      // The first issue is always named, cut if it must be: the message never holds none.
      if (i === 0) return `${head}${textPrefix(parts[0], MAX_VALIDATION_MESSAGE - head.length - 40)}…${tail}`;
      return textPrefix(`${text}; … (${parts.length - i} more)`, MAX_VALIDATION_MESSAGE);
    }
    text += next;
  }
  return text;
}

function pathText(path: readonly (string | number)[]): string {
  let out = "";
  for (const key of path) {
    out += typeof key === "number" ? `[${key}]` : out === "" ? keyText(key) : `.${keyText(key)}`;
  }
  return out;
}

// A key as a message names it: plain keys as they are; an empty one, one with a control character, or a long one
// (cut, as a received string is) quoted. A 2,000-character unexpected key left no issue in the capped message
// ("Invalid arguments for read_file: ; … (1 more)"), and an empty one read as no name at all.
function keyText(key: string): string {
  if (key.length > 60) return JSON.stringify(textPrefix(key, 57) + "...");
  // deno-lint-ignore no-control-regex
  return key === "" || /[\u0000-\u001f\u007f]/.test(key) ? JSON.stringify(key) : key;
}

function describeReceived(value: unknown): string {
  if (value === undefined) return "nothing";
  if (typeof value === "string") return JSON.stringify(value.length > 60 ? textPrefix(value, 57) + "..." : value);
  if (Array.isArray(value)) return "an array";
  if (value === null) return "null";
  if (typeof value === "object") return "an object";
  return String(value);
}

// The refusal of an input schema that validates asynchronously: validation happens before the call is admitted.
function asyncRefused(): ValidationOutcome {
  return {
    ok: false,
    issues: [{ path: "", message: "the tool's input schema validates asynchronously, which toolfence refuses" }],
  };
}

// ---------------------------------------------------------------- valibot

/** What validating against one valibot schema needs beside the schema, worked out once per schema. */
interface ValibotPlan {
  /** The top-level parameters that take arrays; undefined when none do. */
  arrayParams: Set<string> | undefined;
  /** The entry names when only the top level can hold unknown keys (see `flatObjectNames`), else null. */
  flat: ReadonlySet<string> | null;
  /** Whether the schema has a union, variant, intersect or lazy node: validation then runs under a work budget. */
  budgeted: boolean;
}

const valibotPlans = new WeakMap<object, ValibotPlan>();

function valibotPlanOf(schema: v.GenericSchema): ValibotPlan {
  let plan = valibotPlans.get(schema);
  if (plan === undefined) {
    const entries = (unwrap(schema as AnySchema).entries ?? {}) as Record<string, AnySchema>;
    const arrayParams = new Set(Object.keys(entries).filter((key) => acceptsArrayFromString(entries[key])));
    plan = {
      arrayParams: arrayParams.size ? arrayParams : undefined,
      flat: flatObjectNames(schema as AnySchema),
      budgeted: instrumentValibot(schema),
    };
    valibotPlans.set(schema, plan);
  }
  return plan;
}

function valibotIssues(issues: readonly v.BaseIssue<unknown>[]): ArgumentIssue[] {
  return issues.map((issue) => {
    const path = pathText(issue.path?.map((p) => p.key as string | number) ?? []);
    if (issue.kind === "schema" && issue.type.includes("object") && issue.input === undefined) {
      return { path, message: "missing required argument" };
    }
    if (issue.kind === "schema") {
      const nested = issue.issues?.length ? ` (${issue.issues.map((n) => n.message).slice(0, 3).join("; ")})` : "";
      return {
        path,
        message: `expected ${(issue.expected ?? issue.type).replace(/^\((.*)\)$/, "$1")}, received ${
          describeReceived(issue.input)
        }${issue.type === "union" ? nested : ""}`,
      };
    }
    return { path, message: issue.message };
  });
}

/**
 * Validates `args` against a valibot object schema: the array-as-string rule for
 * top-level parameters, unknown keys refused at every level (except under
 * `v.looseObject` and `v.objectWithRest`), no implicit conversion, defaults applied.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import { validateWithValibot } from "@toolfence/core";
 * const outcome = validateWithValibot(v.object({ n: v.number() }), { n: "3" });
 * console.log(outcome.ok); // false
 * ```
 */
export function validateWithValibot(schema: v.GenericSchema, args: Record<string, unknown>): ValidationOutcome {
  return validateWithPlan(schema, valibotPlanOf(schema), args);
}

// validateWithValibot with the schema's plan in hand.
function validateWithPlan(
  schema: v.GenericSchema,
  { arrayParams, flat, budgeted }: ValibotPlan,
  args: Record<string, unknown>,
): ValidationOutcome {
  const input = arrayParams ? coerceArrayStrings(args, (key) => arrayParams.has(key)) : args;
  if (!budgeted) return valibotOutcome(schema, input, flat);
  try {
    return withBudget(budgetFor(input), () => valibotOutcome(schema, input, flat));
  } catch (error) {
    if (isTooComplex(error)) return tooComplex(error, input);
    throw error;
  }
}

function valibotOutcome(
  schema: v.GenericSchema,
  input: Record<string, unknown>,
  flat: ReadonlySet<string> | null,
): ValidationOutcome {
  const unknownPaths = flat ? unknownFlatKeys(flat, input) : unknownKeyPaths(schema as AnySchema, input);
  // valibot's own run, as `v.safeParse` makes it, without the result object `safeParse` wraps it in.
  const dataset = schema["~run"]({ value: input }, v.getGlobalConfig());
  // An async schema (`v.objectAsync`, a `v.lazyAsync` member) gives a promise, or a member's promise where its
  // outcome goes: neither has issues, and the call ran with whatever the model sent.
  if (dataset instanceof Promise) dataset.catch(() => {}); // not awaited; no unhandled rejection
  if (dataset instanceof Promise || (dataset.issues === undefined && dataset.typed !== true)) return asyncRefused();
  if (dataset.issues === undefined && unknownPaths.length === 0) {
    return { ok: true, value: dataset.value as Record<string, unknown> };
  }
  const unknown = unknownPaths.map((p) => ({ path: pathText(p), message: "unexpected argument" }));
  return { ok: false, issues: [...(dataset.issues === undefined ? [] : valibotIssues(dataset.issues)), ...unknown] };
}

// ---------------------------------------------------------------- JSON Schema

// `validateFormats: false`: Ajv here has no format definitions, so it checked no `format` anyway, but warned
// through console.warn for each one it compiled (`unknown format "email" ignored ...`); a Standard Schema library's
// own validation, which runs next, checks its formats.
// Two instances: the first stops at the first error (an anyOf stops at its first fitting member), which decides most
// calls; the second, with allErrors, runs only on arguments the first refused, to name every issue. With allErrors an
// anyOf judges every member, so a recursive one judged the whole value 2^depth times even when it was valid.
const AJV_OPTIONS = { strict: false, useDefaults: true, coerceTypes: false, validateFormats: false } as const;
const ajvFirst = new Ajv({ ...AJV_OPTIONS, allErrors: false });
const ajv = new Ajv({ ...AJV_OPTIONS, allErrors: true });
const compiled = new WeakMap<object, { first: ValidateFunction; all: ValidateFunction }>();

// Each subschema Ajv evaluates spends one step of the validation's budget: Ajv has no memo, so a recursive anyOf or
// oneOf may judge a subtree under every member at every level (and with allErrors collect 2^depth errors).
const WORK_KEYWORD = "x-toolfence-work";
for (const instance of [ajvFirst, ajv]) {
  instance.addKeyword({
    keyword: WORK_KEYWORD,
    schemaType: "boolean",
    errors: false,
    validate: (_schema: boolean, data: unknown, _parent?: unknown, cxt?: { instancePath: string }) => {
      spend(data, cxt?.instancePath);
      return true;
    },
  });
}

function pointerSegments(pointer: string): (string | number)[] {
  return pointer.split("/").slice(1).map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

// Keywords whose value is one schema, an array of schemas, or a map of names to schemas.
const ONE_SCHEMA = new Set([
  "items",
  "additionalItems",
  "additionalProperties",
  "unevaluatedItems",
  "unevaluatedProperties",
  "contains",
  "propertyNames",
  "not",
  "if",
  "then",
  "else",
]);
const SCHEMA_LISTS = new Set(["anyOf", "oneOf", "allOf", "prefixItems", "items"]);
const SCHEMA_MAPS = new Set(["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"]);

// A property that tells a union's members apart: judged first, a member that does not fit fails before it judges
// the rest of the value (Ajv judges properties in the order the schema lists them).
function discriminates(schema: unknown): boolean {
  return typeof schema === "object" && schema !== null && ("const" in schema || "enum" in schema);
}

// A copy of a JSON Schema in which every subschema spends a step of the budget when Ajv evaluates it, and each
// object's `const` and `enum` properties come first.
function counted(schema: unknown): unknown {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return schema;
  const out: Record<string, unknown> = { [WORK_KEYWORD]: true };
  for (const [key, value] of Object.entries(schema)) {
    if (SCHEMA_LISTS.has(key) && Array.isArray(value)) out[key] = value.map(counted);
    else if (ONE_SCHEMA.has(key)) out[key] = counted(value);
    else if (SCHEMA_MAPS.has(key) && typeof value === "object" && value !== null) {
      const entries = Object.entries(value);
      if (key === "properties") {
        entries.sort(([, a], [, b]) => Number(discriminates(b)) - Number(discriminates(a)));
      }
      out[key] = Object.fromEntries(entries.map(([k, s]) => [k, counted(s)]));
    } else out[key] = value;
  }
  return out;
}

/**
 * Returns a copy of a JSON Schema in which every object schema that does not
 * say otherwise refuses unknown properties: the same strictness as valibot tools.
 */
export function closeObjects(schema: JsonSchema): JsonSchema {
  if (Array.isArray(schema)) return schema.map((s) => closeObjects(s)) as unknown as JsonSchema;
  if (typeof schema !== "object" || schema === null) return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "properties" || key === "patternProperties" || key === "$defs" || key === "definitions") {
      out[key] = Object.fromEntries(
        Object.entries(value as Record<string, JsonSchema>).map(([k, s]) => [k, closeObjects(s)]),
      );
    } else if (
      typeof value === "object" && value !== null && key !== "enum" && key !== "const" && key !== "default" &&
      key !== "examples"
    ) {
      out[key] = closeObjects(value as JsonSchema);
    } else {
      out[key] = value;
    }
  }
  const isObject = out.type === "object" || (Array.isArray(out.type) && out.type.includes("object")) ||
    (out.type === undefined && out.properties !== undefined);
  if (isObject && out.additionalProperties === undefined && out.unevaluatedProperties === undefined) {
    out.additionalProperties = false;
  }
  return out as JsonSchema;
}

/**
 * The schema behind local `$ref`s and one-member `allOf` wrappers: zod writes a parameter whose schema has an id
 * (`.meta({ id })`) as `{ $ref: "#/definitions/Tags" }`, and that one made optional or described as
 * `{ allOf: [{ $ref }] }`.
 */
function behindReferences(root: JsonSchema, schema: JsonSchema | undefined): JsonSchema | undefined {
  let current = schema;
  for (let i = 0; i < 32 && typeof current === "object" && current !== null; i++) {
    const all = current.allOf;
    if (Array.isArray(all) && all.length === 1 && typeof all[0] === "object" && all[0] !== null) {
      current = all[0] as JsonSchema;
    } else if (typeof current.$ref === "string" && current.$ref.startsWith("#")) {
      let node: unknown = root;
      for (const raw of current.$ref.slice(1).split("/").slice(1)) {
        const key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
        node = typeof node === "object" && node !== null ? (node as Record<string, unknown>)[key] : undefined;
      }
      current = node as JsonSchema | undefined;
    } else {
      return current;
    }
  }
  return current;
}

function acceptsArrayFromJsonSchema(root: JsonSchema, property: JsonSchema | undefined): boolean {
  const schema = behindReferences(root, property);
  if (typeof schema !== "object" || schema === null) return false;
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  if (types.includes("string")) return false;
  if (types.includes("array")) return true;
  const members = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (!members) return false;
  const memberTypes = members.map((m) => behindReferences(root, m))
    .flatMap((m) => (typeof m === "object" && m ? [m.type].flat() : []));
  return memberTypes.includes("array") && !memberTypes.includes("string");
}

function ajvIssues(errors: readonly ErrorObject[], args: Record<string, unknown>): ArgumentIssue[] {
  return errors.map((e) => {
    const segments = pointerSegments(e.instancePath);
    const path = pathText(segments);
    const received = segments.reduce<unknown>(
      (node, key) => (node !== null && typeof node === "object" ? (node as Record<string, unknown>)[key] : undefined),
      args,
    );
    switch (e.keyword) {
      case "additionalProperties":
        return { path: pathText([...segments, e.params.additionalProperty]), message: "unexpected argument" };
      case "required":
        return { path: pathText([...segments, e.params.missingProperty]), message: "missing required argument" };
      case "type":
        return { path, message: `expected ${e.params.type}, received ${describeReceived(received)}` };
      case "enum":
        return {
          path,
          message: `expected one of ${
            (e.params.allowedValues as unknown[]).map((x) => JSON.stringify(x)).join(" | ")
          }, received ${describeReceived(received)}`,
        };
      default:
        return { path, message: `${e.message ?? e.keyword}, received ${describeReceived(received)}` };
    }
  });
}

/**
 * Validates `args` against a class tool's JSON Schema with the same strictness
 * as valibot tools: unknown properties refused unless the schema allows them,
 * no type coercion, the array-as-string rule, defaults applied.
 *
 * @example
 * ```ts
 * import { validateWithJsonSchema } from "@toolfence/core";
 * const schema = { type: "object", properties: { n: { type: "number" } }, required: ["n"] };
 * console.log(validateWithJsonSchema(schema, { n: 3 }).ok); // true
 * ```
 */
export function validateWithJsonSchema(schema: JsonSchema, args: Record<string, unknown>): ValidationOutcome {
  let validate = compiled.get(schema as object);
  if (validate === undefined) {
    const closed = counted(closeObjects(schema)) as object;
    validate = { first: ajvFirst.compile(closed), all: ajv.compile(closed) };
    compiled.set(schema as object, validate);
  }
  const { first, all } = validate;
  const properties = ((schema as Record<string, unknown>).properties ?? {}) as Record<string, JsonSchema>;
  const coerced = coerceArrayStrings(args, (key) => acceptsArrayFromJsonSchema(schema, properties[key]));
  let input: Record<string, unknown> = coerced;
  try {
    const budget = budgetFor(coerced);
    input = structuredClone(coerced);
    const once = input;
    if (withBudget(budget, () => first(once))) return { ok: true, value: input };
  } catch (error) {
    if (!isTooComplex(error)) throw error;
    const at = error instanceof ArgumentsTooComplex && typeof error.path === "string" ? error.path : undefined;
    return tooComplex(error, input, at === undefined ? undefined : pathText(pointerSegments(at)));
  }
  const firstIssues = ajvIssues(first.errors ?? [], input);
  // The first pass may have filled defaults in before it stopped; the second starts from the arguments as sent. When
  // naming every issue runs past the budget, the model gets the one the first pass found.
  const again = structuredClone(coerced);
  try {
    if (withBudget(budgetFor(again), () => all(again))) return { ok: true, value: again };
  } catch (error) {
    if (!isTooComplex(error)) throw error;
    return { ok: false, issues: firstIssues };
  }
  return { ok: false, issues: ajvIssues(all.errors ?? [], again) };
}

// ---------------------------------------------------------------- any Standard Schema

/**
 * Validates `args` against a tool's input schema from any Standard Schema
 * library, with the same strictness for each. valibot schemas go through
 * {@linkcode validateWithValibot}. Any other library's (zod 4, ArkType) first
 * through {@linkcode validateWithJsonSchema} against `inputSchema`, the JSON
 * Schema its own converter made (so unknown keys are refused at every level
 * unless the schema keeps objects open, and an array parameter sent as a
 * string is parsed), then through the library itself (refinements, transforms,
 * defaults), whose output the tool gets. An input schema that validates
 * asynchronously is refused: validation happens before the call is admitted.
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import { z } from "zod";
 * import { inputJsonSchema, validateWithStandardSchema } from "@toolfence/core";
 * const schema = z.object({ n: z.number() });
 * console.log(validateWithStandardSchema(schema, { n: 3, extra: 1 }, inputJsonSchema(schema)).ok); // false
 * ```
 */
export function validateWithStandardSchema(
  schema: StandardSchema,
  args: Record<string, unknown>,
  inputSchema: JsonSchema,
): ValidationOutcome {
  let outcome: ValidationOutcome;
  if (isValibotSchema(schema)) {
    // One kind test and one plan lookup a call.
    const plan = valibotPlanOf(schema);
    outcome = validateWithPlan(schema, plan, args);
    // A flat valibot object drops nothing: each of its keys is an entry or refused as unknown, and its values hold
    // no keys. The common case skips the walk (a call's hot path).
    if (plan.flat !== null) return outcome;
  } else {
    outcome = otherSchemaOutcome(schema, args, inputSchema);
  }
  if (!outcome.ok) return outcome;
  const lost: string[] = [];
  guardedKeysLost(args, outcome.value, [], lost, 0);
  if (lost.length === 0) return outcome;
  return {
    ok: false,
    issues: lost.map((path) => ({
      path,
      message: "the tool's schema library drops this key (a prototype-pollution guard), so the tool would not " +
        "see it; send the entry under another key",
    })),
  };
}

// Keys a schema library's record or open object drops from the value it returns without an issue (valibot drops all
// three, zod `__proto__`): the call would succeed with less than the model sent.
const GUARDED_KEYS = new Set(["__proto__", "constructor", "prototype"]);

function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// The paths of guarded keys the input has and the validated value, at the same place, does not.
function guardedKeysLost(input: unknown, output: unknown, path: (string | number)[], lost: string[], depth: number) {
  if (depth > 64) return;
  if (Array.isArray(input) && Array.isArray(output)) {
    const n = Math.min(input.length, output.length);
    for (let i = 0; i < n; i++) guardedKeysLost(input[i], output[i], [...path, i], lost, depth + 1);
  } else if (isJsonObject(input) && isJsonObject(output)) {
    for (const key of Object.keys(input)) {
      if (Object.hasOwn(output, key)) guardedKeysLost(input[key], output[key], [...path, key], lost, depth + 1);
      else if (GUARDED_KEYS.has(key)) lost.push(pathText([...path, key]));
    }
  }
}

// Another library's schema: the strict JSON Schema check, then the library's own validation.
function otherSchemaOutcome(
  schema: StandardSchema,
  args: Record<string, unknown>,
  inputSchema: JsonSchema,
): ValidationOutcome {
  const strict = validateWithJsonSchema(inputSchema, args);
  if (!strict.ok) return strict;
  const properties = ((inputSchema as Record<string, unknown>).properties ?? {}) as Record<string, JsonSchema>;
  const input = coerceArrayStrings(args, (key) => acceptsArrayFromJsonSchema(inputSchema, properties[key]));
  let result: ReturnType<StandardSchema["~standard"]["validate"]>;
  try {
    result = schema["~standard"].validate(input);
  } catch (error) {
    if (isStackOverflow(error)) return tooComplex(error, input);
    throw error;
  }
  if (result instanceof Promise) {
    result.catch(() => {}); // Its outcome is not awaited; it must not surface as an unhandled rejection.
    return asyncRefused();
  }
  if (result.issues === undefined) return { ok: true, value: result.value as Record<string, unknown> };
  return {
    ok: false,
    issues: result.issues.map((issue) => ({
      path: pathText((issue.path ?? []).map((p) => (typeof p === "object" ? p.key : p) as string | number)),
      message: issue.message,
    })),
  };
}
