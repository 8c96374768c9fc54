/**
 * glob `**\/*.ts` over the bench source tree (about 12,000 files, 100 MB): the
 * glob tool against tinyglobby and `rg --files`, in one run, interleaved
 * rounds, medians. Target (issue 5): within 1.5x of tinyglobby.
 *
 * The tool does more than tinyglobby: it reads the .gitignore files, never
 * follows symlinks out of the workspace, sorts, and goes through the toolbox
 * (validation, the workspace check, the result).
 *
 * Run: `deno run -A bench/glob.ts` (not part of `deno task test`).
 *
 * @module
 */

import { spawn } from "node:child_process";
import { glob as tinyglobby } from "tinyglobby";
import { Session } from "../policy/session.ts";
import { ToolBox } from "../toolbox.ts";
import { globTool } from "../tools/search/glob.ts";
import { findRipgrep } from "../tools/search/_ripgrep.ts";
import { median, printRatios } from "./_measure.ts";
import { sourceTree, treeSize } from "./_fixtures.ts";
import { sized } from "./_report.ts";

const ROUNDS = sized(15, 1);

function rgFiles(rg: string, cwd: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(rg, ["--files", "--no-config", "--glob", "*.ts"], { cwd, stdio: ["ignore", "pipe", "ignore"] });
    let lines = 0;
    child.stdout.on("data", (chunk: Buffer) => {
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
    });
    child.on("error", reject);
    child.on("close", () => resolve(lines));
  });
}

const tree = await sourceTree();
const { files } = await treeSize(tree);
const rg = await findRipgrep();
const session = new Session({ workspace: tree });
const box = new ToolBox().register(globTool);
const samples: Record<string, number[]> = {
  "tinyglobby": [],
  "tinyglobby (sorted)": [],
  "toolfence glob": [],
  "toolfence glob (skip_ignored: false)": [],
  ...(rg ? { "rg --files -g '*.ts'": [] } : {}),
};
let counts = "";
for (let round = 0; round <= ROUNDS; round++) {
  let started = performance.now();
  const peer = await tinyglobby("**/*.ts", { cwd: tree });
  const peerMs = performance.now() - started;
  started = performance.now();
  (await tinyglobby("**/*.ts", { cwd: tree })).sort();
  const sortedMs = performance.now() - started;
  started = performance.now();
  const ours = await box.call(session, "glob", { pattern: "**/*.ts", max_results: 100_000 });
  const oursMs = performance.now() - started;
  started = performance.now();
  await box.call(session, "glob", { pattern: "**/*.ts", max_results: 100_000, skip_ignored: false });
  const noIgnoreMs = performance.now() - started;
  let rgMs = 0;
  let rgCount = 0;
  if (rg) {
    started = performance.now();
    rgCount = await rgFiles(rg, tree);
    rgMs = performance.now() - started;
  }
  if (ours.status !== "success") throw new Error(ours.error);
  if (round === 0) {
    const out = ours.output as { matches: string[]; note?: string };
    counts = `tinyglobby ${peer.length} paths, rg ${rgCount}; toolfence returns ${out.matches.length}: ` +
      (out.note ?? "");
    continue;
  }
  samples["tinyglobby"].push(peerMs);
  samples["tinyglobby (sorted)"].push(sortedMs);
  samples["toolfence glob"].push(oursMs);
  samples["toolfence glob (skip_ignored: false)"].push(noIgnoreMs);
  if (rg) samples["rg --files -g '*.ts'"].push(rgMs);
}
console.log(`glob **/*.ts over ${files} files; ${counts}`);
printRatios(
  `median ms of ${ROUNDS} rounds`,
  Object.entries(samples).map(([name, values]) => [name, median(values)]),
  "ms",
  "tinyglobby",
  { "toolfence glob": "≤ 1.5x" },
);
await session.close();
