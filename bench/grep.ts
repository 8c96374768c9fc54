/**
 * grep over a source tree of a little over 100 MB: the tool's ripgrep engine
 * against running `rg` directly, and its built-in engine against `grep -rn`,
 * in one run, interleaved rounds, medians. Targets (issue 5): ripgrep engine
 * within 1.3x of `rg`, built-in within 3x of `grep -rn`.
 *
 * Run: `deno run -A bench/grep.ts` (not part of `deno task test`).
 *
 * @module
 */

import { spawn } from "node:child_process";
import { Session } from "../policy/session.ts";
import { ToolBox } from "../toolbox.ts";
import { grepTool } from "../tools/search/grep.ts";
import { findRipgrep } from "../tools/search/_ripgrep.ts";
import { median, printRatios } from "./_measure.ts";
import { RARE_TOKEN, sourceTree, treeSize } from "./_fixtures.ts";
import { sized } from "./_report.ts";

const ROUNDS = sized(9, 1);

function timeCommand(command: string, args: string[], cwd: string): Promise<{ ms: number; lines: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(command, args, { cwd, stdio: ["ignore", "pipe", "ignore"] });
    let lines = 0;
    child.stdout.on("data", (chunk: Buffer) => {
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
    });
    child.on("error", reject);
    child.on("close", () => resolve({ ms: performance.now() - started, lines }));
  });
}

const tree = await sourceTree();
const { bytes, files } = await treeSize(tree);
const rg = await findRipgrep();
if (!rg) throw new Error("the grep bench needs ripgrep");
const session = new Session({ workspace: tree });
const viaRipgrep = new ToolBox().register(grepTool({ engine: "ripgrep", ripgrepPath: rg }));
const viaBuiltin = new ToolBox().register(grepTool({ engine: "builtin" }));
// The flags that give `rg` the tool's file selection: hidden files, .gitignore without a git repository,
// nothing from parent folders or global settings, never .git.
const RG_SAME = [
  "--no-config",
  "--hidden",
  "--no-require-git",
  "--no-ignore-parent",
  "--no-ignore-global",
  "--glob",
  "!.git",
];

console.log(`grep over ${(bytes / 1e6).toFixed(1)} MB in ${files} files; ripgrep at ${rg}`);

for (
  const [title, pattern] of [[`rare literal (${RARE_TOKEN})`, RARE_TOKEN], [
    "regex, many matches (max_matches 100)",
    "function \\w+Entry\\(",
  ]]
) {
  const samples: Record<string, number[]> = {
    "rg -n (same file selection)": [],
    "rg -n (defaults)": [],
    "toolfence grep, ripgrep engine": [],
    "grep -rn": [],
    "toolfence grep, built-in engine": [],
  };
  let counts = "";
  for (let round = 0; round <= ROUNDS; round++) {
    const direct = await timeCommand(rg, ["-n", ...RG_SAME, "--regexp", pattern, "."], tree);
    const plain = await timeCommand(rg, ["-n", "--regexp", pattern, "."], tree);
    let started = performance.now();
    const a = await viaRipgrep.call(session, "grep", { pattern });
    const ripgrepMs = performance.now() - started;
    const gnu = await timeCommand("grep", ["-rnE", "--", pattern.replace("\\w", "[[:alnum:]_]"), "."], tree);
    started = performance.now();
    const b = await viaBuiltin.call(session, "grep", { pattern });
    const builtinMs = performance.now() - started;
    if (a.status !== "success" || b.status !== "success") throw new Error(a.error ?? b.error);
    if (round === 0) {
      const found = (r: typeof a) => (r.output as { matches: unknown[] }).matches.length;
      counts = `rg ${direct.lines} lines, grep -rn ${gnu.lines}, tool ${found(a)} / ${found(b)} (capped at 100)`;
      continue; // warm-up
    }
    samples["rg -n (same file selection)"].push(direct.ms);
    samples["rg -n (defaults)"].push(plain.ms);
    samples["toolfence grep, ripgrep engine"].push(ripgrepMs);
    samples["grep -rn"].push(gnu.ms);
    samples["toolfence grep, built-in engine"].push(builtinMs);
  }
  const rows = Object.entries(samples).map(([name, values]) => [name, median(values)] as [string, number]);
  console.log(`\n${title}: median ms of ${ROUNDS} rounds; ${counts}`);
  printRatios(`grep ${title}, ripgrep engine`, rows.slice(0, 3), "ms", "rg -n (same file selection)", {
    "toolfence grep, ripgrep engine": "≤ 1.3x",
  });
  printRatios(`grep ${title}, built-in engine`, rows.slice(3), "ms", "grep -rn", {
    "toolfence grep, built-in engine": "≤ 3x",
  });
}
await session.close();
