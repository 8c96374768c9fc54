// Lossless JSON serialisation of tool outputs: anything JSON.stringify would
// silently drop or change (typed arrays, Maps, Sets, functions, NaN, cycles,
// bigint, errors, promises, patterns) is refused with the path where it sits.

import { describeThrown } from "./_thrown.ts";
import { isWellFormed, wellFormed } from "./_text_prefix.ts";

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
  /** Whether a string or key holds a lone surrogate (see wellFormedData). */
  illFormed: boolean;
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
      if (!walk.illFormed && !isWellFormed(value)) walk.illFormed = true;
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
      if (!walk.illFormed && !isWellFormed(key)) walk.illFormed = true;
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
const WALK: Walk = { ancestors: [], keys: [], converted: false, bound: 0, illFormed: false };
let walking = false;

/**
 * Checks that a tool's output is JSON data (undefined becomes null) and gives
 * the text a model reads for it (see {@linkcode jsonText}); throws
 * NotSerializableError otherwise. When the output certainly fits `cap`
 * characters, the JSON text is not made.
 */
export function toJsonOutput(value: unknown, cap: number): JsonOutput {
  if (value === undefined || value === null) return { output: null, fits: true, text: "" };
  if (typeof value === "string") {
    const text = wellFormed(value);
    return { output: text, fits: text.length <= cap, text };
  }
  const shared = !walking;
  const walk = shared ? WALK : { ancestors: [], keys: [], converted: false, bound: 0, illFormed: false };
  walk.converted = false;
  walk.bound = 0;
  walk.illFormed = false;
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
  if (!walk.converted && !walk.illFormed && walk.bound <= cap) return { output: value, fits: true };
  const stringified = (data: unknown) => {
    try {
      return JSON.stringify(data);
    } catch (error) {
      // A toJSON, or a getter read a second time, may throw here.
      throw new NotSerializableError("", `a value that throws when read (${describeThrown(error).slice(0, 200)})`);
    }
  };
  let text = stringified(value);
  // Plain data is its own JSON; only values with toJSON (dates, say) need the round trip.
  let output = walk.converted ? JSON.parse(text) : value;
  if (walk.illFormed) {
    output = wellFormedData(output);
    text = JSON.stringify(output);
  }
  return { output, fits: text.length <= cap, text };
}

/**
 * JSON data with every lone surrogate of its strings and keys replaced by U+FFFD (see wellFormed): a web page's
 * text (`textContent = "A\ud800B"`, a console message, a title) reached browser_snapshot's output as it was, and
 * a client that sent it on to its model's API had every later request of the conversation refused.
 */
export function wellFormedData(data: unknown): unknown {
  if (typeof data === "string") return wellFormed(data);
  if (typeof data !== "object" || data === null) return data;
  if (Array.isArray(data)) return data.map(wellFormedData);
  // fromEntries defines the keys: a "__proto__" key stays a key.
  return Object.fromEntries(Object.entries(data).map(([key, item]) => [wellFormed(key), wellFormedData(item)]));
}

/** The text a model reads for a checked output. */
export function jsonText(json: JsonOutput): string {
  return json.text ?? JSON.stringify(json.output);
}
