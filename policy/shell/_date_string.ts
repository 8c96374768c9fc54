/**
 * The file a date string opens. GNU's date parser (gnulib's parse_datetime:
 * `date -d`, `touch -d`, `find -newermt`, `tar --newer`) takes a leading
 * `TZ="NAME"` as the time zone of the rest, and glibc opens NAME as a zone
 * file: an absolute NAME as it is, another below /usr/share/zoneinfo, `..`
 * and all (`TZ="../../../tmp/x"` opens /tmp/x). What it prints then depends on
 * the file, so a date string reads a file as surely as an operand does.
 *
 * @module
 */
import path from "node:path";
import type { PathOperand } from "./_path_operands.ts";

/** Where glibc looks for a zone named by a relative name (TZDIR unset, as in the commands' environment). */
const ZONE_FOLDER = "/usr/share/zoneinfo";

/**
 * The zone file a date string's `TZ="..."` opens, as a read for the path rules: none for a zone of the system's
 * zone folder (`TZ="Europe/Paris"`) or a string without one; a string only the run knows may hold one.
 *
 * @example
 * ```ts
 * import { dateStringFiles } from "./_date_string.ts";
 * dateStringFiles('TZ="/etc/x" now', "date -d"); // [{ value: "/etc/x", access: "read", origin: "date -d (TZ=)" }]
 * dateStringFiles('TZ="Asia/Tokyo" now', "date -d"); // []
 * ```
 */
export function dateStringFiles(value: string | undefined, origin: string): PathOperand[] {
  if (value === undefined) return [{ value: undefined, access: "read", origin }];
  const name = zoneName(value);
  if (name === undefined) return [];
  // glibc drops one leading `:` (the POSIX way of naming a file) and reads the rest as a file name first.
  const file = name.startsWith(":") ? name.slice(1) : name;
  const resolved = path.posix.resolve(ZONE_FOLDER, file);
  if (resolved === ZONE_FOLDER || resolved.startsWith(`${ZONE_FOLDER}/`)) return [];
  return [{ value: resolved, access: "read", origin: `${origin} (TZ=)` }];
}

/** The NAME of a leading `TZ="NAME"` (after C white space; `\\` and `\"` escape), as parse_datetime reads it. */
function zoneName(value: string): string | undefined {
  const start = value.replace(/^[ \t\n\v\f\r]+/, "");
  if (!start.startsWith('TZ="')) return undefined;
  let name = "";
  for (let i = 4; i < start.length; i++) {
    const char = start[i];
    if (char === '"') return name;
    if (char === "\\") {
      const next = start[i + 1];
      // parse_datetime gives up on any other escape: the string is then no date, and no zone is read.
      if (next !== "\\" && next !== '"') return undefined;
      name += next;
      i++;
      continue;
    }
    name += char;
  }
  return undefined;
}
