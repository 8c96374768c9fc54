// Regressions for the bypasses the differential oracle (tests/oracle) found in
// the command analysis: each of these command lines ran a program the
// allowlist does not permit while checkCommand said "allow".
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { checkCommand } from "../../../policy/shell/check_command.ts";
import { DEFAULT_COMMAND_ALLOWLIST } from "../../../policy/shell/allowlist.ts";

async function verdict(command: string): Promise<{ verdict: string; reasons: string[] }> {
  const check = await checkCommand(command, { allowlist: DEFAULT_COMMAND_ALLOWLIST });
  return { verdict: check.verdict, reasons: check.reasons };
}

describe("checkCommand: bypasses found by the oracle", () => {
  test("a line continuation is removed before the line is read, as bash removes it", { timeout: 60_000 }, async () => {
    // Each line asks because of the program or flag bash runs once the
    // continuation is gone, named in the reasons.
    for (
      const [command, ran] of [
        ["tr\\\nap 'rm a.txt' EXIT", "`trap`"],
        ["ls && tr\\\nap 'rm a.txt' EXIT", "`trap`"],
        ["tr''\\\nap 'rm a.txt' EXIT", "`trap`"],
        ["tr\\\n\\\nuncate -s 0 a.txt", "`truncate`"],
        ["echo $(tr\\\nuncate -s 0 a.txt)", "`truncate`"],
        ["ls\\\n''blk", "`lsblk`"],
        ["find . -name a.txt -de\\\nlete", "-delete"],
        ["find . -name a.txt -ex\\\nec rm a.txt ';'", "-exec"],
        ["cat <<EOF\n$(ls\\\nblk)\nEOF", "`lsblk`"],
        ["cat <<-EOF\n\techo $(tr\\\n\\\nuncate -s 0 a.txt)\n\tEOF", "`truncate`"],
        // Inside an expansion's opening: `$[`, `$((`, `$'`, `2>`, `<<`, `<(`.
        ["echo $\\\n[$(<evil.txt)]", "does arithmetic"],
        ["echo $(\\\n(x[$(rm a.txt)]))", "does arithmetic"],
        ["echo $\\\n(rm a.txt)", "`rm`"],
        ["cat $\\\n'\\x2e\\x2e/secret'", "steps out of the folder"],
        ["ls <\\\n(rm a.txt)", "`rm`"],
        ["ls 2\\\n>out.txt", "out.txt"],
      ]
    ) {
      const result = await verdict(command);
      assert.equal(result.verdict, "ask", `${JSON.stringify(command)} would run ${ran} unasked`);
      assert.ok(result.reasons.some((reason) => reason.includes(ran)), `${ran}: ${result.reasons.join(" | ")}`);
    }
    // A continuation that joins nothing harmful leaves the line allowed.
    assert.equal((await verdict("echo a\\\nb")).verdict, "allow");
    assert.equal((await verdict('echo "a\\\nb"')).verdict, "allow");
  });

  test("a continuation bash keeps (quotes, comments, quoted here-documents) is checked on both readings", {
    timeout: 60_000,
  }, async () => {
    for (const command of ["echo 'a\\\nb'", "echo $'a\\\nb'", "ls # a \\\n", "cat <<'E'\nx\\\nE\n"]) {
      assert.equal((await verdict(command)).verdict, "allow", JSON.stringify(command));
    }
    // `<\⏎<'E'` is a here-document for bash, whose quoted body keeps `x\⏎`;
    // read as the parser first reads it, the body would swallow `rm`.
    const heredoc = await verdict("cat <\\\n<'E'\nx\\\nE\nrm -rf a\nE\n");
    assert.equal(heredoc.verdict, "ask");
    assert.ok(heredoc.reasons.some((reason) => reason.includes("disagree")), heredoc.reasons.join(" | "));
  });

  test("a continuation next to a blank or an operator still separates words", { timeout: 60_000 }, async () => {
    for (const command of ["ls \\\n-la", "ls \\\n  -la", "echo hi \\\n&& ls", "ls |\\\nhead", "ls \\\n\\\n -la"]) {
      assert.equal((await verdict(command)).verdict, "allow", JSON.stringify(command));
    }
  });

  test(
    "a here-document delimiter written across a continuation ends the document for bash",
    { timeout: 60_000 },
    async () => {
      for (
        const command of [
          "cat <<EOF\nEO\\\nF\nxargs rm\nEOF",
          "cat <<EOF\nhi\nE\\\nO\\\nF\nrm a.txt\nEOF",
          "cat <<-EOF\n\tEO\\\nF\nrm a.txt\n\tEOF",
        ]
      ) {
        const result = await verdict(command);
        assert.equal(result.verdict, "ask", JSON.stringify(command));
        // The joined delimiter ends the document where bash ends it, so what
        // follows is read as the commands bash runs.
        assert.ok(
          result.reasons.some((reason) => reason.includes("a newline joins commands")),
          result.reasons.join(" | "),
        );
      }
      // With a quoted delimiter bash keeps the backslash, and the line is not the delimiter.
      assert.equal((await verdict("cat <<'EOF'\nEO\\\nF\nEOF")).verdict, "allow");
    },
  );
});
