// Calls per minute per token: a sliding window of start times per key, so a
// burst at the end of one minute and the start of the next is still counted
// as one minute's worth.

/** A per-key limit of `limit` events per `windowMs`. */
export class RateLimiter {
  readonly limit: number;
  readonly #windowMs: number;
  readonly #starts = new Map<string, number[]>();

  constructor(limit: number, windowMs: number) {
    this.limit = limit;
    this.#windowMs = windowMs;
  }

  /** Counts one event for `key`; 0 when allowed, else the milliseconds until one would be. */
  take(key: string, now = Date.now()): number {
    const starts = (this.#starts.get(key) ?? []).filter((at) => now - at < this.#windowMs);
    if (starts.length >= this.limit) {
      this.#starts.set(key, starts);
      return Math.max(1, this.#windowMs - (now - starts[0]));
    }
    starts.push(now);
    this.#starts.set(key, starts);
    return 0;
  }
}
