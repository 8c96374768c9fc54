/**
 * The default shell-command allowlist and token-prefix matching against it.
 *
 * An entry is a sequence of words separated by single spaces. A command matches
 * an entry when its first words are exactly the entry's words, so `git diff`
 * matches `git diff --cached` but not `git difftool`, and `ls` matches `ls -la`
 * but not `lsblk`.
 *
 * @module
 */

/**
 * Commands that only read: they run without asking when nothing else in the
 * command line needs asking. Nothing here writes files or reaches the network by
 * default; the flags with which some of them could write or run other programs
 * (`git diff --output`, `find -delete`, `rg --pre`, ...) are judged separately by
 * the command checker. Test runners are included because running the project's
 * tests is what an agent does most, and they run inside the OS sandbox.
 *
 * Deliberately absent: anything that runs another command (`env`, `xargs`,
 * `nohup`, `time`, `sh`, `bash`, `eval`, `exec`, `sudo`), anything that writes
 * (`sed`, `tee`, `touch`, `mkdir`), pagers (`less` runs `!` commands) and
 * network clients (`curl`, `wget`, `git fetch`).
 *
 * @example
 * ```ts
 * import { DEFAULT_COMMAND_ALLOWLIST } from "@toolfence/policy";
 * console.log(DEFAULT_COMMAND_ALLOWLIST.includes("git status")); // true
 * ```
 */
export const DEFAULT_COMMAND_ALLOWLIST: readonly string[] = Object.freeze([
  // Listing and reading files.
  "ls",
  "pwd",
  "cat",
  "head",
  "tail",
  "wc",
  "echo",
  "printf",
  "grep",
  "egrep",
  "fgrep",
  "rg",
  "find",
  "file",
  "stat",
  "du",
  "df",
  "tree",
  "basename",
  "dirname",
  "realpath",
  "readlink",
  "diff",
  "cmp",
  "cut",
  "sort",
  "uniq",
  "tr",
  "nl",
  "column",
  "true",
  "false",
  "whoami",
  "uname",
  "date",
  "which",
  // Git, read-only subcommands, with and without the pager switched off.
  "git status",
  "git log",
  "git diff",
  "git show",
  "git blame",
  "git rev-parse",
  "git ls-files",
  "git --no-pager status",
  "git --no-pager log",
  "git --no-pager diff",
  "git --no-pager show",
  "git --no-pager blame",
  // Test runners.
  "deno test",
  "npm test",
  "npm run test",
  "pytest",
  "python -m pytest",
  "python3 -m pytest",
  "cargo test",
  "go test",
]);

/**
 * Splits an allowlist entry into its words, ignoring surrounding and repeated
 * whitespace, so that entries typed by a person still match.
 */
function entryWords(entry: string): string[] {
  return entry.trim().split(/\s+/).filter((word) => word !== "");
}

/**
 * Finds the allowlist entry a command's words start with.
 *
 * Matching is by whole words: every word of the entry must equal the word at
 * the same position of the command. An empty entry never matches.
 *
 * @param words The words of one simple command, command name first, after quote
 *   removal (`"l"s` is `ls`).
 * @param allowlist The entries to match against.
 * @returns The first matching entry, or `undefined` when none matches.
 *
 * Needs no permissions.
 *
 * @example
 * ```ts
 * import { matchesAllowlist } from "@toolfence/policy";
 * matchesAllowlist(["git", "diff", "--cached"], ["git diff"]); // "git diff"
 * matchesAllowlist(["git", "difftool"], ["git diff"]); // undefined
 * ```
 */
export function matchesAllowlist(
  words: readonly string[],
  allowlist: readonly string[],
): string | undefined {
  for (const entry of allowlist) {
    const expected = entryWords(entry);
    if (expected.length === 0 || expected.length > words.length) continue;
    if (expected.every((word, index) => words[index] === word)) return entry;
  }
  return undefined;
}
