/**
 * Whether a promise settles (either way) within a time: for the waits that must not outlast a bound (a process's
 * exit, a look before a sandbox is ended). Not public API.
 *
 * @module
 */

/** Whether `work` settles (fulfilled or rejected) within `ms`; the timer is cleared as soon as it does. */
export function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<boolean>((done) => (timer = setTimeout(() => done(false), ms)));
  return Promise.race([work.then(() => true, () => true), late]).finally(() => clearTimeout(timer));
}
