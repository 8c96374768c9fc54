/**
 * Stops a started process when its call is aborted, also when the abort came
 * before the listener could be added (an aborted signal never fires again).
 *
 * @module
 */

/**
 * Terminates `process` on `signal`'s abort, at once when it is aborted
 * already; returns the function that stops listening.
 */
export function stopOnAbort(signal: AbortSignal, process: { terminate(): Promise<void> }): () => void {
  const onAbort = () => void process.terminate();
  if (signal.aborted) {
    onAbort();
    return () => {};
  }
  signal.addEventListener("abort", onAbort, { once: true });
  return () => signal.removeEventListener("abort", onAbort);
}
