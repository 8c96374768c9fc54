// What a tool throws or returns is the tool's to choose: an object whose getters throw, a revoked Proxy, an object
// without a prototype (which String() cannot convert). Reading it may throw again, and the call must still end in a
// result (box.call never throws for a tool's failure): these read it without letting that escape.

/** Text for a thrown value, never throwing: its message, its text, its JSON, or a sentence saying it cannot be read. */
export function describeThrown(value: unknown): string {
  try {
    if (value instanceof Error) {
      const message = value.message;
      if (typeof message === "string" && message !== "") return message;
      const name = value.name;
      return typeof name === "string" && name !== "" ? name : "an error without a message";
    }
    if (typeof value === "object" && value !== null) {
      try {
        return String(value);
      } catch {
        const json = JSON.stringify(value);
        if (typeof json === "string") return json;
      }
    }
    return String(value);
  } catch {
    return "a value that cannot be read (reading it threw)";
  }
}

/** `read()`, or `fallback` when reading throws. */
export function readSafely<T>(read: () => T, fallback: T): T {
  try {
    return read();
  } catch {
    return fallback;
  }
}
