// A JSON-RPC request id as the store keeps it (a call's row, and the tail of its toolfence://calls/ URI): a number as
// its text, a string as itself unless that text reads as JSON (a number, or a quoted string), then as its JSON text.
// The id read back is the one the client sent, type and value, as JSON-RPC asks an answer to echo it: "42" stays a
// string and 42 a number, and 1234567890123456 is not made a string for its length. Rows kept as String(id), before
// this, read back as they were answered then: every string id but one that reads as a number, so no migration.

// @ts-types="@modelcontextprotocol/sdk/types"
import type { RequestId } from "@modelcontextprotocol/sdk/types.js";

// The value that text reads as, when it reads as a JSON number or string.
function scalarOf(text: string): string | number | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "string" || typeof value === "number" ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The key a request id is kept under. */
export function requestKey(id: RequestId): string {
  if (typeof id === "number") return String(id);
  return scalarOf(id) === undefined ? id : JSON.stringify(id);
}

/** The request id a key was made of. */
export function requestIdOf(key: string): RequestId {
  return scalarOf(key) ?? key;
}
