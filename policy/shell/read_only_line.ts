/**
 * Which command lines the sandbox may run with the workspace read-only: a
 * line the allowlist allowed on its own, all of whose commands are readers
 * (listing, reading, searching and printing files, as the flag rules allow
 * them) or `cd`, and whose redirections name no file but the standard
 * streams' devices. Such a line is given no writable workspace, so its change
 * report is empty by construction and needs no scans (`policy/_process_door.ts`).
 *
 * The judgement decides only what is mounted writable, never what may run: a
 * reader this misjudges fails to write (`Read-only file system`) and changes
 * nothing, which the empty report then says truly.
 *
 * @module
 */

import { READER_COMMANDS } from "./allowlist.ts";
import type { CommandAuthorization } from "./authorize_command.ts";

// READER_COMMANDS as a set, for the lookup of each command.
const READERS: ReadonlySet<string> = new Set(READER_COMMANDS);

// What a redirection may name on a read-only line: the devices of the standard streams and the bit bucket.
const STREAM_DEVICES = new Set(["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"]);

/**
 * Whether the command line that `authorization` allowed writes nothing: the
 * allowlist alone allowed it (no person, rule or assessor), every command is
 * a reader of {@linkcode READER_COMMANDS} or `cd`, and nothing it writes is a
 * file (a redirection to `/dev/null` or a standard stream only).
 *
 * @example
 * ```ts ignore
 * import { authorizeCommand, isReadOnlyLine } from "@toolfence/policy";
 * const authorization = await authorizeCommand(options, "grep -rn TODO src | head");
 * console.log(isReadOnlyLine(authorization)); // true
 * ```
 */
export function isReadOnlyLine(authorization: CommandAuthorization): boolean {
  const check = authorization.check;
  if (authorization.via !== "allowlist" || check.verdict !== "allow" || !check.parsed) return false;
  const readers = check.commands.every((command) =>
    command.ok &&
    (command.allowedBy === undefined ? command.words[0] === "cd" : READERS.has(command.allowedBy))
  );
  return readers &&
    check.paths.every((p) => p.access !== "write" || (p.path !== undefined && STREAM_DEVICES.has(p.path)));
}
