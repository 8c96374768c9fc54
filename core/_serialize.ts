// Lossless JSON serialisation of tool outputs: anything JSON.stringify would
// silently drop or change (typed arrays, Maps, Sets, functions, NaN, cycles,
// bigint) is refused with the path where it sits.

export class NotSerializableError extends Error {
  constructor(readonly path: string, readonly what: string, fix?: string) {
    super(`${what} at ${path || "(root)"}, which is not JSON-serialisable${fix ? `; ${fix}` : ""}`);
  }
}

function check(value: unknown, path: string, ancestors: Set<object>): void {
  switch (typeof value) {
    case "string":
    case "boolean":
      return;
    case "number":
      if (!Number.isFinite(value)) throw new NotSerializableError(path, `${value} (not finite)`);
      return;
    case "undefined":
      return;
    case "bigint":
      throw new NotSerializableError(path, "a bigint", "return it as a string");
    case "function":
      throw new NotSerializableError(path, "a function");
    case "symbol":
      throw new NotSerializableError(path, "a symbol");
  }
  if (value === null) return;
  const object = value as object;
  if (ArrayBuffer.isView(object) || object instanceof ArrayBuffer) {
    throw new NotSerializableError(path, `binary data (${object.constructor.name})`, "wrap it, e.g. as base64 text");
  }
  if (object instanceof Map || object instanceof Set) {
    throw new NotSerializableError(path, `a ${object.constructor.name}`, "convert it to an array or object");
  }
  if (typeof (object as { toJSON?: unknown }).toJSON === "function") return;
  if (ancestors.has(object)) throw new NotSerializableError(path, "a circular reference");
  ancestors.add(object);
  if (Array.isArray(object)) {
    object.forEach((item, i) => check(item, `${path}[${i}]`, ancestors));
  } else {
    for (const [key, item] of Object.entries(object)) check(item, path ? `${path}.${key}` : key, ancestors);
  }
  ancestors.delete(object);
}

/**
 * Returns the output as JSON data (undefined becomes null) with the text a model
 * reads for it, or throws NotSerializableError.
 */
export function toJsonOutput(value: unknown): { output: unknown; text: string } {
  if (value === undefined || value === null) return { output: null, text: "" };
  if (typeof value === "string") return { output: value, text: value };
  check(value, "", new Set());
  const text = JSON.stringify(value);
  return { output: JSON.parse(text), text };
}
