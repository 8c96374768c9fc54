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
   */
  async run<R>(shared: boolean, task: () => Promise<R>): Promise<R> {
    await new Promise<void>((start) => {
      this.#queue.push({ shared, start });
      this.#pump();
    });
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
