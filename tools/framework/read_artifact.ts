/**
 * The `read_artifact` tool.
 *
 * @module
 */

import * as v from "valibot";
import { type ArtifactWindow, readArtifactWindow } from "@toolfence/core";
import { type Tool, tool } from "@toolfence/core";
import { READ_ARTIFACT_OUTPUT } from "./_outputs.ts";

/** Arguments of `read_artifact`, after defaults. */
export interface ReadArtifactArgs {
  /** The artifact id, `sha256:` and 64 hex digits, as named in the marker (or its URI `artifact://sha256/<hex>`). */
  id: string;
  /** First character to read, from 0. */
  offset: number;
  /** How many characters to read, at most {@linkcode MAX_ARTIFACT_WINDOW}. */
  limit: number;
}

/** The most characters one `read_artifact` call returns, below the default output cap. */
export const MAX_ARTIFACT_WINDOW = 30_000;

/**
 * `read_artifact(id, offset = 0, limit = 20000)`: a window of a text artifact
 * of this session, e.g. the whole output of a call that was cut. `offset` and
 * `limit` count characters; the result says where the next window starts.
 *
 * Requires no permissions (a file artifact store needs `--allow-read` for its folder).
 *
 * @example
 * ```ts
 * import { Session, ToolBox } from "@toolfence/toolfence";
 * import { readArtifactTool } from "@toolfence/tools";
 * const session = new Session({ workspace: Deno.cwd() });
 * const { id } = await session.artifacts.put("a long text");
 * const result = await new ToolBox().register(readArtifactTool).call(session, "read_artifact", { id, offset: 2, limit: 4 });
 * console.log(result.output); // { id, content: "long", offset: 2, totalChars: 11, nextOffset: 6 }
 * await session.close();
 * ```
 */
export const readArtifactTool: Tool<ReadArtifactArgs> = tool({
  name: "read_artifact",
  sessionState: true,
  description: "Read part of an artifact: the whole output of an earlier call that was cut (its marker names " +
    "the artifact id). offset and limit count characters; nextOffset in the result is where to continue.",
  input: v.object({
    id: v.pipe(
      v.string(),
      v.description(
        'The artifact id, "sha256:" and 64 hex digits, as named in the marker, or its URI artifact://sha256/<hex>.',
      ),
    ),
    offset: v.optional(
      v.pipe(v.number(), v.integer(), v.minValue(0), v.description("First character to read, from 0. Default 0.")),
      0,
    ),
    limit: v.optional(
      v.pipe(
        v.number(),
        v.integer(),
        v.minValue(1),
        v.maxValue(MAX_ARTIFACT_WINDOW),
        v.description(`How many characters to read, at most ${MAX_ARTIFACT_WINDOW}. Default 20000.`),
      ),
      20_000,
    ),
  }),
  output: READ_ARTIFACT_OUTPUT,
  idempotent: true,
  effects: ["reads"],
  needs: {},
  run: ({ id, offset, limit }, ctx): Promise<ArtifactWindow> =>
    readArtifactWindow(ctx.artifacts, id, { offset, limit }),
});
