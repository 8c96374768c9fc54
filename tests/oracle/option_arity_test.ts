// The path check reads some programs' options by their shape (policy/shell/_command_paths.ts SHAPES): an option
// declared to take a value hides the word after it from the check. A flag declared as taking one is a way past it,
// as `column -t ../secret` was (found by the 100,000-line fuzzer pass): the analysis took the path for -t's value
// and allowed the line, and column read the file. So every such option of every shaped program installed here runs
// for real in the oracle's sandbox, placed so that the secret planted outside the workspace is what the real
// program would open if the option took no value, and the oracle judges the run.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { ExecTracer, installed, oracleUnavailable, OUTSIDE_ROOT } from "./_exec_trace.ts";
import { formatBypass, judgeCommand } from "./_oracle.ts";
import { DEFAULT_COMMAND_ALLOWLIST } from "../../policy/shell/allowlist.ts";
import { type OptionKind, type ProgramShape, SHAPES } from "../../policy/shell/_command_paths.ts";

const SECRET = `${OUTSIDE_ROOT}/outside/secret`;
// The kinds whose value words the path check does not look at (the second word of `text-path` it does).
const HIDING: ReadonlySet<OptionKind> = new Set(["text", "text-text", "text-path"]);

/** The probe lines for one program: each value-taking option, then what the check would skip. */
function probes(name: string, shape: ProgramShape): string[] {
  const lines: string[] = [];
  const options = [
    ...Object.entries(shape.short).map(([letter, kind]) => [`-${letter}`, kind] as const),
    ...Object.entries(shape.long).map(([long, kind]) => [`--${long}`, kind] as const),
  ];
  for (const [option, kind] of options) {
    if (!HIDING.has(kind)) continue;
    const values = kind === "text" ? 1 : 2;
    // With a pattern or script first (grep, sed, jq), the secret stands where that first operand would be: taken
    // for the pattern when the option has its value, read as a file when it has none.
    const words = shape.first === "text"
      ? [...Array(values).fill("ab"), SECRET]
      : [...Array(values - 1).fill("ab"), SECRET];
    lines.push([name, option, ...words].join(" "));
  }
  return lines;
}

let tracer: ExecTracer | undefined;
const skip = oracleUnavailable();
before(async () => {
  if (skip === undefined) tracer = await ExecTracer.create();
});
after(() => tracer?.dispose());

describe("options read as taking a value really take one", () => {
  test("the probes cover every value-taking option of every shaped program", { timeout: 60_000 }, () => {
    const column = probes("column", SHAPES.get("column")!);
    assert.ok(column.includes(`column -n ${SECRET}`), column.join("\n"));
    assert.ok(!column.some((line) => line.startsWith("column -t ")), "-t is a flag");
    assert.deepEqual(
      probes("grep", SHAPES.get("grep")!).find((line) => line.startsWith("grep -A ")),
      `grep -A ab ${SECRET}`,
    );
  });

  test("run for real, no probe reads the secret the analysis did not see", { timeout: 240_000 }, async (t) => {
    if (!tracer) return t.skip(skip || "no tracer");
    const shaped = await Promise.all(
      [...SHAPES].map(async ([name, shape]) => (await installed(name)) ? probes(name, shape) : []),
    );
    const lines = shaped.flat();
    let ran = 0;
    const findings: string[] = [];
    const queue = [...lines];
    await Promise.all(Array.from({ length: 4 }, async () => {
      for (let line = queue.shift(); line !== undefined; line = queue.shift()) {
        const outcome = await judgeCommand(tracer!, line, DEFAULT_COMMAND_ALLOWLIST, 5000);
        if (outcome.ran) ran++;
        findings.push(...outcome.bypasses.map(formatBypass));
      }
    }));
    assert.deepEqual(findings, []);
    // Most probes are allowed lines, so most of them ran: the test judged real runs, not refusals.
    assert.ok(ran >= lines.length / 2, `only ${ran} of ${lines.length} probes were allowed and ran`);
  });
});
