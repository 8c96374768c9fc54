// A JSON-RPC request id as the store keeps it (a call's row, and the tail of its toolfence://calls/ URI): a number as
// its text, a string as itself unless that text reads as JSON (a number, or a quoted string), then as its JSON text.
// The id read back is the one the client sent, type and value, as JSON-RPC asks an answer to echo it: "42" stays a
// string and 42 a number, and 1234567890123456 is not made a string for its length. A string holding a character no
// database keeps is kept as its JSON text too (see storableText). Rows kept as String(id), before
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

// Characters a database's text does not keep as they are: NUL (PostgreSQL refuses the whole statement, and a call
// whose id held one was answered 500 with the database's error) and a lone surrogate (both databases
// keep U+FFFD for it, so that the ids "\ud800" and "\udbff" were one key, one call's outcome read for the other's).
const UNSTORABLE = /\0|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

// `text` as a store's text column keeps it: its JSON text when it holds a character no database keeps as it is.
function storableText(text: string): string {
  return UNSTORABLE.test(text) ? JSON.stringify(text) : text;
}

/** The key a request id is kept under. */
export function requestKey(id: RequestId): string {
  if (typeof id === "number") return String(id);
  return scalarOf(id) === undefined ? storableText(id) : JSON.stringify(id);
}

/** The request id a key was made of. */
export function requestIdOf(key: string): RequestId {
  return scalarOf(key) ?? key;
}
