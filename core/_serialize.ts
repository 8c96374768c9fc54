// Lossless JSON serialisation of tool outputs: anything JSON.stringify would
// silently drop or change (typed arrays, Maps, Sets, functions, NaN, cycles,
// bigint, errors, promises, patterns) is refused with the path where it sits.

import { describeThrown } from "./_thrown.ts";

export class NotSerializableError extends Error {
  constructor(readonly path: string, readonly what: string, fix?: string) {
    super(`${what} at ${path || "(root)"}, which is not JSON-serialisable${fix ? `; ${fix}` : ""}`);
  }
}

interface Walk {
  /** Ancestors on the current path, for cycle detection (an array: paths are short). */
  ancestors: object[];
  /** Keys from the root to the current value; turned into a path only for an error. */
  keys: (string | number)[];
  /** Whether a toJSON method was met (the JSON then differs from the value). */
  converted: boolean;
  /** An upper bound of the JSON text's length. */
  bound: number;
}

// JSON escapes a character as at most 6 ("\u001f"), plus the two quotes.
const stringBound = (s: string) => 2 + 6 * s.length;

function pathOf(keys: readonly (string | number)[]): string {
  let path = "";
  for (const key of keys) path += typeof key === "number" ? `[${key}]` : path ? `.${key}` : key;
  return path;
}

function check(value: unknown, walk: Walk): void {
  switch (typeof value) {
    case "string":
      walk.bound += stringBound(value);
      return;
    case "boolean":
      walk.bound += 5;
      return;
    case "number":
      if (!Number.isFinite(value)) throw new NotSerializableError(pathOf(walk.keys), `${value} (not finite)`);
      walk.bound += 24;
      return;
    case "undefined":
      walk.bound += 4;
      return;
    case "bigint":
      throw new NotSerializableError(pathOf(walk.keys), "a bigint", "return it as a string");
    case "function":
      throw new NotSerializableError(pathOf(walk.keys), "a function");
    case "symbol":
      throw new NotSerializableError(pathOf(walk.keys), "a symbol");
  }
  if (value === null) {
    walk.bound += 4;
    return;
  }
  const object = value as object;
  if (ArrayBuffer.isView(object) || object instanceof ArrayBuffer) {
    throw new NotSerializableError(
      pathOf(walk.keys),
      `binary data (${object.constructor.name})`,
      "wrap it, e.g. as base64 text",
    );
  }
  if (object instanceof Map || object instanceof Set) {
    throw new NotSerializableError(
      pathOf(walk.keys),
      `a ${object.constructor.name}`,
      "convert it to an array or object",
    );
  }
  if (typeof (object as { toJSON?: unknown }).toJSON === "function") {
    walk.converted = true;
    return;
  }
  const lost = lostByJson(object);
  if (lost) throw new NotSerializableError(pathOf(walk.keys), lost.what, lost.fix);
  if (walk.ancestors.includes(object)) throw new NotSerializableError(pathOf(walk.keys), "a circular reference");
  walk.ancestors.push(object);
  walk.bound += 2;
  if (Array.isArray(object)) {
    for (let i = 0; i < object.length; i++) {
      walk.bound += 1;
      walk.keys.push(i);
      check(object[i], walk);
      walk.keys.pop();
    }
  } else {
    // The keys JSON.stringify writes: own, enumerable, string.
    for (const key of Object.keys(object)) {
      walk.bound += stringBound(key) + 2;
      walk.keys.push(key);
      check((object as Record<string, unknown>)[key], walk);
      walk.keys.pop();
    }
  }
  walk.ancestors.pop();
}

/**
 * Built-in objects whose state JSON.stringify does not see (it lives in internal slots, not own properties), so
 * that they come out as `{}` or their own extra properties only: an error's message, a pattern, a promise the tool
 * forgot to await. Refused rather than handed to the model as an empty object.
 */
function lostByJson(object: object): { what: string; fix: string } | undefined {
  if (object instanceof Error) {
    return {
      what: `an error (${object.constructor.name || "Error"})`,
      fix: "return its message (error.message), or throw it",
    };
  }
  if (object instanceof Promise) return { what: "a Promise", fix: "await it" };
  if (object instanceof RegExp) return { what: "a RegExp", fix: "return its source as a string" };
  if (object instanceof WeakMap || object instanceof WeakSet || object instanceof WeakRef) {
    return { what: `a ${object.constructor.name}`, fix: "return plain data" };
  }
  return undefined;
}

/** A tool's output as JSON data, whether it fits the cap, and its text when that was made. */
export interface JsonOutput {
  /** The JSON data (plain data is itself; a value with `toJSON` is its JSON's parse). */
  output: unknown;
  /** Whether the text certainly fits the cap. */
  fits: boolean;
  /** The text a model reads, when it was made; absent means `JSON.stringify(output)`. */
  text?: string;
}

// One walk reused from output to output; a getter in an output may run code that checks another output
// meanwhile, and that inner check gets a walk of its own.
const WALK: Walk = { ancestors: [], keys: [], converted: false, bound: 0 };
let walking = false;

/**
 * Checks that a tool's output is JSON data (undefined becomes null) and gives
 * the text a model reads for it (see {@linkcode jsonText}); throws
 * NotSerializableError otherwise. When the output certainly fits `cap`
 * characters, the JSON text is not made.
 */
export function toJsonOutput(value: unknown, cap: number): JsonOutput {
  if (value === undefined || value === null) return { output: null, fits: true, text: "" };
  if (typeof value === "string") return { output: value, fits: value.length <= cap, text: value };
  const shared = !walking;
  const walk = shared ? WALK : { ancestors: [], keys: [], converted: false, bound: 0 };
  walk.converted = false;
  walk.bound = 0;
  if (shared) walking = true;
  try {
    check(value, walk);
  } catch (error) {
    // A value that throws when read (a getter, a revoked Proxy) is no JSON data either: refused as such, naming where.
    const refusal = error instanceof NotSerializableError ? error : new NotSerializableError(
      pathOf(walk.keys),
      `a value that throws when read (${describeThrown(error).slice(0, 200)})`,
      "return plain data",
    );
    // A refusal leaves the walk where it stopped; a finished walk has emptied its own lists.
    walk.ancestors.length = 0;
    walk.keys.length = 0;
    throw refusal;
  } finally {
    if (shared) walking = false;
  }
  if (!walk.converted && walk.bound <= cap) return { output: value, fits: true };
  let text: string;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    // A toJSON, or a getter read a second time, may throw here.
    throw new NotSerializableError("", `a value that throws when read (${describeThrown(error).slice(0, 200)})`);
  }
  // Plain data is its own JSON; only values with toJSON (dates, say) need the round trip.
  return { output: walk.converted ? JSON.parse(text) : value, fits: text.length <= cap, text };
}

/** The text a model reads for a checked output. */
export function jsonText(json: JsonOutput): string {
  return json.text ?? JSON.stringify(json.output);
}
