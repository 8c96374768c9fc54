// Introspection of valibot schemas by their public `type` tags. valibot keeps
// wrapped schemas in `wrapped`, object entries in `entries`, and so on; these
// helpers read those fields so that the validator can enforce rules valibot
// itself leaves to the caller (unknown keys, the array-as-string rule).

import * as v from "valibot";
import { memoKey, spend } from "./_validation_budget.ts";

// deno-lint-ignore no-explicit-any
export type AnySchema = v.BaseSchema<unknown, unknown, v.BaseIssue<unknown>> & Record<string, any>;

const WRAPPERS = new Set([
  "optional",
  "exact_optional",
  "nullable",
  "nullish",
  "undefinedable",
  "non_optional",
  "non_nullable",
  "non_nullish",
]);

const OBJECT_TYPES = new Set(["object", "strict_object", "loose_object", "object_with_rest"]);

/** Strips optional/nullable-style wrappers. */
export function unwrap(schema: AnySchema): AnySchema {
  let current = schema;
  while (WRAPPERS.has(current.type) && current.wrapped) current = current.wrapped;
  return current;
}

/** Whether the (unwrapped) schema is an object schema of any flavour. */
export function isObjectSchema(schema: AnySchema): boolean {
  return OBJECT_TYPES.has(unwrap(schema).type);
}

/**
 * Whether a parameter takes an array, so that a string argument may be parsed
 * into one. Unions qualify only when one member is an array and none is a plain
 * string (a string there is a legitimate value, not a mangled array).
 */
export function acceptsArrayFromString(schema: AnySchema): boolean {
  const base = unwrap(schema);
  if (base.type === "array" || base.type.endsWith("tuple") || base.type === "tuple_with_rest") return true;
  if (base.type === "union" || base.type === "variant") {
    const options = (base.options as AnySchema[]).map(unwrap);
    return options.some((o) => o.type === "array") && !options.some((o) => o.type === "string");
  }
  return false;
}

type Path = (string | number)[];

const flatNames = new WeakMap<object, ReadonlySet<string> | null>();

/**
 * The entry names of a (possibly wrapped) `v.object` none of whose entries can
 * hold keys, so that only its own level can have unknown keys; null for any
 * other schema. Cached per schema: a call asks it of the same schema each time.
 */
export function flatObjectNames(schema: AnySchema): ReadonlySet<string> | null {
  let names = flatNames.get(schema);
  if (names === undefined) {
    const base = unwrap(schema);
    const entries = base.entries as Record<string, AnySchema> | undefined;
    names = base.type === "object" && Object.values(entries!).every((e) => !canHoldKeys(e))
      ? new Set(Object.keys(entries!))
      : null;
    flatNames.set(schema, names);
  }
  return names;
}

const LEAF_TYPES = new Set([
  "string",
  "number",
  "boolean",
  "bigint",
  "literal",
  "picklist",
  "enum",
  "null",
  "undefined",
  "any",
  "unknown",
  "date",
]);

const holdsKeys = new WeakMap<object, boolean>();

/**
 * Whether values of this schema can hold keys the walk polices (so unknown keys may hide in them); cached per
 * schema. An array of leaves, or a union of them, cannot: the walk would find nothing in it.
 */
function canHoldKeys(schema: AnySchema): boolean {
  let answer = holdsKeys.get(schema);
  if (answer === undefined) {
    const base = unwrap(schema);
    if (LEAF_TYPES.has(base.type)) answer = false;
    else if (base.type === "array") answer = canHoldKeys(base.item);
    else if (base.type === "union" || base.type === "variant") answer = (base.options as AnySchema[]).some(canHoldKeys);
    else answer = true;
    holdsKeys.set(schema, answer);
  }
  return answer;
}

// The answer of most calls, shared: callers only read it.
const NO_PATHS: Path[] = Object.freeze([]) as unknown as Path[];

/**
 * The common flat case of {@linkcode unknownKeyPaths}: `names` are the entries of an object schema none of which
 * can hold keys (`flatObjectNames`), so only this level of `value` needs a look.
 */
export function unknownFlatKeys(names: ReadonlySet<string>, value: unknown, path: Path = []): Path[] {
  if (typeof value !== "object" || value === null) return NO_PATHS;
  let found: Path[] | undefined;
  for (const key of Object.keys(value)) if (!names.has(key)) (found ??= []).push([...path, key]);
  return found ?? NO_PATHS;
}

/**
 * Paths of keys present in `value` that the schema does not declare, at every
 * level, except under loose objects and objects with a rest schema.
 * strict_object reports its own unknown keys, so only its entries are walked.
 * Each union, variant, intersect and lazy node judges a value object once (a
 * recursive union would judge the same subtree under each member, at every
 * level), and each step spends from the active validation budget.
 */
export function unknownKeyPaths(schema: AnySchema, value: unknown, path: Path = []): Path[] {
  const found = relativeUnknown(schema, value, new Map());
  return path.length === 0 || found.length === 0 ? found : found.map((p) => [...path, ...p]);
}

type Memo = Map<object, WeakMap<object, Path[]>>;

const MEMOISED = new Set(["union", "variant", "intersect", "lazy"]);

function under(key: string | number, paths: Path[]): Path[] {
  return paths.length === 0 ? paths : paths.map((p) => [key, ...p]);
}

function relativeUnknown(schema: AnySchema, value: unknown, memo: Memo): Path[] {
  spend(value);
  const flat = typeof value === "object" && value !== null ? flatObjectNames(schema) : null;
  if (flat !== null) return unknownFlatKeys(flat, value);
  const base = unwrap(schema);
  if (value === null || value === undefined) return [];
  if (typeof value !== "object" || !MEMOISED.has(base.type)) return unknownOf(base, value, memo);
  const key = memoKey(base);
  let byValue = memo.get(key);
  if (byValue === undefined) memo.set(key, byValue = new WeakMap());
  let found = byValue.get(value);
  if (found === undefined) byValue.set(value, found = unknownOf(base, value, memo));
  return found;
}

function unknownOf(base: AnySchema, value: unknown, memo: Memo): Path[] {
  switch (base.type) {
    case "object":
    case "strict_object":
    case "loose_object":
    case "object_with_rest": {
      if (typeof value !== "object" || Array.isArray(value)) return [];
      const entries = base.entries as Record<string, AnySchema>;
      const record = value as Record<string, unknown>;
      const found: Path[] = [];
      for (const key in record) {
        if (!Object.hasOwn(record, key)) continue;
        if (Object.hasOwn(entries, key)) {
          if (canHoldKeys(entries[key])) found.push(...under(key, relativeUnknown(entries[key], record[key], memo)));
        } else if (base.type === "object") {
          found.push([key]);
        }
      }
      return found;
    }
    case "array":
      if (!Array.isArray(value)) return [];
      return value.flatMap((item, i) => under(i, relativeUnknown(base.item, item, memo)));
    case "tuple":
    case "strict_tuple":
    case "loose_tuple":
    case "tuple_with_rest": {
      if (!Array.isArray(value)) return [];
      const items = base.items as AnySchema[];
      return value.flatMap((item, i) =>
        i < items.length
          ? under(i, relativeUnknown(items[i], item, memo))
          : base.rest
          ? under(i, relativeUnknown(base.rest, item, memo))
          : []
      );
    }
    case "record":
      if (typeof value !== "object" || Array.isArray(value)) return [];
      return Object.entries(value as Record<string, unknown>).flatMap(([k, item]) =>
        under(k, relativeUnknown(base.value, item, memo))
      );
    case "lazy":
      return relativeUnknown(base.getter(value), value, memo);
    case "union":
    case "variant": {
      // The value is judged by the members that accept it: fine if one of them
      // sees no unknown keys, else the unknowns of the first accepting member.
      const accepting = (base.options as AnySchema[]).filter((o) => v.is(o, value));
      let first: Path[] | undefined;
      for (const option of accepting) {
        const unknown = relativeUnknown(option, value, memo);
        if (unknown.length === 0) return [];
        first ??= unknown;
      }
      return first ?? [];
    }
    case "intersect": {
      // A key is unknown only when no member declares it.
      const perOption = (base.options as AnySchema[]).map((o) =>
        relativeUnknown(o, value, memo).map((p) => p.join("\u0000"))
      );
      const [head, ...rest] = perOption;
      if (!head) return [];
      return head.filter((p) => rest.every((r) => r.includes(p))).map((p) => p.split("\u0000"));
    }
    default:
      return [];
  }
}
