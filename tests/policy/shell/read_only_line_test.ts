import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { authorizeCommand } from "../../../policy/shell/authorize_command.ts";
import { isReadOnlyLine } from "../../../policy/shell/read_only_line.ts";
import { DEFAULT_COMMAND_ALLOWLIST, parseAllowlistEntry, READER_COMMANDS } from "../../../policy/shell/allowlist.ts";
import { autoHost } from "../../../policy/hosts.ts";
import { PolicyState } from "../../../policy/state.ts";

const judged = (line: string, allowlist?: string[]) =>
  authorizeCommand(
    {
      state: new PolicyState(allowlist ? { commandAllowlist: allowlist } : {}),
      asker: autoHost(),
      workspaceRoot: "/tmp/ws",
      sandbox: "auto",
    },
    line,
  );

describe("isReadOnlyLine", () => {
  test("each reader of the default allowlist alone is a read-only line; each other entry alone is not", {
    timeout: 60_000,
  }, async () => {
    for (const entry of DEFAULT_COMMAND_ALLOWLIST) {
      const authorization = await judged(parseAllowlistEntry(entry).words.join(" "));
      assert.equal(isReadOnlyLine(authorization), READER_COMMANDS.includes(entry), entry);
    }
  });

  for (
    const line of [
      "ls",
      "true",
      "cd src && ls -la",
      "cat a.txt | sort | uniq -c | head",
      "grep -rn TODO src 2>/dev/null",
      "echo hi >&2; echo there > /dev/null",
      "find . -name '*.ts' -newer x",
      "test -f x && cat x",
      "sed -n 1,5p a.txt",
      "if test -d src; then ls src; fi",
    ]
  ) {
    test(`${line}: read-only`, { timeout: 60_000 }, async () => {
      assert.equal(isReadOnlyLine(await judged(line)), true);
    });
  }

  for (
    const [line, why] of [
      ["ls > out.txt", "a redirection into a file"],
      ["cat a >> log", "an appending redirection"],
      ["sort -o out.txt in.txt", "a writing option (the checker asks)"],
      ["sed 'w out' a", "a sed script that writes"],
      ["touch x", "a writer"],
      ["git status", "git keeps its index in the workspace"],
      ["npm test", "a test runner"],
      ["ls && mkdir out", "a writer after a reader"],
      ["cat $(echo a) > /dev/null", "an expansion only known at run time (asks)"],
    ] as const
  ) {
    test(`${line}: not read-only (${why})`, { timeout: 60_000 }, async () => {
      assert.equal(isReadOnlyLine(await judged(line)), false);
    });
  }

  test("a line a person (or the automatic answer) allowed is not read-only, nor one allowed by an added entry", {
    timeout: 60_000,
  }, async () => {
    const confirmed = await judged("ls && make");
    assert.equal(confirmed.via, "confirmed");
    assert.equal(isReadOnlyLine(confirmed), false);
    const added = await judged("make lint", [...DEFAULT_COMMAND_ALLOWLIST, "make lint"]);
    assert.equal(added.via, "allowlist");
    assert.equal(isReadOnlyLine(added), false);
  });
});
