/**
 * `publish`: brings the changes of a scratch copy over to the real workspace,
 * for the approved paths only, after showing a person the diff.
 *
 * @module
 */

import path from "node:path";
import * as v from "valibot";
import { type AfterCallHook, type FileChange, type SessionBase, type Tool, tool, ToolError } from "@toolfence/core";
import { isProtectedPath, type Scratch } from "@toolfence/policy";
import { marksOf, publicationDiff } from "./_publish_diff.ts";
import { PUBLISH_OUTPUT } from "./_outputs.ts";

/** Options of {@linkcode publishTool}: what the caller approved. */
export interface PublishToolOptions {
  /** The input digest the caller approved (see `Scratch.digest`); a scratch with another digest is never published. */
  digest: string;
  /**
   * The paths (files or folders, relative to the workspace) that may be
   * published; default every path the scratch copy covers. Changes elsewhere
   * stay in the copy.
   */
  paths?: readonly string[];
  /** The tool's name; default `publish`. */
  name?: string;
}

/** The arguments of `publish`. */
export interface PublishArgs {
  /** Publish only the changes at or below these paths (each inside the approved set); default all approved changes. */
  paths?: string[];
  /** The input digest the caller expects; refused when it is not the scratch copy's. */
  digest?: string;
  /** Only show what would be published, without asking or applying anything. */
  preview?: boolean;
}

/** What `publish` returns. */
export interface PublishResult {
  /** Whether changes were applied to the workspace. */
  published: boolean;
  /** The scratch copy's input digest. */
  digest: string;
  /** The changes applied (or, for a preview, that would be). */
  filesystemChanges: FileChange[];
  /** The diff shown (and, for a preview, what would be shown). */
  diff: string;
  /** Changed paths left in the copy: outside the approved set or the requested paths. */
  notPublished: string[];
  /** Special files in the copy (FIFOs, sockets, devices), which are never published. */
  unpublishable: string[];
}

function digestMismatch(expected: string, actual: string, whose: string): ToolError {
  return new ToolError(
    `Nothing was published: the scratch copy's input digest is ${actual}, not the ${whose} ${expected}`,
    {
      code: "digest_mismatch",
      recoveryHint: "The copy was made from another state of the workspace than the one approved; ask the user.",
      details: { expected, actual },
    },
  );
}

// A model-given path as a clean relative path: absolute paths inside the copy or the workspace are taken as relative.
function relativePath(p: string, scratch: Scratch): string {
  let relative = p;
  // The copy first: it may lie inside the workspace (a temp dir there).
  for (const root of [scratch.root, scratch.host.workdir]) {
    if (p === root || p.startsWith(root + "/")) {
      relative = p === root ? "." : p.slice(root.length + 1);
      break;
    }
  }
  if (relative.includes("\0") || path.posix.isAbsolute(relative)) throw notApproved(p, []);
  const normal = path.posix.normalize(relative).replace(/\/+$/, "");
  if (normal === ".." || normal.startsWith("../")) throw notApproved(p, []);
  return normal === "" ? "." : normal;
}

function within(relative: string, roots: readonly string[]): boolean {
  return roots.some((r) => r === "." || relative === r || relative.startsWith(r + "/"));
}

function notApproved(p: string, approved: readonly string[]): ToolError {
  return new ToolError(
    `Nothing was published: ${p} is outside the paths approved for publication (${approved.join(", ") || "none"})`,
    {
      code: "path_not_approved",
      recoveryHint: `Publish only paths at or below: ${approved.join(", ") || "none"}.`,
      details: { path: p, approved },
    },
  );
}

// A move whose two ends are not both selected is published as what happens at each end.
function split(change: FileChange): FileChange[] {
  if (change.change !== "moved" || change.from === undefined) return [change];
  return [
    { path: change.from, change: "deleted", before: change.before, after: null },
    { path: change.path, change: "created", before: null, after: change.after },
  ];
}

/** `filesystemChanges` of a publish call, put into the result's metadata by the session hook below. */
const recorded = new WeakMap<SessionBase, Map<string, FileChange[]>>();

function recordInMetadata(session: SessionBase, name: string, callId: string | undefined, changes: FileChange[]) {
  let calls = recorded.get(session);
  if (calls === undefined) {
    calls = new Map();
    recorded.set(session, calls);
    const hook: AfterCallHook = ({ result }) => {
      const key = `${result.toolName}\0${result.callId ?? ""}`;
      const found = calls!.get(key);
      if (found === undefined) return;
      calls!.delete(key);
      return { ...result, metadata: { ...result.metadata, filesystemChanges: found } };
    };
    session.hooks.after.push(hook);
  }
  calls.set(`${name}\0${callId ?? ""}`, changes);
}

/**
 * Makes the `publish` tool for one scratch copy, with the input digest and
 * paths its caller approved. Opt-in: it is in no default group; register it
 * with the toolbox that serves the scratch session. A call
 *
 * 1. refuses (`digest_mismatch`) when the copy's input digest is not the
 *    approved one, or not the one the call names;
 * 2. refuses (`path_not_approved`) when a requested path lies outside the
 *    approved set; changes outside it stay in the copy and are listed;
 * 3. refuses (`host_changed`) when a workspace file changed since the copy was
 *    made, naming each and its hashes, so nothing a person did is overwritten;
 * 4. shows the person the diff through the session's host (MCP elicitation
 *    when served) and applies only on a yes (`not_approved` otherwise); a
 *    change to a protected path is never answered automatically;
 * 5. applies every change or none (see `Scratch.publish`) and reports them as
 *    `filesystemChanges`, in the output and in the result's metadata.
 *
 * Requires `--allow-read` and `--allow-write` for the workspace and the copy.
 *
 * @example
 * ```ts
 * import { createScratch, ToolBox } from "@toolfence/toolfence";
 * import { publishTool } from "@toolfence/tools";
 * const workdir = await Deno.makeTempDir();
 * const scratch = await createScratch(workdir, { session: { autoConfirm: true } });
 * const box = new ToolBox().withDefaults("fs").register(publishTool(scratch, { digest: scratch.digest }));
 * await box.call(scratch.session, "write_file", { path: "notes.md", content: "hi\n" });
 * const result = await box.call(scratch.session, "publish", {});
 * console.log(result.status, await Deno.readTextFile(`${workdir}/notes.md`)); // success hi
 * await scratch.dispose();
 * ```
 */
export function publishTool(scratch: Scratch, options: PublishToolOptions): Tool<PublishArgs> {
  if (typeof options?.digest !== "string" || !/^[0-9a-f]{64}$/.test(options.digest)) {
    throw new TypeError("publishTool needs the approved input digest: 64 lowercase hex digits (Scratch.digest)");
  }
  const approved = (options.paths ?? scratch.paths).map((p) => relativePath(p, scratch));
  const name = options.name ?? "publish";
  return tool({
    name,
    description: "Publish the changes made in this scratch copy to the user's real workspace.\n" +
      "Everything you change here (edits, patches, deletions, commands) stays in the copy until a publication. " +
      "The user is shown the diff and must agree; only the approved paths are published " +
      `(${approved.join(", ")}), all or nothing, and never over a file changed in the workspace meanwhile. ` +
      `The copy's input digest is ${scratch.digest}. Pass preview: true to see the diff without publishing.`,
    input: v.object({
      paths: v.optional(
        v.pipe(
          v.array(v.pipe(v.string(), v.minLength(1))),
          v.minLength(1),
          v.description("Publish only the changes at or below these paths (relative); default all approved changes"),
        ),
      ),
      digest: v.optional(
        v.pipe(
          v.string(),
          v.regex(/^[0-9a-fA-F]{64}$/, "Expected 64 hex digits (the scratch copy's input digest)"),
          v.description("The input digest you expect the scratch copy to have; refused when it differs"),
        ),
      ),
      preview: v.optional(v.pipe(v.boolean(), v.description("Only show the diff; publish nothing"))),
    }),
    output: PUBLISH_OUTPUT,
    destructive: true,
    recordsFileChanges: true,
    needs: { read: ["workspace", scratch.host.workdir], write: ["workspace", scratch.host.workdir] },
    async run(args, ctx): Promise<PublishResult> {
      if (scratch.digest !== options.digest) throw digestMismatch(options.digest, scratch.digest, "approved digest");
      if (args.digest !== undefined && args.digest.toLowerCase() !== scratch.digest) {
        throw digestMismatch(args.digest.toLowerCase(), scratch.digest, "expected digest");
      }
      const requested = args.paths?.map((p) => {
        const relative = relativePath(p, scratch);
        if (!within(relative, approved)) throw notApproved(p, approved);
        return relative;
      }) ?? approved;
      // Only what may be published is hashed (within the copy's bounds): a large file elsewhere costs nothing.
      const { changes, unpublishable } = await scratch.changes({ hashOnly: requested });
      const selected: FileChange[] = [];
      const notPublished: string[] = [];
      for (const change of changes) {
        const chosen = (p: string) => within(p, approved) && within(p, requested);
        const whole = [change.path, ...(change.from ? [change.from] : [])].every(chosen);
        for (const part of whole ? [change] : split(change)) {
          if (chosen(part.path)) selected.push(part);
          else notPublished.push(part.path);
        }
      }
      const result = (published: boolean, filesystemChanges: FileChange[], diff: string): PublishResult => ({
        published,
        digest: scratch.digest,
        filesystemChanges,
        diff,
        notPublished,
        unpublishable: unpublishable.filter((p) => within(p, requested)),
      });
      if (selected.length === 0) return result(false, [], "");
      // Refused before anyone is asked (and before the diff reads anything); the publication checks again as it goes.
      scratch.requirePublishable(selected);
      await scratch.requireUnchanged(selected);
      const patterns = scratch.session.policy.protectedPaths;
      const isProtected = (p: string) => isProtectedPath(p, patterns);
      const diff = await publicationDiff(scratch, selected, isProtected);
      if (args.preview) return result(false, selected, diff.text);
      // A protected path, or a link that would lead out of the workspace, is never answered automatically.
      const touchesProtected = selected.some((c) => marksOf(scratch, c, isProtected).marks.length > 0);
      const answer = await ctx.session.confirmOutcome({
        title: "Publish the scratch copy",
        message: `Apply ${selected.length} change(s) from the scratch copy to ${scratch.host.workdir}?` +
          (touchesProtected ? " Some touch protected paths or make links that lead outside it." : "") +
          `\n\n${diff.text}`,
        defaultChoice: true,
        requirePerson: touchesProtected,
      }, ctx.signal);
      if (!answer.choice) {
        throw new ToolError("Nothing was published: the user declined the publication", {
          code: "not_approved",
          recoveryHint: "Ask the user what to change before publishing again.",
          details: { changes: selected.length },
        });
      }
      ctx.signal.throwIfAborted();
      // Protected paths are published only on a person's word (requirePerson above).
      const applied = await scratch.publish(selected, {
        signal: ctx.signal,
        personApproved: touchesProtected && answer.source === "user",
      });
      const recorder = (ctx as unknown as { recordFileChange?: (change: FileChange) => void }).recordFileChange;
      if (typeof recorder === "function") { for (const change of applied) recorder.call(ctx, change); }
      recordInMetadata(ctx.session, name, ctx.callId, applied);
      return result(true, applied, diff.text);
    },
  });
}
