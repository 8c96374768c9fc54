/**
 * The catalogue of error codes: every code a `ToolError` carries, with what it
 * means and its default kind, status and recoverability. A `ToolError` built
 * with only a code takes its defaults from here; a thrower may still pass any
 * field to override them for one case.
 *
 * @module
 */

import type { ErrorKind, ThrownStatus } from "./errors.ts";

/** What one code means, and the outcome it gives unless the thrower says otherwise. */
export interface ErrorCodeInfo {
  /** One sentence for the developer: when the code is used. */
  readonly meaning: string;
  /** The layer of the failure. */
  readonly kind: ErrorKind;
  /** `skipped` for refusals that did nothing, else `error`. */
  readonly status: ThrownStatus;
  /** Whether the model can fix the call and try again. */
  readonly recoverable: boolean;
}

/** A code in the catalogue. */
export type ErrorCode =
  | "unknown_tool"
  | "invalid_arguments"
  | "arguments_too_complex"
  | "not_approved"
  | "timeout"
  | "cancelled"
  | "not_serializable"
  | "invalid_output"
  | "tool_error"
  | "outside_workspace"
  | "outside_directory"
  | "fence_denied"
  | "permission_denied"
  | "question_unanswered"
  | "path_changed"
  | "path_unresolvable"
  | "symlink_loop"
  | "symlink_target"
  | "invalid_path"
  | "forbidden_env"
  | "sandbox_unavailable"
  | "unsupported_runtime"
  | "workspace_missing"
  | "workspace_too_large"
  | "output_unavailable"
  | "import_outside_workspace"
  | "invalid_text"
  | "depth_limit"
  | "not_found"
  | "already_exists"
  | "not_directory"
  | "not_a_directory"
  | "is_directory"
  | "not_a_file"
  | "not_regular_file"
  | "directory_not_empty"
  | "binary_file"
  | "not_utf8"
  | "unsupported_encoding"
  | "file_too_large"
  | "too_large"
  | "hash_conflict"
  | "os_permission_denied"
  | "no_space"
  | "read_only_filesystem"
  | "io_error"
  | "invalid_destination"
  | "invalid_window"
  | "invalid_image"
  | "unsupported_image"
  | "image_too_large"
  | "invalid_patch"
  | "patch_conflict"
  | "no_match"
  | "ambiguous_match"
  | "empty_old_text"
  | "identical_texts"
  | "invalid_pattern"
  | "invalid_glob"
  | "search_failed"
  | "engine_unavailable"
  | "invalid_env"
  | "spawn_failed"
  | "command_start_failed"
  | "command_result_failed"
  | "checker_failed"
  | "unknown_job"
  | "too_many_jobs"
  | "too_many_commands"
  | "invalid_artifact_id"
  | "unknown_artifact"
  | "artifact_corrupted"
  | "binary_artifact"
  | "unknown_language"
  | "diff_too_large"
  | "deno_not_found"
  | "invalid_time_zone"
  | "invalid_subagent"
  | "subagent_failed"
  | "no_model"
  | "peer_missing"
  | "session_closed"
  | "browser_not_found"
  | "browser_launch_failed"
  | "browser_crashed"
  | "too_many_tabs"
  | "too_many_browsers"
  | "page_unresponsive"
  | "invalid_url"
  | "url_not_allowed"
  | "dns_failed"
  | "navigation_failed"
  | "invalid_ref"
  | "ref_not_found"
  | "page_changed"
  | "script_error"
  | "invalid_key"
  | "tab_not_found"
  | "upload_too_large"
  | "wait_timeout"
  | "digest_mismatch"
  | "path_not_approved"
  | "host_changed"
  | "publish_failed"
  | "tool_failed"
  | "tool_disabled"
  | "capability_missing"
  | "command_failed"
  | "command_killed"
  | "resource_limit"
  | "invalid_artifact_ref"
  | "undo_conflict"
  | "undo_unavailable"
  | "unknown_checkpoint"
  | "replica_lost";

/**
 * The catalogue, by code.
 *
 * @example
 * ```ts
 * import { ERROR_CODES } from "@toolfence/core";
 * console.log(ERROR_CODES.permission_denied.status); // "skipped"
 * ```
 */
export const ERROR_CODES: Readonly<Record<ErrorCode, ErrorCodeInfo>> = Object.freeze(
  {
    unknown_tool: {
      meaning: "No enabled tool has that name; the message suggests the closest ones.",
      kind: "semantic",
      status: "error",
      recoverable: true,
    },
    invalid_arguments: {
      meaning: "The arguments are not one JSON object, or fail the tool's schema; the message names each issue.",
      kind: "semantic",
      status: "error",
      recoverable: true,
    },
    arguments_too_complex: {
      meaning: "Validating the arguments ran past its work budget (a recursive schema met a deeply nested or " +
        "ambiguous value); the message names the limit and the path where it stopped.",
      kind: "semantic",
      status: "error",
      recoverable: true,
    },
    not_approved: {
      meaning: "A person (or the host) did not approve a tool that needs approval.",
      kind: "policy",
      status: "skipped",
      recoverable: true,
    },
    timeout: {
      meaning: "An attempt ran past its deadline (the result's status is `timed_out`).",
      kind: "execution",
      status: "error",
      recoverable: true,
    },
    cancelled: {
      meaning: "The caller, a fail-fast batch or a timeout cancelled the call (status `cancelled`).",
      kind: "execution",
      status: "error",
      recoverable: true,
    },
    not_serializable: {
      meaning: "The tool returned a value that has no lossless JSON form.",
      kind: "execution",
      status: "error",
      recoverable: false,
    },
    invalid_output: {
      meaning:
        "The tool's output does not match the output schema it declares; `details.path` names where. A fault of the tool, never passed on.",
      kind: "execution",
      status: "error",
      recoverable: false,
    },
    tool_error: {
      meaning: "The tool threw something that is not a ToolError; the only code that is retried.",
      kind: "execution",
      status: "error",
      recoverable: true,
    },
    outside_workspace: {
      meaning: "The path resolves outside the workdir and the session temp dir.",
      kind: "policy",
      status: "error",
      recoverable: true,
    },
    outside_directory: {
      meaning: "The path resolves outside the folder the operation is confined to.",
      kind: "policy",
      status: "error",
      recoverable: true,
    },
    fence_denied: {
      meaning:
        "The runtime's own permission flags (Deno --allow-*, Node's permission model) close the operation; the message names the flag.",
      kind: "policy",
      status: "error",
      recoverable: false,
    },
    permission_denied: {
      meaning: "The write-permission or command policy refused the operation, or a person denied it.",
      kind: "policy",
      status: "skipped",
      recoverable: false,
    },
    question_unanswered: {
      meaning: "A question waited in the web console and no person answered it in time; nothing was done.",
      kind: "policy",
      status: "skipped",
      recoverable: false,
    },
    path_changed: {
      meaning: "The path changed between its check and its use (a swapped-in symlink).",
      kind: "policy",
      status: "error",
      recoverable: false,
    },
    path_unresolvable: {
      meaning: "The path could not be resolved (a component cannot be read).",
      kind: "execution",
      status: "error",
      recoverable: true,
    },
    symlink_loop: {
      meaning: "Resolving the path met a symlink loop or too many links.",
      kind: "semantic",
      status: "error",
      recoverable: true,
    },
    symlink_target: {
      meaning: "A symlink points where the operation may not follow it.",
      kind: "execution",
      status: "error",
      recoverable: true,
    },
    invalid_path: {
      meaning: "The path is malformed (empty, NUL bytes, not a string the platform accepts).",
      kind: "semantic",
      status: "error",
      recoverable: true,
    },
    forbidden_env: {
      meaning: "The command sets an environment variable the policy forbids.",
      kind: "policy",
      status: "skipped",
      recoverable: true,
    },
    unsupported_runtime: {
      meaning:
        "This runtime cannot do the operation safely here (for example a confined write in a Node worker thread).",
      kind: "execution",
      status: "error",
      recoverable: false,
    },
    workspace_missing: {
      meaning:
        "The workspace folder or the session temp dir was removed or replaced while the session ran; it is never re-created.",
      kind: "policy",
      status: "error",
      recoverable: false,
    },
    workspace_too_large: {
      meaning:
        "The workspace holds more entries than the sandbox searches for protected paths, so a command that may write there is refused.",
      kind: "policy",
      status: "error",
      recoverable: false,
    },
    output_unavailable: {
      meaning: "A command's captured output could not be read back (its capture file vanished or could not be opened).",
      kind: "execution",
      status: "error",
      recoverable: false,
    },
    import_outside_workspace: {
      meaning: "A checked file imports a module outside the workspace, which the checker may not read.",
      kind: "policy",
      status: "error",
      recoverable: false,
    },
    invalid_text: {
      meaning: "An argument holds a lone UTF-16 surrogate, which no file or protocol can carry unchanged.",
      kind: "semantic",
      status: "error",
      recoverable: true,
    },
    sandbox_unavailable: {
      meaning: "The OS sandbox is required but cannot run here.",
      kind: "policy",
      status: "error",
      recoverable: false,
    },
    depth_limit: {
      meaning: "Sub-agents may not start more sub-agents at this depth.",
      kind: "policy",
      status: "skipped",
      recoverable: false,
    },
    not_found: { meaning: "Nothing exists at the path.", kind: "execution", status: "error", recoverable: true },
    already_exists: {
      meaning: "Something already exists where the operation would create it.",
      kind: "execution",
      status: "error",
      recoverable: true,
    },
    not_directory: {
      meaning: "A part of the path, or the target, is not a directory.",
      kind: "execution",
      status: "error",
      recoverable: true,
    },
    not_a_directory: {
      meaning: "The path names a file where a directory is needed.",
      kind: "semantic",
      status: "error",
      recoverable: true,
    },
    is_directory: {
      meaning: "The path names a directory where a file is needed.",
      kind: "execution",
      status: "error",
      recoverable: true,
    },
    not_a_file: { meaning: "The path is not a regular file.", kind: "semantic", status: "error", recoverable: true },
    not_regular_file: {
      meaning: "The path is a special file (device, socket, FIFO) or not the kind the tool reads.",
      kind: "execution",
      status: "error",
      recoverable: true,
    },
    directory_not_empty: {
      meaning: "The directory has entries and the operation needs it empty.",
      kind: "execution",
      status: "error",
      recoverable: true,
    },
    binary_file: {
      meaning: "The file is binary where text is needed.",
      kind: "execution",
      status: "error",
      recoverable: true,
    },
    not_utf8: { meaning: "The file is not valid UTF-8.", kind: "execution", status: "error", recoverable: true },
    unsupported_encoding: {
      meaning: "The file's text encoding is not one the tool reads.",
      kind: "execution",
      status: "error",
      recoverable: true,
    },
    file_too_large: {
      meaning: "The file is larger than the tool reads in one call.",
      kind: "semantic",
      status: "error",
      recoverable: false,
    },
    too_large: {
      meaning: "The content is larger than the operation allows.",
      kind: "execution",
      status: "error",
      recoverable: false,
    },
    hash_conflict: {
      meaning: "The file changed since it was read (its hash differs); read it again.",
      kind: "execution",
      status: "error",
      recoverable: true,
    },
    os_permission_denied: {
      meaning: "The operating system refused the operation (EACCES, EPERM).",
      kind: "execution",
      status: "error",
      recoverable: true,
    },
    no_space: { meaning: "The device is full.", kind: "execution", status: "error", recoverable: true },
    read_only_filesystem: {
      meaning: "The path is on a read-only file system.",
      kind: "execution",
      status: "error",
      recoverable: true,
    },
    io_error: {
      meaning: "Another operating-system error; details carry the errno.",
      kind: "execution",
      status: "error",
      recoverable: true,
    },
    invalid_destination: {
      meaning: "The destination of a copy or move is not usable (the source itself, inside the source, ...).",
      kind: "execution",
      status: "error",
      recoverable: true,
    },
    invalid_window: {
      meaning: "The offset and limit of a read do not name lines of the file.",
      kind: "semantic",
      status: "error",
      recoverable: true,
    },
    invalid_image: {
      meaning: "The bytes are not a readable PNG, JPEG, WebP or GIF.",
      kind: "semantic",
      status: "error",
      recoverable: true,
    },
    unsupported_image: {
      meaning: "The image format is not one the model can be sent.",
      kind: "execution",
      status: "error",
      recoverable: true,
    },
    image_too_large: {
      meaning:
        "The image is larger than 3.75 MiB (its base64 over the 5 MB a provider takes per image), or over 2000 px on a side.",
      kind: "semantic",
      status: "error",
      recoverable: true,
    },
    invalid_patch: { meaning: "The patch does not parse.", kind: "semantic", status: "error", recoverable: true },
    patch_conflict: {
      meaning: "A hunk of the patch does not match the file.",
      kind: "execution",
      status: "error",
      recoverable: true,
    },
    no_match: {
      meaning: "The text to replace does not occur in the file.",
      kind: "execution",
      status: "error",
      recoverable: true,
    },
    ambiguous_match: {
      meaning: "The text to replace occurs more than once.",
      kind: "execution",
      status: "error",
      recoverable: true,
    },
    empty_old_text: { meaning: "The text to replace is empty.", kind: "semantic", status: "error", recoverable: true },
    identical_texts: {
      meaning: "The replacement equals the text it replaces.",
      kind: "semantic",
      status: "error",
      recoverable: true,
    },
    invalid_pattern: {
      meaning: "The search pattern is not a valid regular expression.",
      kind: "semantic",
      status: "error",
      recoverable: true,
    },
    invalid_glob: { meaning: "The glob pattern is not valid.", kind: "semantic", status: "error", recoverable: true },
    search_failed: { meaning: "The search engine failed.", kind: "execution", status: "error", recoverable: true },
    engine_unavailable: {
      meaning: "The requested search engine is not installed or not allowed.",
      kind: "execution",
      status: "error",
      recoverable: false,
    },
    invalid_env: {
      meaning: "An environment variable name or value is malformed.",
      kind: "semantic",
      status: "error",
      recoverable: true,
    },
    spawn_failed: {
      meaning: "The process could not be started.",
      kind: "execution",
      status: "error",
      recoverable: false,
    },
    command_start_failed: {
      meaning: "A shell command could not be started for a reason of the runtime or the system (not the policy's " +
        "refusal); the message says which. It did not run.",
      kind: "execution",
      status: "error",
      recoverable: false,
    },
    command_result_failed: {
      meaning: "A shell command ran, but its output or exit status could not be collected; it may have had its " +
        "effects.",
      kind: "execution",
      status: "error",
      recoverable: false,
    },
    checker_failed: {
      meaning: "A checker (a type or syntax check's program) could not be run for a reason of the runtime or the " +
        "system; the message says which.",
      kind: "execution",
      status: "error",
      recoverable: false,
    },
    unknown_job: { meaning: "No background job has that id.", kind: "semantic", status: "error", recoverable: true },
    too_many_jobs: {
      meaning: "The session runs as many background jobs as it may.",
      kind: "execution",
      status: "error",
      recoverable: true,
    },
    too_many_commands: {
      meaning: "The session runs as many shell commands at once as it may (bash calls and background jobs together).",
      kind: "execution",
      status: "error",
      recoverable: true,
    },
    invalid_artifact_id: {
      meaning: "The artifact id is not `sha256:` and 64 hex digits.",
      kind: "semantic",
      status: "error",
      recoverable: true,
    },
    unknown_artifact: {
      meaning: "No artifact of this session has that id.",
      kind: "semantic",
      status: "error",
      recoverable: true,
    },
    artifact_corrupted: {
      meaning: "The artifact's bytes no longer match its hash.",
      kind: "execution",
      status: "error",
      recoverable: false,
    },
    binary_artifact: {
      meaning: "The artifact is binary where text is needed.",
      kind: "semantic",
      status: "error",
      recoverable: true,
    },
    unknown_language: {
      meaning: "The file's language is not one the checker knows.",
      kind: "semantic",
      status: "error",
      recoverable: true,
    },
    diff_too_large: {
      meaning: "The diff is larger than the tool returns.",
      kind: "execution",
      status: "error",
      recoverable: false,
    },
    deno_not_found: {
      meaning: "The deno binary is not on the PATH.",
      kind: "execution",
      status: "error",
      recoverable: false,
    },
    invalid_time_zone: {
      meaning: "The time zone is not an IANA name the runtime knows.",
      kind: "semantic",
      status: "error",
      recoverable: true,
    },
    invalid_subagent: {
      meaning: "The sub-agent getter returned something that is not an agent.",
      kind: "execution",
      status: "error",
      recoverable: false,
    },
    subagent_failed: { meaning: "The sub-agent failed.", kind: "execution", status: "error", recoverable: true },
    no_model: {
      meaning: "Sub-agents without a getter run with the session's model, and the session was given none " +
        "(new Session({ model }), or withSubagents(getter)).",
      kind: "execution",
      status: "error",
      recoverable: false,
    },
    peer_missing: {
      meaning: "An optional peer package this entry point or feature loads (a framework, the MCP SDK, " +
        "@opentelemetry/api) is not installed; the message names the package and range to install.",
      kind: "execution",
      status: "error",
      recoverable: false,
    },
    session_closed: {
      meaning: "The session was closed; no further calls run in it.",
      kind: "execution",
      status: "error",
      recoverable: false,
    },
    browser_not_found: {
      meaning: "No Chromium was found on PATH or at the configured path.",
      kind: "execution",
      status: "error",
      recoverable: false,
    },
    browser_launch_failed: {
      meaning: "The browser could not be started; the message says why.",
      kind: "execution",
      status: "error",
      recoverable: false,
    },
    browser_crashed: {
      meaning: "The browser crashed or was killed; the next browser call starts a new one.",
      kind: "execution",
      status: "error",
      recoverable: true,
    },
    too_many_tabs: {
      meaning: "The browser holds as many tabs as it may (20); close one first.",
      kind: "execution",
      status: "error",
      recoverable: true,
    },
    too_many_browsers: {
      meaning: "The workspace's sessions (a tenant's) run as many browsers at once as they may (4); close one first.",
      kind: "execution",
      status: "error",
      recoverable: true,
    },
    page_unresponsive: {
      meaning: "The page stopped responding (a script that never yields); its tab was closed, the next call opens one.",
      kind: "execution",
      status: "error",
      recoverable: true,
    },
    invalid_url: {
      meaning: "The URL cannot be parsed, or its scheme is not http, https or a workspace file.",
      kind: "semantic",
      status: "error",
      recoverable: true,
    },
    url_not_allowed: {
      meaning:
        "The network policy (network.allow, network.deny, the address classes) does not allow the destination, or the person declined it.",
      kind: "policy",
      status: "skipped",
      recoverable: false,
    },
    dns_failed: {
      meaning: "The host name of the destination does not resolve.",
      kind: "execution",
      status: "error",
      recoverable: true,
    },
    navigation_failed: {
      meaning: "The page could not be loaded (network error, refusal or timeout).",
      kind: "execution",
      status: "error",
      recoverable: true,
    },
    invalid_ref: {
      meaning: "The element reference is not of the form a browser snapshot gives (e12).",
      kind: "semantic",
      status: "error",
      recoverable: true,
    },
    ref_not_found: {
      meaning: "No element of the current page has that reference; take a new snapshot.",
      kind: "semantic",
      status: "error",
      recoverable: true,
    },
    page_changed: {
      meaning: "The page navigated elsewhere while the call was being judged or run.",
      kind: "execution",
      status: "error",
      recoverable: true,
    },
    script_error: {
      meaning: "The script given to browser_evaluate threw; the message has its error.",
      kind: "execution",
      status: "error",
      recoverable: true,
    },
    invalid_key: {
      meaning: "The key name is not one the browser knows (e.g. Enter, Control+A).",
      kind: "semantic",
      status: "error",
      recoverable: true,
    },
    tab_not_found: {
      meaning: "No browser tab has that index.",
      kind: "semantic",
      status: "error",
      recoverable: true,
    },
    upload_too_large: {
      meaning: "The files to upload are larger than the browser upload allows.",
      kind: "semantic",
      status: "error",
      recoverable: true,
    },
    wait_timeout: {
      meaning: "What browser_wait_for waited for did not happen in time.",
      kind: "execution",
      status: "error",
      recoverable: true,
    },
    digest_mismatch: {
      meaning:
        "A publication was refused: the scratch copy's input digest is not the one its caller approved; nothing was changed.",
      kind: "policy",
      status: "skipped",
      recoverable: false,
    },
    path_not_approved: {
      meaning: "A publication was refused: a path to publish lies outside the approved set; nothing was changed.",
      kind: "policy",
      status: "skipped",
      recoverable: true,
    },
    host_changed: {
      meaning:
        "A publication was refused: a workspace file changed since the scratch copy was made (each is named with its hashes); nothing was changed.",
      kind: "execution",
      status: "error",
      recoverable: false,
    },
    publish_failed: {
      meaning: "A publication failed part-way; every change already made was undone unless the details say otherwise.",
      kind: "execution",
      status: "error",
      recoverable: true,
    },
    tool_failed: {
      meaning:
        "The tool ended the call as a failure by returning one (`fail()`, a failed result, or `success: false`).",
      kind: "execution",
      status: "error",
      recoverable: true,
    },
    tool_disabled: {
      meaning: "The tool is registered but disabled in this toolbox; it cannot be called until it is enabled.",
      kind: "semantic",
      status: "error",
      recoverable: false,
    },
    capability_missing: {
      meaning: "The tool requires a model capability (e.g. `vision`) the session does not have, so it is not offered.",
      kind: "semantic",
      status: "error",
      recoverable: false,
    },
    command_failed: {
      meaning: "The command ran and exited with a non-zero code; its stdout, stderr and exit code are in the output.",
      kind: "execution",
      status: "error",
      recoverable: true,
    },
    command_killed: {
      meaning: "A signal ended the command (the message names it); its output so far is in the output.",
      kind: "execution",
      status: "error",
      recoverable: true,
    },
    resource_limit: {
      meaning:
        "The command hit one of the sandbox's resource limits (memory, CPU time, file size, processes, open files, " +
        "the private /tmp); the message names the limit and its value, and its output so far is in the output.",
      kind: "execution",
      status: "error",
      recoverable: true,
    },
    invalid_artifact_ref: {
      meaning: "A value given as an artifact reference is missing a field or has one of the wrong type or form.",
      kind: "semantic",
      status: "error",
      recoverable: true,
    },
    undo_conflict: {
      meaning:
        "An undo or checkpoint restore was refused: a file it would restore was changed since by something else.",
      kind: "execution",
      status: "error",
      recoverable: false,
    },
    undo_unavailable: {
      meaning: "An undo or checkpoint restore was refused: a change has no before-image or names no known call.",
      kind: "execution",
      status: "error",
      recoverable: false,
    },
    unknown_checkpoint: {
      meaning: "No checkpoint with that id in the session's file history.",
      kind: "semantic",
      status: "error",
      recoverable: false,
    },
    replica_lost: {
      meaning:
        "The server replica running the call stopped (was killed or lost) before the call ended; another replica of the fleet answered for it (status `cancelled`, effects unknown).",
      kind: "execution",
      status: "error",
      recoverable: true,
    },
  },
);

/** The defaults of a code that is not in the catalogue (a tool's own). */
const UNCATALOGUED: ErrorCodeInfo = Object.freeze({
  meaning: "A code of the tool's own.",
  kind: "execution",
  status: "error",
  recoverable: true,
});

/**
 * The catalogue entry of `code`, or the defaults of an uncatalogued code
 * (`execution`, `error`, recoverable).
 *
 * @example
 * ```ts
 * import { errorCodeInfo } from "@toolfence/core";
 * console.log(errorCodeInfo("outside_workspace").kind); // "policy"
 * console.log(errorCodeInfo("my_tool_failed").kind); // "execution"
 * ```
 */
export function errorCodeInfo(code: string): ErrorCodeInfo {
  return Object.hasOwn(ERROR_CODES, code) ? ERROR_CODES[code as ErrorCode] : UNCATALOGUED;
}

/**
 * Whether `code` is in the catalogue.
 *
 * @example
 * ```ts
 * import { isCataloguedCode } from "@toolfence/core";
 * console.log(isCataloguedCode("timeout")); // true
 * ```
 */
export function isCataloguedCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERROR_CODES, code);
}
