// The failures the file tools share, each with a stable code, a short message
// for the model that names the path and the fix, and details for developers.

import { ToolError } from "@toolfence/core";

// Deno's NotCapable and Node's ERR_ACCESS_DENIED: the runtime's own fence, as
// opposed to the operating system, refused the operation.
function isRuntimeRefusal(error: unknown): boolean {
  const e = error as { name?: unknown; code?: unknown } | null;
  return typeof e === "object" && e !== null && (e.name === "NotCapable" || e.code === "ERR_ACCESS_DENIED");
}

/** `path` does not exist. */
export function notFound(shown: string, real: string, hint?: string): ToolError {
  return new ToolError(`${shown} does not exist`, {
    code: "not_found",
    recoveryHint: hint ?? "Check the path with list_dir or glob.",
    details: { path: real },
  });
}

/** Something exists at `path` but is not what the operation needs. */
export function wrongType(shown: string, real: string, found: string, wanted: string, hint: string): ToolError {
  return new ToolError(`${shown} is ${found}, not ${wanted}`, {
    code: found === "a directory" ? "is_directory" : wanted === "a directory" ? "not_directory" : "not_regular_file",
    recoveryHint: hint,
    details: { path: real, found, wanted },
  });
}

/** A file that holds binary data where text is needed. */
export function binaryFile(shown: string, real: string, size: number, type: string, hint?: string): ToolError {
  return new ToolError(`${shown} is a binary file (${type}, ${size.toLocaleString("en-US")} bytes), not text`, {
    code: "binary_file",
    recoveryHint: hint ?? "Only text files can be read or edited this way.",
    details: { path: real, size, type },
  });
}

/** Text in an encoding other than UTF-8. */
export function notUtf8(shown: string, real: string, where: string, encoding?: string): ToolError {
  const found = encoding ? `is ${encoding} text` : `is not valid UTF-8 (${where})`;
  return new ToolError(`${shown} ${found}; only UTF-8 text is supported`, {
    code: encoding ? "unsupported_encoding" : "not_utf8",
    recoveryHint: "Convert the file to UTF-8 first (e.g. with iconv), or leave it alone.",
    details: { path: real, where, encoding },
  });
}

/** The file's current hash is not the one the caller expected. */
export function hashConflict(shown: string, real: string, expected: string, actual: string | null): ToolError {
  const now = actual === null ? "it does not exist" : `its sha256 is now ${actual}`;
  return new ToolError(`${shown} has changed: expected sha256 ${expected}, but ${now}; nothing was written`, {
    code: "hash_conflict",
    recoveryHint: "Read the file again and redo the change on its current content.",
    details: { path: real, expected, actual },
  });
}

/**
 * Turns an error thrown by a file operation into a ToolError that names the
 * path: the runtime's permission refusals become `fence_denied`, the common
 * operating-system errors get their own codes.
 */
export function fileOpError(error: unknown, shown: string, real: string, doing: string): ToolError {
  if (error instanceof ToolError) return error;
  if (isRuntimeRefusal(error)) {
    return new ToolError(`The runtime does not allow ${doing} ${real}`, {
      code: "fence_denied",
      kind: "policy",
      recoverable: false,
      recoveryHint:
        "Work within what the runtime allows, or ask the user to widen its --allow-read/--allow-write flags.",
      details: { path: real, doing },
      cause: error,
    });
  }
  const errno = (error as NodeJS.ErrnoException)?.code;
  const message = (error as Error)?.message ?? String(error);
  // Each with the fix for the model: before, "a part of a.txt/x is not a directory" came with no hint.
  const known: Record<string, [string, string, string]> = {
    ENOENT: ["not_found", `${shown} does not exist`, "Check the path with list_dir or glob."],
    ENOTDIR: [
      "not_directory",
      `a part of ${shown} is not a directory`,
      "A folder on the way is a file: check the path with list_dir.",
    ],
    EISDIR: ["is_directory", `${shown} is a directory`, "Use list_dir to see what the directory holds."],
    EACCES: [
      "os_permission_denied",
      `the operating system denied ${doing} ${shown}`,
      "Choose another path, or ask the user to change its permissions.",
    ],
    EPERM: [
      "os_permission_denied",
      `the operating system denied ${doing} ${shown}`,
      "Choose another path, or ask the user to change its permissions.",
    ],
    ENOSPC: [
      "no_space",
      `no space left on the device while ${doing} ${shown}`,
      "Delete what is no longer needed, or write less.",
    ],
    EEXIST: ["already_exists", `${shown} already exists`, "Choose another path, or delete what is there."],
    ENOTEMPTY: ["directory_not_empty", `${shown} is not empty`, "Delete what it holds first."],
    EROFS: ["read_only_filesystem", `${shown} is on a read-only file system`, "Write somewhere else in the workspace."],
  };
  const [code, text, hint] = known[errno ?? ""] ??
    ["io_error", `${doing} ${shown} failed: ${message}`, "Try again; if it fails the same way, tell the user."];
  return new ToolError(text, {
    code,
    recoveryHint: hint,
    details: { path: real, errno, doing, message },
    cause: error,
  });
}
