// Long looks at a folder tree on the server's one thread, cut into slices so that the event loop runs between them.

import { setImmediate } from "node:timers";

/**
 * How long a look at the workspace works on the server's thread before it lets the event loop run (another
 * session's call, an MCP ping, a timer). A look over a large workspace was one synchronous stretch: after an inotify
 * queue overflow at 190,000 files the rescan and the change report held the loop 5 to 11 s, and every other session
 * of the server waited (an `echo hi` of another session took 6 s instead of 40 ms).
 */
export const SLICE_MS = 10;

/** A clock of the work done since the event loop last ran: `pause()` lets it run once a slice is used. */
export interface Slicer {
  /** Undefined while the slice lasts; once it is used, a promise that settles after the event loop has run once. */
  pause(): Promise<void> | undefined;
}

/**
 * A {@linkcode Slicer} whose slice starts now.
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import { slicer } from "@toolfence/internal";
 * const slice = slicer();
 * for (let i = 0; i < 1000; i++) {
 *   const pause = slice.pause();
 *   if (pause) await pause;
 * }
 * ```
 */
export function slicer(): Slicer {
  let since = performance.now();
  return {
    pause() {
      if (performance.now() - since < SLICE_MS) return undefined;
      // setImmediate, not setTimeout(0): a chain of zero timeouts is clamped to 4 ms each after the fifth (2.2 ms a
      // yield measured here), which doubled a sandbox-off command's scan of 10,000 files (103 to 204 ms); timers and
      // I/O still run between slices (an interval of 5 ms fired 20 times in 200 ms of 10 ms slices).
      return new Promise<void>((resolve) => setImmediate(resolve)).then(() => void (since = performance.now()));
    },
  };
}
