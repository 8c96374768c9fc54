// A budget of bytes held in memory at once by the reads of this process (all sessions and tenants share the memory
// they use): a read takes its bytes before it reads, waits first come first served while they are not free, and gives
// them back once its copies are gone. One bigger than the whole budget takes all of it and runs alone.

/** A first-come first-served budget of bytes. */
export class ByteBudget {
  #free: number;
  readonly #queue: { bytes: number; grant: () => void }[] = [];

  /** A budget of `total` bytes. */
  constructor(readonly total: number) {
    this.#free = total;
  }

  /** Waits until `bytes` (at most the whole budget) are free, and takes them; the function gives them back (once). */
  async take(bytes: number): Promise<() => void> {
    const wanted = Math.min(bytes, this.total);
    if (this.#queue.length === 0 && this.#free >= wanted) this.#free -= wanted;
    else await new Promise<void>((grant) => this.#queue.push({ bytes: wanted, grant }));
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.#free += wanted;
      while (this.#queue.length > 0 && this.#free >= this.#queue[0].bytes) {
        const next = this.#queue.shift()!;
        this.#free -= next.bytes;
        next.grant();
      }
    };
  }
}
