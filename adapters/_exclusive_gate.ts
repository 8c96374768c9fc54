// A first-come, first-served readers-writer gate: tasks marked shared run
// together, any other task runs alone, and nobody overtakes a task that
// arrived earlier. It gives calls that arrive one by one (AI SDK executions)
// the segment semantics `callMany` gives a batch.

interface Waiter {
  shared: boolean;
  start: () => void;
}

export class ExclusiveGate {
  #running = 0;
  #exclusive = false;
  #queue: Waiter[] = [];

  /** Runs `task` when the gate lets it: with other shared tasks, or alone. */
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
