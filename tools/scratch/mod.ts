/**
 * The scratch tools: `publish`, which brings the changes of a scratch copy
 * (see `createScratch` in `@toolfence/policy`) over to the workspace. Opt-in:
 * in no default group, built for one scratch copy.
 *
 * @example
 * ```ts
 * import { createScratch } from "@toolfence/policy";
 * import { publishTool } from "@toolfence/tools";
 * const scratch = await createScratch(await Deno.makeTempDir());
 * console.log(publishTool(scratch, { digest: scratch.digest }).name); // publish
 * await scratch.dispose();
 * ```
 *
 * @module
 */

export { type PublishArgs, type PublishResult, publishTool, type PublishToolOptions } from "./publish.ts";
