// The deny rules against what really runs: command lines that wrap `git push` in every way the analysis knows of
// (wrappers, global options, git's own programs, env -S, words from a stream, shells reading their input) run in
// the oracle's sandbox under strace; whenever git really started `push`, the line must be denied or need a person
// (the automatic answer never runs it). Before, `echo push | xargs git`, `bash <<< 'git push'`, `env -S'git push'`
// and `/usr/lib/git-core/git-push` ran with the automatic answer under deny ["git push*"].
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { ExecTracer, type ObservedExec, oracleUnavailable } from "./_exec_trace.ts";
import { decideCommand } from "../../policy/shell/authorize_command.ts";
import { PolicyRules } from "../../policy/config/rules.ts";
import { parsePolicyFile } from "../../policy/config/load.ts";

let tracer: ExecTracer | undefined;
const skip = oracleUnavailable();
before(async () => {
  if (skip === undefined) tracer = await ExecTracer.create();
});
after(() => tracer?.dispose());

const rules = PolicyRules.fromLayers(
  [parsePolicyFile("/w/toolfence.json", JSON.stringify({ commands: { deny: ["git push*"] } }), "project")],
  "/w",
);

/** Whether an exec is git running its push: `git [global options] push`, or git-push by name. */
function pushes(exec: ObservedExec): boolean {
  const name = (exec.path.split("/").at(-1) ?? "") || (exec.argv[0] ?? "");
  if (name === "git-push" || exec.argv[0]?.endsWith("git-push")) return true;
  if (name !== "git") return false;
  const words = exec.argv.slice(1);
  let at = 0;
  while (at < words.length && words[at].startsWith("-")) at += ["-C", "-c"].includes(words[at]) ? 2 : 1;
  return words[at] === "push";
}

const wrapper = fc.constantFrom(
  (c: string) => c,
  (c: string) => `env ${c}`,
  (c: string) => `timeout 5 ${c}`,
  (c: string) => `nice -n 1 ${c}`,
  (c: string) => `bash -c '${c}'`,
  (c: string) => `bash <<< '${c}'`,
  (c: string) => `echo '${c}' | sh`,
  (c: string) => `env -S'${c}'`,
  (c: string) => `eval '${c}'`,
  (c: string) => `setarch x86_64 ${c}`,
  (c: string) => `setpriv ${c}`,
);
const git = fc.constantFrom("git", "git -C .", "/usr/bin/git", "/usr/lib/git-core/git-push", "git -c a.b=c");
const stream = fc.constantFrom(
  (g: string) => `${g} push origin`,
  (g: string) => `echo push origin | xargs ${g}`,
  (g: string) => `echo origin | xargs ${g} push`,
);

describe("deny rules against what really runs", () => {
  test("a line that really runs git push is denied or needs a person", { timeout: 300_000 }, async (t) => {
    if (!tracer) return t.skip(skip || "no tracer");
    const traced = tracer;
    let ran = 0;
    await fc.assert(
      fc.asyncProperty(wrapper, git, stream, async (wrap, program, build) => {
        // git-push is the subcommand already.
        const inner = program.endsWith("git-push") ? build(program).replace(" push", "") : build(program);
        const line = wrap(inner);
        const observed = await traced.observe(line);
        if (!observed.execs.some(pushes)) return;
        ran++;
        const decided = await decideCommand(line, { rules, workspaceRoot: "/w", sandbox: "required" });
        const stopped = decided.decision === "deny" ||
          (decided.decision === "ask" && decided.prompt?.requirePerson === true);
        assert.ok(stopped, `${line} ran git push, and was ${decided.decision}: ${decided.reason}`);
      }),
      { numRuns: 60, seed: 41 },
    );
    // The sandbox really ran git push for most lines: the property is not vacuous.
    assert.ok(ran >= 20, `git push ran for only ${ran} of 60 lines`);
  });
});
