/**
 * A `node --test` reporter for scripts/build_npm.ts, beside the TAP one: one
 * JSON line per event that tells which results of which test file reached
 * the runner. With process isolation each file's child process sends its
 * events to the runner over its stdout, and frames lost on the way take their
 * tests with them without a failure (nodejs/node#48103); the build compares
 * what arrived with the child's own closing counts (its `test:summary`).
 *
 * Plain JavaScript: Node loads it as it is (the build copies it into npm/).
 *
 * @module
 */

/** The events kept: results at every depth, the rest at the top only. */
const KEPT = new Set(["test:enqueue", "test:pass", "test:fail", "test:complete", "test:summary"]);

/**
 * The reporter: reads node's events, yields JSON lines.
 *
 * @param {AsyncIterable<{ type: string, data?: Record<string, any> }>} source
 */
export default async function* nodeResultsReporter(source) {
  for await (const event of source) {
    const data = event.data ?? {};
    if (!KEPT.has(event.type)) continue;
    const isResult = event.type === "test:pass" || event.type === "test:fail";
    if (!isResult && event.type !== "test:summary" && data.nesting !== 0) continue;
    // The runner's own closing summary names no file; only the children's are kept.
    if (event.type === "test:summary" && data.file === undefined) continue;
    yield JSON.stringify({
      type: event.type,
      // Node 24 names the file the child ran (entryFile); Node 22 the file that declared the test.
      file: data.entryFile ?? data.file,
      name: data.name,
      nesting: data.nesting,
      kind: data.details?.type,
      skip: data.skip !== undefined || undefined,
      todo: data.todo !== undefined || undefined,
      failureType: data.details?.error?.failureType,
      counts: data.counts,
      // On a child's test:summary: how long its file ran, for the weights of the next runs' shares.
      durationMs: event.type === "test:summary" ? data.duration_ms : undefined,
    }) + "\n";
  }
}
