/**
 * A small seeded generator (mulberry32) for the generated tests, so that a
 * failure reproduces from its printed seed.
 *
 * @module
 */

/** Returns a generator of numbers in [0, 1) determined by `seed`. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), state | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
