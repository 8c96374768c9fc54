/**
 * When a file's stat (device, inode, size, modification and status-change
 * times) names its content: only once its status-change time is older than
 * any the file could be given now. Times come from the kernel's coarse clock
 * and some file systems keep whole seconds (Deno's stat gives milliseconds),
 * and Linux hands a freed inode number to the next file at once, so a file
 * rewritten in place, or deleted and made again with the same size, within
 * one tick keeps its stat with other bytes (git calls such an index entry
 * "racily clean"). A cache keyed by a stat keeps only settled ones.
 *
 * @module
 */

/**
 * How much older than the moment its stat was taken a file's status-change
 * time must be for the stat to name its content: more than the coarsest
 * clock a workspace's file system is likely to keep (whole seconds on ext4
 * with small inodes, two on FAT).
 */
export const RACY_MS = 2_000;

/**
 * Whether a file whose status-change time is `ctimeMs`, stat'ed at `statAt`
 * (wall-clock milliseconds, taken before the stat), gets another stat from
 * any change after it: a cache keyed by that stat may keep what it read.
 *
 * @example
 * ```ts
 * import { isSettled, RACY_MS } from "@toolfence/core";
 * const now = Date.now();
 * console.log(isSettled(now - RACY_MS - 1, now)); // true
 * console.log(isSettled(now - 5, now)); // false: a change within the tick may keep the stat
 * ```
 */
export function isSettled(ctimeMs: number, statAt: number): boolean {
  return ctimeMs <= statAt - RACY_MS;
}
