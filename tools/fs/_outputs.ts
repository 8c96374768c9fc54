// The output schemas of the fs tools: exactly what each returns on success,
// checked on the way out and advertised as MCP's outputSchema.

import * as v from "valibot";
import {
  ABSOLUTE_PATH,
  COUNT,
  FILE_TYPE,
  IMAGE_FIELDS,
  POSITION,
  RELATIVE_PATH,
  SHA256_HEX,
  TIMESTAMP,
} from "../_shared/output_fields.ts";

/** `read_file`: a window of lines, where it sits in the file, and the file's version. */
export const READ_FILE_OUTPUT = v.strictObject({
  path: ABSOLUTE_PATH,
  content: v.string(),
  note: v.optional(v.string()),
  offset: COUNT,
  lines: COUNT,
  total_lines: v.nullable(COUNT),
  more: v.boolean(),
  next_offset: v.nullable(COUNT),
  line_ending: v.picklist(["lf", "crlf", "mixed", "none"]),
  bom: v.boolean(),
  size: COUNT,
  sha256: v.nullable(SHA256_HEX),
  sha256_skipped: v.optional(v.string()),
  cut_lines: v.optional(v.array(POSITION)),
});

/** `write_file`. */
export const WRITE_FILE_OUTPUT = v.strictObject({
  path: ABSOLUTE_PATH,
  created: v.boolean(),
  bytes: COUNT,
  sha256: SHA256_HEX,
});

/** `copy`: what was copied where, and how many of each kind. */
export const COPY_OUTPUT = v.strictObject({
  from: ABSOLUTE_PATH,
  to: ABSOLUTE_PATH,
  type: v.picklist(["file", "directory", "symlink"]),
  replaced: v.boolean(),
  files: COUNT,
  directories: COUNT,
  links: COUNT,
  skipped: v.array(RELATIVE_PATH),
});

/** `move`. */
export const MOVE_OUTPUT = v.strictObject({
  from: ABSOLUTE_PATH,
  to: ABSOLUTE_PATH,
  type: FILE_TYPE,
  replaced: v.boolean(),
});

/** `delete`: a folder also says how many entries it held. */
export const DELETE_OUTPUT = v.strictObject({
  path: ABSOLUTE_PATH,
  deleted: FILE_TYPE,
  entries: v.optional(COUNT),
});

/** `mkdir`. */
export const MKDIR_OUTPUT = v.strictObject({ path: ABSOLUTE_PATH, created: v.boolean() });

/** `temp_dir`. */
export const TEMP_DIR_OUTPUT = v.strictObject({ path: ABSOLUTE_PATH });

const NAMES = v.array(v.string());
/** Entries whose names this runtime lost (not UTF-8), with the reason. */
const LOST_NAMES = v.array(v.strictObject({ name: v.string(), reason: v.string() }));

/** `list_dir`: names only, or (with details) files with size and time, and where each symlink leads. */
export const LIST_DIR_OUTPUT = v.union([
  v.strictObject({
    path: ABSOLUTE_PATH,
    directories: NAMES,
    files: NAMES,
    symlinks: v.optional(NAMES),
    other: v.optional(NAMES),
    skipped: v.optional(LOST_NAMES),
  }),
  v.strictObject({
    path: ABSOLUTE_PATH,
    directories: NAMES,
    files: v.array(v.strictObject({ name: v.string(), size: v.nullable(COUNT), modified: v.nullable(TIMESTAMP) })),
    symlinks: v.optional(v.array(v.strictObject({
      name: v.string(),
      points_to: v.picklist([
        ...FILE_TYPE.options,
        "missing (broken link)",
        "unknown",
        "outside the workspace",
        "a symlink loop",
      ]),
    }))),
    other: v.optional(
      v.array(v.strictObject({ name: v.string(), type: v.picklist([...FILE_TYPE.options, "unknown"]) })),
    ),
    skipped: v.optional(LOST_NAMES),
  }),
]);

const INFO_BASE = {
  path: ABSOLUTE_PATH,
  size: COUNT,
  mode: v.pipe(v.string(), v.regex(/^0[0-7]{3,4}$/)),
  modified: TIMESTAMP,
  changed: TIMESTAMP,
};

const FILE_HASH = {
  sha256: v.nullable(SHA256_HEX),
  sha256_skipped: v.optional(v.string()),
};

/** `file_info`: a symlink's target, a folder's entry count, a file's content kind and hash, or only metadata. */
export const FILE_INFO_OUTPUT = v.union([
  v.strictObject({
    ...INFO_BASE,
    type: v.literal("symlink"),
    target: v.nullable(ABSOLUTE_PATH),
    target_type: v.picklist([
      ...FILE_TYPE.options,
      "unknown",
      "missing (broken link)",
      "outside the workspace (not followed)",
      "symlink loop",
    ]),
  }),
  v.strictObject({ ...INFO_BASE, type: v.literal("directory"), entries: COUNT }),
  v.strictObject({
    ...INFO_BASE,
    type: v.literal("file"),
    content: v.literal("binary"),
    binary_type: v.string(),
    ...FILE_HASH,
  }),
  v.strictObject({
    ...INFO_BASE,
    type: v.literal("file"),
    content: v.literal("text"),
    encoding: v.string(),
    ...FILE_HASH,
  }),
  v.strictObject({ ...INFO_BASE, type: v.picklist(["fifo", "socket", "char_device", "block_device", "other"]) }),
]);

/** `request_image`: the image handed over (shown after the results), its size and the file's. */
export const REQUEST_IMAGE_OUTPUT = v.strictObject({
  path: ABSOLUTE_PATH,
  media_type: v.picklist(["image/png", "image/jpeg", "image/gif", "image/webp"]),
  ...IMAGE_FIELDS,
  crop: v.optional(v.strictObject({ x: COUNT, y: COUNT, width: COUNT, height: COUNT })),
});
