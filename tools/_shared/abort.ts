/**
 * What a tool does when its call is aborted, also when the abort came before
 * it started listening: an aborted signal never fires its event again, so a
 * listener added after the abort would wait for ever (a stopped `bash_wait`
 * waited out its timeout, a stopped risk assessment ran its model to the end).
 *
 * @module
 */

/** Calls `action` on `signal`'s abort, at once when it is aborted already; returns the function that stops listening. */
export function whenAborted(signal: AbortSignal | undefined, action: () => void): () => void {
  if (signal === undefined) return () => {};
  if (signal.aborted) {
    action();
    return () => {};
  }
  signal.addEventListener("abort", action, { once: true });
  return () => signal.removeEventListener("abort", action);
}

/** Terminates `process` on `signal`'s abort, at once when it is aborted already; returns the function that stops listening. */
export function stopOnAbort(signal: AbortSignal, process: { terminate(): Promise<void> }): () => void {
  return whenAborted(signal, () => void process.terminate());
}

/** `work`'s outcome, or `signal`'s reason as a rejection once it aborts (at once when it is aborted already). */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const release = whenAborted(signal, () => reject(signal.reason));
    work.then(resolve, reject).finally(release);
  });
}
