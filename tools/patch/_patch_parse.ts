// Reading patches in the two forms models write: unified diffs (plain or git
// style, one or many files, `a/` `b/` prefixes) and the `*** Begin Patch`
// envelope of OpenAI's apply_patch. Both become the same list of file
// changes. Hunk line counts in unified headers are not trusted (models often
// get them wrong): a hunk runs until the next header.

import { ToolError } from "@toolfence/core";

/** One line of a hunk. */
export interface HunkLine {
  op: " " | "-" | "+";
  text: string;
}

/** One hunk: lines to find (context and removals) and what replaces them. */
export interface Hunk {
  /** 1-based line where the old lines start, from a unified header. */
  oldStart?: number;
  /** `*** Begin Patch` anchors (`@@ class Foo`): lines to find, in order, before the hunk. */
  anchors: string[];
  lines: HunkLine[];
  /** The hunk must match at the end of the file (`*** End of File`). */
  atEnd: boolean;
  /** `\ No newline at end of file` after an old line / after a new line. */
  oldNoNewline: boolean;
  newNoNewline: boolean;
  /** Line of the patch where the hunk starts, for messages. */
  patchLine: number;
}

/** A change to one file. */
export interface FilePatch {
  kind: "add" | "delete" | "update";
  /** Path as written in the patch (prefixes stripped). */
  path: string;
  /** New path when the file is also moved or renamed. */
  moveTo?: string;
  hunks: Hunk[];
  /** Line of the patch where this file's section starts. */
  patchLine: number;
}

/** Which form a patch is in. */
export type PatchFormat = "unified" | "begin-patch";

function parseError(message: string, line?: number): ToolError {
  return new ToolError(`Cannot read the patch: ${message}${line !== undefined ? ` (patch line ${line})` : ""}`, {
    code: "invalid_patch",
    kind: "semantic",
    recoveryHint: "Send a unified diff (--- a/x, +++ b/x, @@ hunks) or a *** Begin Patch ... *** End Patch block.",
    details: { line },
  });
}

/** Parses a patch in either form. */
export function parsePatch(patch: string): { format: PatchFormat; files: FilePatch[] } {
  const lines = patch.replace(/\r\n/g, "\n").split("\n");
  const begin = lines.findIndex((l) => l.trim() === "*** Begin Patch");
  const files = begin !== -1 ? parseBeginPatch(lines, begin) : parseUnified(lines);
  if (files.length === 0) throw parseError("it changes no file");
  return { format: begin !== -1 ? "begin-patch" : "unified", files };
}

function newHunk(patchLine: number, oldStart?: number): Hunk {
  return { oldStart, anchors: [], lines: [], atEnd: false, oldNoNewline: false, newNoNewline: false, patchLine };
}

// ---- *** Begin Patch -------------------------------------------------------

function parseBeginPatch(lines: string[], begin: number): FilePatch[] {
  const end = lines.findIndex((l, i) => i > begin && l.trim() === "*** End Patch");
  if (end === -1) throw parseError("*** Begin Patch has no *** End Patch", begin + 1);
  const files: FilePatch[] = [];
  let i = begin + 1;
  const header = (line: string, name: string) => line.startsWith(`*** ${name}: `) ? line.slice(name.length + 6) : null;
  while (i < end) {
    const line = lines[i];
    let p: string | null;
    if (line.trim() === "") {
      i++;
    } else if ((p = header(line, "Add File")) !== null) {
      const file: FilePatch = { kind: "add", path: p.trim(), hunks: [], patchLine: i + 1 };
      const hunk = newHunk(i + 2);
      i++;
      while (i < end && !lines[i].startsWith("*** ")) {
        if (!lines[i].startsWith("+")) throw parseError(`every line of an added file starts with "+"`, i + 1);
        hunk.lines.push({ op: "+", text: lines[i].slice(1) });
        i++;
      }
      file.hunks.push(hunk);
      files.push(file);
    } else if ((p = header(line, "Delete File")) !== null) {
      files.push({ kind: "delete", path: p.trim(), hunks: [], patchLine: i + 1 });
      i++;
    } else if ((p = header(line, "Update File")) !== null) {
      const file: FilePatch = { kind: "update", path: p.trim(), hunks: [], patchLine: i + 1 };
      i++;
      const move = i < end ? header(lines[i], "Move to") : null;
      if (move !== null) {
        file.moveTo = move.trim();
        i++;
      }
      let hunk: Hunk | undefined;
      while (i < end && (!lines[i].startsWith("*** ") || lines[i].trim() === "*** End of File")) {
        const l = lines[i];
        if (l.trim() === "*** End of File") {
          if (!hunk) throw parseError("*** End of File before any hunk", i + 1);
          hunk.atEnd = true;
        } else if (l.startsWith("@@")) {
          if (!hunk || hunk.lines.length > 0) file.hunks.push(hunk = newHunk(i + 1));
          const anchor = l.slice(2).trim();
          if (anchor !== "") hunk.anchors.push(anchor);
        } else if (l === "" || l[0] === " " || l[0] === "-" || l[0] === "+") {
          if (!hunk) file.hunks.push(hunk = newHunk(i + 1));
          hunk.lines.push({ op: l === "" ? " " : l[0] as HunkLine["op"], text: l.slice(1) });
        } else {
          throw parseError(`unexpected line ${JSON.stringify(l)}: hunk lines start with " ", "-" or "+"`, i + 1);
        }
        i++;
      }
      file.hunks = file.hunks.filter((h) => h.lines.length > 0);
      if (file.hunks.length === 0 && file.moveTo === undefined) {
        throw parseError(`*** Update File: ${file.path} has no changes`, file.patchLine);
      }
      files.push(file);
    } else {
      throw parseError(`unexpected line ${JSON.stringify(line)}`, i + 1);
    }
  }
  return files;
}

// ---- unified diff ----------------------------------------------------------

const HUNK_HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

function unquote(name: string): string {
  if (!name.startsWith('"')) return name;
  const body = name.slice(1, name.lastIndexOf('"'));
  const bytes: number[] = [];
  const encoder = new TextEncoder();
  for (let i = 0; i < body.length; i++) {
    if (body[i] !== "\\") {
      bytes.push(...encoder.encode(body[i]));
      continue;
    }
    const next = body[++i];
    const simple: Record<string, number> = { n: 10, t: 9, r: 13, '"': 34, "\\": 92, a: 7, b: 8, f: 12, v: 11 };
    if (next in simple) bytes.push(simple[next]);
    else if (/[0-7]/.test(next)) {
      bytes.push(parseInt(body.slice(i, i + 3), 8));
      i += 2;
    } else bytes.push(...encoder.encode(next));
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}

function headerName(rest: string): string {
  const name = rest.includes("\t") ? rest.slice(0, rest.indexOf("\t")) : rest.trimEnd();
  return unquote(name);
}

function gitHeaderNames(rest: string): [string, string] | undefined {
  if (rest.startsWith('"')) {
    const close = rest.indexOf('" ', 1);
    if (close === -1) return undefined;
    return [unquote(rest.slice(0, close + 1)), unquote(rest.slice(close + 2))];
  }
  // `a/x b/x`: split where both halves name the same file, else in the middle.
  const splits: number[] = [];
  for (let i = rest.indexOf(" b/"); i !== -1; i = rest.indexOf(" b/", i + 1)) splits.push(i);
  if (splits.length === 0) return undefined;
  const same = splits.find((i) => rest.slice(2, i) === rest.slice(i + 3));
  const at = same ?? splits[splits.length >> 1];
  return [rest.slice(0, at), rest.slice(at + 1)];
}

interface Section {
  oldName?: string;
  newName?: string;
  created: boolean;
  deleted: boolean;
  renameFrom?: string;
  renameTo?: string;
  binary: boolean;
  hunks: Hunk[];
  line: number;
  git: boolean;
}

function isHunkLine(l: string | undefined): boolean {
  return l !== undefined && (l[0] === " " || l[0] === "+" || l[0] === "-" || l[0] === "\\");
}

function parseUnified(lines: string[]): FilePatch[] {
  const sections: Section[] = [];
  let current: Section | undefined;
  const start = (line: number, git: boolean) => {
    current = { created: false, deleted: false, binary: false, hunks: [], line, git };
    sections.push(current);
    return current;
  };
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (line.startsWith("diff --git ")) {
      const section = start(i + 1, true);
      const names = gitHeaderNames(line.slice(11));
      if (names) [section.oldName, section.newName] = names;
      i++;
      while (i < lines.length && !/^(--- |@@|diff )/.test(lines[i])) {
        const ext = lines[i];
        if (ext.startsWith("new file mode")) section.created = true;
        else if (ext.startsWith("deleted file mode")) section.deleted = true;
        else if (ext.startsWith("rename from ")) section.renameFrom = unquote(ext.slice(12));
        else if (ext.startsWith("rename to ")) section.renameTo = unquote(ext.slice(10));
        else if (ext.startsWith("Binary files ") || ext.startsWith("GIT binary patch")) section.binary = true;
        i++;
      }
      continue;
    }
    if (line.startsWith("--- ") && lines[i + 1]?.startsWith("+++ ")) {
      const section = current && current.git && current.hunks.length === 0 && current.oldName !== undefined &&
          !current.binary
        ? current
        : start(i + 1, false);
      section.oldName = headerName(line.slice(4));
      section.newName = headerName(lines[i + 1].slice(4));
      i += 2;
      continue;
    }
    if (line.startsWith("@@")) {
      const m = HUNK_HEADER.exec(line);
      if (!m) throw parseError(`malformed hunk header ${JSON.stringify(line)}`, i + 1);
      if (!current) throw parseError("a hunk comes before any --- / +++ file header", i + 1);
      const oldCount = m[2] === undefined ? 1 : Number(m[2]);
      // `-5,0` means "after line 5": the old lines start at 6.
      const hunk = newHunk(i + 1, Number(m[1]) + (oldCount === 0 ? 1 : 0));
      i++;
      while (i < lines.length) {
        const l = lines[i];
        if (l.startsWith("--- ") && lines[i + 1]?.startsWith("+++ ")) break;
        if (l === "") {
          // A blank line is an empty context line if more hunk lines follow it.
          let k = i;
          while (k < lines.length && lines[k] === "") k++;
          if (!isHunkLine(lines[k]) || (lines[k].startsWith("--- ") && lines[k + 1]?.startsWith("+++ "))) break;
          hunk.lines.push({ op: " ", text: "" });
        } else if (l[0] === "\\") {
          const previous = hunk.lines.at(-1);
          if (previous?.op === "-") hunk.oldNoNewline = true;
          else if (previous?.op === "+") hunk.newNoNewline = true;
          else if (previous) hunk.oldNoNewline = hunk.newNoNewline = true;
        } else if (l[0] === " " || l[0] === "+" || l[0] === "-") {
          hunk.lines.push({ op: l[0], text: l.slice(1) });
        } else break;
        i++;
      }
      current.hunks.push(hunk);
      continue;
    }
    i++; // index lines, "Index:", prose between files
  }
  return sections.map(toFilePatch);
}

function toFilePatch(section: Section): FilePatch {
  if (section.binary) {
    throw parseError(
      `the change to ${section.newName ?? section.oldName} is binary; binary patches are refused`,
      section.line,
    );
  }
  let oldName = section.renameFrom !== undefined ? "a/" + section.renameFrom : section.oldName;
  let newName = section.renameTo !== undefined ? "b/" + section.renameTo : section.newName;
  if (oldName === undefined || newName === undefined) {
    throw parseError("a file section has no file names", section.line);
  }
  const strip = (oldName === "/dev/null" || oldName.startsWith("a/")) &&
    (newName === "/dev/null" || newName.startsWith("b/"));
  if (strip) {
    if (oldName !== "/dev/null") oldName = oldName.slice(2);
    if (newName !== "/dev/null") newName = newName.slice(2);
  }
  if (oldName === "/dev/null" && newName === "/dev/null") throw parseError("both sides are /dev/null", section.line);
  const created = section.created || oldName === "/dev/null";
  const deleted = section.deleted || newName === "/dev/null";
  if (created) return { kind: "add", path: newName, hunks: section.hunks, patchLine: section.line };
  if (deleted) return { kind: "delete", path: oldName, hunks: section.hunks, patchLine: section.line };
  if (section.hunks.length === 0 && oldName === newName) {
    throw parseError(`the section for ${oldName} has no hunks`, section.line);
  }
  return {
    kind: "update",
    path: oldName,
    ...(newName !== oldName ? { moveTo: newName } : {}),
    hunks: section.hunks,
    patchLine: section.line,
  };
}
