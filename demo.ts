/**
 * `deno task demo`: defines a tool, validates one good and one bad call, runs
 * them through the pipeline and prints each result.
 *
 * Requires --allow-read and --allow-write (a temporary workspace) and
 * --allow-env (the temp dir location).
 *
 * @module
 */

import * as v from "valibot";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Session, toModelText, tool, ToolBox, type ToolResult } from "./core/mod.ts";

const wordCount = tool({
  name: "word_count",
  description: "Count the words in a text file of the workspace.",
  input: v.object({
    path: v.pipe(v.string(), v.description("File, relative to the workspace")),
    unique: v.optional(v.pipe(v.boolean(), v.description("Count distinct words only")), false),
  }),
  readOnly: true,
  permissions: ["read"],
  async run({ path, unique }, ctx) {
    const { readFile } = await import("node:fs/promises");
    const words = (await readFile(await ctx.policy.resolveForRead(path), "utf8")).split(/\s+/).filter(Boolean);
    return { path, words: unique ? new Set(words).size : words.length };
  },
});

function show(title: string, args: unknown, result: ToolResult): void {
  console.log(`\n▶ ${title}\n  call:   word_count ${JSON.stringify(args)}`);
  console.log(`  status: ${result.status}${result.errorCode ? ` (${result.errorKind}/${result.errorCode})` : ""}`);
  console.log(`  model reads: ${toModelText(result)}`);
}

const dir = await mkdtemp(join(tmpdir(), "toolfence-demo-"));
const session = new Session({ workspace: dir });
try {
  await writeFile(join(dir, "notes.txt"), "the quick brown fox jumps over the lazy dog the end\n");
  const box = new ToolBox().register(wordCount);
  console.log(`Workspace: ${dir}`);
  console.log(`Tool schema: ${JSON.stringify(box.schemas("json-schema")[0])}`);

  const calls: [string, unknown][] = [
    ["a good call", { path: "notes.txt", unique: true }],
    ["a bad call: wrong type and an unknown argument", { path: "notes.txt", unique: "yes", verbose: 1 }],
    ["a path outside the workspace", { path: "../../etc/passwd" }],
    ["arguments as a JSON string, the way models send them", '{"path":"notes.txt"}'],
  ];
  for (const [title, args] of calls) show(title, args, await box.call(session, "word_count", args));
} finally {
  await session.close();
  await rm(dir, { recursive: true, force: true });
}
