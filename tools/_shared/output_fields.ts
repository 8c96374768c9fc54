// The pieces the built-in tools' output schemas share: paths, hashes, counts,
// times, file types, and what a search or a command leaves out. Each tool's
// schema says exactly what it returns (strict objects: no field it does not
// name); these are its building blocks.

import * as v from "valibot";

/** An absolute path on this machine (what the tools report after resolving the model's path). */
export const ABSOLUTE_PATH = v.pipe(v.string(), v.minLength(1), v.description("Absolute path"));

/** A path relative to the folder named beside it. */
export const RELATIVE_PATH = v.string();

/** A sha256 digest as 64 lower-case hex digits. */
export const SHA256_HEX = v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/), v.description("sha256, hex"));

/** A count or size: an integer, at least 0. */
export const COUNT = v.pipe(v.number(), v.integer(), v.minValue(0));

/** A 1-based line or column number. */
export const POSITION = v.pipe(v.number(), v.integer(), v.minValue(1));

/**
 * An instant in UTC as `Date.prototype.toISOString` writes it (`2025-03-01T13:05:09.123Z`); a pattern
 * rather than `v.isoTimestamp()`, whose JSON Schema `format` many validators do not check.
 */
export const TIMESTAMP = v.pipe(v.string(), v.regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/));

/** What a path is, as `typeName` in `fs_open.ts` names it. */
export const FILE_TYPE = v.picklist([
  "file",
  "directory",
  "symlink",
  "fifo",
  "socket",
  "char_device",
  "block_device",
  "other",
]);

/** Any JSON value (what a sub-agent answers). */
export const JSON_VALUE = v.union([
  v.string(),
  v.number(),
  v.boolean(),
  v.null(),
  v.array(v.unknown()),
  v.record(v.string(), v.unknown()),
]);

/** The paths a search could not look at (a few, with why) and how many there were, when there were any. */
export const SKIPPED_FIELDS = {
  skipped: v.optional(v.array(v.strictObject({ path: v.string(), reason: v.string() }))),
  skipped_count: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
};

/** Files a command was not allowed to keep, moved aside: the workspace path and where it went. */
export const PROTECTED_PATHS_MOVED = v.optional(
  v.array(v.strictObject({ path: v.string(), moved_to: v.string() })),
);

const PIXELS = v.pipe(v.number(), v.integer(), v.minValue(1));

/** An image handed to the model (shown after the results): its size, the source's, and the line beside it. */
export const IMAGE_FIELDS = {
  width: PIXELS,
  height: PIXELS,
  original_width: PIXELS,
  original_height: PIXELS,
  resized: v.boolean(),
  note: v.string(),
};
