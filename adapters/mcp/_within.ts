/** Settles when `work` settles (either way) or after `ms`, whichever is first. */
export function within(ms: number, work: Promise<unknown>): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<void>((done) => (timer = setTimeout(done, ms)));
  return Promise.race([work.then(() => {}, () => {}), deadline]).finally(() => clearTimeout(timer));
}
