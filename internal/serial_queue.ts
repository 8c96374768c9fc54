/**
 * One task at a time, in the order given.
 *
 * @module
 */

/**
 * A queue that runs the tasks given to it one at a time, in order: each
 * starts once the one before it has settled (resolved or rejected), and its
 * outcome is its own caller's alone.
 *
 * @example
 * ```ts
 * import { serialQueue } from "@toolfence/internal";
 * const serially = serialQueue();
 * const order: number[] = [];
 * await Promise.all([1, 2, 3].map((n) => serially(async () => void order.push(n))));
 * console.log(order); // [1, 2, 3]
 * ```
 */
export function serialQueue(): <T>(task: () => Promise<T>) => Promise<T> {
  let last: Promise<unknown> = Promise.resolve();
  return (task) => {
    const next = last.then(task);
    last = next.catch(() => {});
    return next;
  };
}
