// What the framework adapter tests share: a workspace with a session, a
// toolbox of the built-in file tools plus two tools of our own (one that
// needs approval, one that defers an image), the scripted calls every
// framework's run makes, and what `callMany` gives for the same calls, to
// compare each framework's transcript with.

import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import * as v from "valibot";
import "../../tools/mod.ts";
import { Session } from "../../policy/session.ts";
import { callbackHost } from "../../policy/hosts.ts";
import { ToolBox } from "../../toolbox.ts";
import { tool } from "../../core/tool.ts";
import { toModelText } from "../../core/result.ts";
import type { BatchCall } from "../../core/executor.ts";

export const PNG = Uint8Array.from(
  atob("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="),
  (c) => c.charCodeAt(0),
);

/** A tool that needs a person's approval; it records what ran. */
export function deployTool(ran: string[]) {
  return tool({
    name: "deploy",
    description: "Deploy a service.",
    input: v.object({ service: v.string() }),
    needsApproval: ({ service }) => service !== "staging",
    run: ({ service }) => {
      ran.push(service);
      return `deployed ${service}`;
    },
  });
}

/** A tool that defers an image. */
export const snapshotTool = tool({
  name: "snapshot",
  description: "Take a picture of the screen.",
  input: v.object({}),
  readOnly: true,
  run: async (_args, ctx) => {
    await ctx.deferImage(PNG, "the screen");
    return "taken";
  },
});

/** How many calls of a probe tool ran at once, at most. */
export interface Overlap {
  active: number;
  most: number;
}

/** A tool that takes a while and counts how many of its calls run at once; `safe` makes it concurrency-safe. */
export function probeTool(name: string, safe: boolean, overlap: Overlap) {
  return tool({
    name,
    description: "Wait a moment.",
    input: v.object({ n: v.number() }),
    ...(safe ? { readOnly: true } : {}),
    run: async ({ n }) => {
      overlap.active++;
      overlap.most = Math.max(overlap.most, overlap.active);
      await new Promise((done) => setTimeout(done, 30));
      overlap.active--;
      return `waited ${n}`;
    },
  });
}

export interface Fixture {
  dir: string;
  session: Session;
  box: ToolBox;
  /** The titles of the questions the session's host was asked (it takes every default). */
  asked: string[];
  /** Services `deploy` really deployed. */
  deployed: string[];
  /** How many `probe_safe` (concurrency-safe) and `probe_unsafe` calls ran at once. */
  overlap: { safe: Overlap; unsafe: Overlap };
  /** The model-facing text `callMany` gives for these calls, one by one in a fresh copy of the workspace state. */
  expectedTexts(calls: BatchCall[]): Promise<string[]>;
}

/** Runs `body` with a fresh workspace holding `notes.txt` and `chain.txt`, then cleans up. */
export async function withFixture(body: (fixture: Fixture) => Promise<void>): Promise<void> {
  const dir = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-fw-")));
  await fsp.writeFile(path.join(dir, "notes.txt"), "alpha\nbeta\n");
  await fsp.writeFile(path.join(dir, "chain.txt"), "step 0\n");
  const asked: string[] = [];
  const host = callbackHost({
    choose: (request) => {
      asked.push(request.title);
      return request.defaultChoice;
    },
  });
  const session = new Session({ workspace: dir, host });
  const deployed: string[] = [];
  const overlap = { safe: { active: 0, most: 0 }, unsafe: { active: 0, most: 0 } };
  const box = new ToolBox().withDefaults("fs", "patch").register(
    deployTool(deployed),
    snapshotTool,
    probeTool("probe_safe", true, overlap.safe),
    probeTool("probe_unsafe", false, overlap.unsafe),
  );
  const expectedTexts = async (calls: BatchCall[]) => {
    const { results } = await box.callMany(session, calls);
    return results.map(toModelText);
  };
  try {
    await body({ dir, session, box, asked, deployed, overlap, expectedTexts });
  } finally {
    await session.close();
    await fsp.rm(dir, { recursive: true, force: true });
  }
}

/** The 8 chained edits: edit i turns `step i` into `step i+1`, so they all succeed only in order. */
export const CHAIN = Array.from({ length: 8 }, (_, i) => ({
  name: "edit_file",
  callId: `edit-${i}`,
  args: { path: "chain.txt", old_text: `step ${i}\n`, new_text: `step ${i + 1}\n` },
}));

/** A good call and a bad one (a number for a path, an argument that does not exist). */
export const GOOD_AND_BAD = [
  { name: "read_file", callId: "good", args: { path: "notes.txt" } },
  { name: "read_file", callId: "bad", args: { path: 5, verbose: true } },
];

/** The fix of the bad call, as the model makes it after reading the error. */
export const FIXED = { name: "read_file", callId: "fixed", args: { path: "notes.txt", offset: 1 } };

/** 4 calls of the concurrency-safe probe, then 4 of the other. */
export const PROBES = [
  ...Array.from({ length: 4 }, (_, n) => ({ name: "probe_safe", callId: `safe-${n}`, args: { n } })),
  ...Array.from({ length: 4 }, (_, n) => ({ name: "probe_unsafe", callId: `unsafe-${n}`, args: { n } })),
];
