/**
 * The session's call gate: how calls that arrive one by one (a framework's
 * parallel tool execution, AI SDK executions, MCP requests) get the segment
 * semantics `callMany` gives a batch. Concurrency-safe calls run together, any
 * other call runs alone, and no call overtakes one that arrived earlier.
 *
 * @module
 */

interface Waiter {
  shared: boolean;
  start: () => void;
}

/**
 * A first-come, first-served readers-writer gate. Every session has one,
 * {@linkcode SessionBase.callGate}; an adapter that lets a framework run tool
 * calls in parallel passes each call through it, marked shared when the tool
 * is concurrency-safe (`isConcurrencySafe(tool)`), so that, for example, 8
 * parallel `edit_file` calls of one file run one after the other, in the order
 * the framework started them, and all succeed.
 *
 * Needs no permissions.
 *
 * @example
 * ```ts
 * import { CallGate } from "@toolfence/core";
 * const gate = new CallGate();
 * const order: string[] = [];
 * const task = (name: string) => async () => {
 *   order.push(`${name} starts`);
 *   await new Promise((done) => setTimeout(done, 5));
 *   order.push(`${name} ends`);
 * };
 * await Promise.all([gate.run(false, task("a")), gate.run(false, task("b"))]);
 * console.log(order); // ["a starts", "a ends", "b starts", "b ends"]
 * ```
 */
export class CallGate {
  #running = 0;
  #exclusive = false;
  #queue: Waiter[] = [];

  /**
   * Runs `task` when the gate lets it: together with other shared tasks when
   * `shared`, else alone. Tasks start in the order `run` was called.
   *
   * A task whose `signal` aborts while it waits leaves the queue and starts at
   * once, outside the gate: its caller was stopped, and must not wait for the
   * calls ahead of it (another conversation's command, up to its timeout). Such
   * a task must do nothing once its signal has aborted, as `toolbox.call` does
   * (it answers `cancelled`, "Not run", before anything of the call happens).
   */
  async run<R>(shared: boolean, task: () => Promise<R>, signal?: AbortSignal): Promise<R> {
    const admitted = await new Promise<boolean>((start) => {
      if (signal?.aborted) return start(false);
      const leave = () => {
        const index = this.#queue.indexOf(waiter);
        if (index === -1) return;
        this.#queue.splice(index, 1);
        // It may have been the exclusive task that held back shared ones behind it.
        this.#pump();
        start(false);
      };
      const waiter: Waiter = {
        shared,
        start: () => {
          signal?.removeEventListener("abort", leave);
          start(true);
        },
      };
      signal?.addEventListener("abort", leave, { once: true });
      this.#queue.push(waiter);
      this.#pump();
    });
    if (!admitted) return await task();
    try {
      return await task();
    } finally {
      this.#running--;
      this.#exclusive = false;
      this.#pump();
    }
  }

  #pump(): void {
    while (this.#queue.length > 0 && !this.#exclusive) {
      const next = this.#queue[0];
      if (!next.shared && this.#running > 0) return;
      this.#queue.shift();
      this.#running++;
      this.#exclusive = !next.shared;
      next.start();
    }
  }
}
