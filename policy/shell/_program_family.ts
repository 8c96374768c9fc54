/**
 * The name a program is known by in the analysis's lists of runners, editors and interpreters, whatever name it was
 * started under. Systems install the same program under several names: a version in the name (`python3.11`,
 * `perl5.36.0`, `tclsh8.6`, `lua5.4`, `gcc-12`), a build after a dot (`vim.basic`, `vim.tiny`), a cross tool's
 * target before the name (`x86_64-linux-gnu-gcc`), and names of their own that
 * lead to it (`nodejs`, Debian's `editor`, `pager`, `vimdiff`, `rview`). A list that names `python3` or `vi` must
 * see those too: `python3.11 -c ...` runs code as `python3 -c ...` does, and `editor -es -c ...` as `vim` does.
 *
 * @module
 */

/** Names that lead to another program of the lists, by that program's name. */
const ALIASES: ReadonlyMap<string, string> = new Map([
  ["nodejs", "node"],
  ["pypy", "python"],
  ["pypy3", "python3"],
  // Debian's alternatives and vim's other faces: each edits files and runs commands (`:!cmd`, `-c`).
  ...["editor", "sensible-editor", "select-editor", "nvi", "elvis", "vile", "vis"].map((name) => [name, "vi"] as const),
  ...[
    "vimdiff",
    "rvim",
    "rview",
    "gvim",
    "gview",
    "gvimdiff",
    "rgvim",
    "rgview",
    "evim",
    "eview",
    "vimx",
    "vimtutor",
  ].map((name) => [name, "vim"] as const),
  ...["pager", "sensible-pager", "pg", "lessfile", "lesspipe"].map((name) => [name, "less"] as const),
]);

/** A name with a version after its stem (`python3.11`, `perl5.36-x86_64-linux-gnu`, `zsh-5.9`) or a build after a dot. */
const VERSIONED = /^([A-Za-z][A-Za-z_+-]*?[A-Za-z+])-?[0-9]+(?:\.[0-9]+)*(?:[-.][A-Za-z0-9_.-]*)?$/;
const DOTTED = /^([A-Za-z][A-Za-z0-9_-]*?)\.[A-Za-z0-9_]+$/;
/** A cross tool's target before its name (`x86_64-linux-gnu-gcc-12`, `aarch64-linux-gnu-ld.bfd`). */
const TARGETED =
  /^(?:x86_64|i[3-6]86|aarch64|arm[a-z0-9]*|riscv[0-9]+|powerpc[a-z0-9]*|ppc[a-z0-9]*|s390x|mips[a-z0-9]*|loongarch64|sparc[a-z0-9]*)-[A-Za-z0-9_]+(?:-[A-Za-z0-9_]+)?-(.+)$/;

/**
 * The names under which `name` may be listed: itself, then the program it is another name of, then its stem without a
 * version or build, each only when `listed` holds it (a name that is listed itself is only itself: `x86_64`,
 * `python3`).
 *
 * @example
 * ```ts
 * import { listedName } from "./_program_family.ts";
 * const listed = (name: string) => ["python3", "python", "vim", "vi"].includes(name);
 * listedName("python3.11", listed); // "python"
 * listedName("vim.basic", listed); // "vim"
 * listedName("editor", listed); // "vi"
 * listedName("base64", listed); // undefined
 * ```
 */
export function listedName(name: string, listed: (name: string) => boolean): string | undefined {
  if (listed(name)) return name;
  const untargeted = TARGETED.exec(name)?.[1];
  if (untargeted !== undefined) return listedName(untargeted, listed);
  const alias = ALIASES.get(name);
  if (alias !== undefined && listed(alias)) return alias;
  for (const pattern of [VERSIONED, DOTTED]) {
    const stem = pattern.exec(name)?.[1];
    if (stem === undefined) continue;
    if (listed(stem)) return stem;
    const stemAlias = ALIASES.get(stem);
    if (stemAlias !== undefined && listed(stemAlias)) return stemAlias;
  }
  return undefined;
}
