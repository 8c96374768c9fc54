/**
 * Per-call overhead of `toolbox.call` on a trivial 3-field tool, against a bare
 * function call and against `v.parse` + call, in one run.
 * Targets (issue 30): the pipeline within 3x of `v.parse` + call, with
 * JSON-text arguments within 4x. Timed by the process's CPU time, which the
 * other processes of a loaded machine do not inflate as they do the wall clock.
 *
 * Run: deno run -A bench/call_overhead.ts
 *
 * @module
 */

import * as v from "valibot";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Session } from "../policy/session.ts";
import { tool } from "../core/mod.ts";
import { ToolBox } from "../toolbox.ts";
import { comparePerCall, printRatios } from "./_measure.ts";

const input = v.object({ a: v.number(), b: v.number(), label: v.optional(v.string(), "sum") });
const add = ({ a, b, label }: { a: number; b: number; label: string }) => ({ [label]: a + b });
const box = new ToolBox().register(tool({ name: "add", description: "Add.", input, readOnly: true, run: add }));
const dir = await mkdtemp(join(tmpdir(), "toolfence-bench-"));
const session = new Session({ workspace: dir });
const args = { a: 1, b: 2, label: "total" };
// The arguments as a model sends them: text, made once (making it is the caller's work, not the pipeline's).
const argsText = JSON.stringify(args);

const rows = await comparePerCall([
  ["direct call", () => add(args)],
  ["v.parse + call", () => add(v.parse(input, args))],
  ["toolbox.call", () => box.call(session, "add", args)],
  ["toolbox.call (JSON text)", () => box.call(session, "add", argsText)],
], { clock: "cpu", iterations: 20_000 });
printRatios("Call overhead (median CPU µs per call)", rows, "µs", "v.parse + call", {
  "toolbox.call": "≤ 3x",
  "toolbox.call (JSON text)": "≤ 4x",
});
await session.close();
await rm(dir, { recursive: true, force: true });
