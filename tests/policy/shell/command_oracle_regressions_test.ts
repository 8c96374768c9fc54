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
  test("a line continuation inside a word joins it for bash, so it asks", { timeout: 60_000 }, async () => {
    for (
      const [command, ran] of [
        ["tr\\\nap 'rm a.txt' EXIT", "trap, then rm at exit"],
        ["ls && tr\\\nap 'rm a.txt' EXIT", "trap, then rm at exit"],
        ["tr''\\\nap 'rm a.txt' EXIT", "trap, then rm at exit"],
        ["tr\\\n\\\nuncate -s 0 a.txt", "truncate"],
        ["echo $(tr\\\nuncate -s 0 a.txt)", "truncate"],
        ["ls\\\n''blk", "lsblk"],
        ["find . -name a.txt -de\\\nlete", "find -delete"],
        ["find . -name a.txt -ex\\\nec rm a.txt ';'", "rm, started by find -exec"],
        ["echo a\\\nb", "echo ab (bash reads one word)"],
        ["cat <<EOF\n$(ls\\\nblk)\nEOF", "lsblk, from inside a here-document"],
        ["cat <<-EOF\n\techo $(tr\\\n\\\nuncate -s 0 a.txt)\n\tEOF", "truncate, from inside a here-document"],
      ]
    ) {
      const result = await verdict(command);
      assert.equal(result.verdict, "ask", `${JSON.stringify(command)} would run ${ran} unasked`);
      assert.ok(result.reasons.some((reason) => reason.includes("line continuation")), result.reasons.join(" | "));
    }
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
        assert.ok(
          result.reasons.some((reason) => reason.includes("earlier than the parser")),
          result.reasons.join(" | "),
        );
      }
      // With a quoted delimiter bash keeps the backslash, and the line is not the delimiter.
      assert.equal((await verdict("cat <<'EOF'\nEO\\\nF\nEOF")).verdict, "allow");
    },
  );
});
