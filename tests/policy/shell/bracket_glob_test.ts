import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { checkCommand } from "../../../policy/shell/check_command.ts";
import { analyzeBash } from "../../../policy/shell/_tree.ts";

const sandbox = { available: true };

describe("bracket expressions split across parser nodes", () => {
  test(
    "a word with an unquoted [ ... ] is a pattern, whatever nodes the parser made of it",
    { timeout: 60_000 },
    async () => {
      for (const line of ["ls [!a]*", "ls [-]*", "ls [[:punct:]]*", "ls --outpu[t]=x", "ls a[!a]b"]) {
        const [command] = (await analyzeBash(line)).commands;
        const word = command.words[1];
        assert.equal(word.value, undefined, `${line}: ${JSON.stringify(word)}`);
      }
    },
  );

  test("such a pattern may expand into an option, so option-sensitive commands ask", { timeout: 60_000 }, async () => {
    for (
      const line of [
        "git log [!a]*",
        "git show [!a]*",
        "git diff [-]*",
        "git log [[:punct:]]*",
        "sort [!a]*",
        "find . [!a]*",
        "rg x [!a]*",
        "git log --outpu[t]=x",
      ]
    ) {
      const check = await checkCommand(line, { sandbox });
      assert.equal(check.verdict, "ask", `${line}: ${check.reasons.join("; ")}`);
    }
  });

  test("quoted brackets are literal text, and [ as a command stays a command", { timeout: 60_000 }, async () => {
    for (const line of ['echo "["!a]*', "[ -f x ] && echo y", "echo [", "echo [ ]", "git log a[!a]*"]) {
      const check = await checkCommand(line, { sandbox });
      assert.equal(check.verdict, "allow", `${line}: ${check.reasons.join("; ")}`);
    }
    const [quoted] = (await analyzeBash("ls '[!a]'")).commands;
    assert.equal(quoted.words[1].value, "[!a]");
  });
});
