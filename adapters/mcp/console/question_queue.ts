/**
 * The questions waiting for a person, per tenant: what the web console shows
 * and answers. {@linkcode QuestionQueue} is the small interface the console
 * host and the console server use; {@linkcode MemoryQuestionQueue} keeps them
 * in this process, `StoreQuestionQueue` in a store shared by several server
 * replicas.
 *
 * @module
 */

import type { QuestionSubject } from "@toolfence/core";

/** One answer a person may give. */
export interface QuestionOption {
  /** The value the asking call receives. */
  value: string;
  /** What the person sees. */
  label: string;
}

/** What is asked: a question of the policy, as the console shows it. */
export interface QuestionInit {
  /** The tenant whose call asks; only that tenant's person sees it. */
  tenant: string;
  /** Short heading, e.g. `Command confirmation`. */
  title: string;
  /** The question itself. */
  message: string;
  /** The answers, in display order (`yes` and `no` for a yes/no question). */
  options: readonly QuestionOption[];
  /** The answer offered as the default. */
  defaultChoice: string;
  /** What it is about: the tool, the command or path, the rule, the reasons, a write's texts. */
  about?: QuestionSubject;
  /** When the question stops waiting (ISO time), if it has a limit. */
  expires?: string;
  /** The MCP session whose call asks, when known. */
  session?: string;
}

/** A question waiting for its answer. */
export interface PendingQuestion extends QuestionInit {
  /** Its id, unguessable. */
  id: string;
  /** When it was asked (ISO time). */
  asked: string;
}

/** Why {@linkcode QuestionQueue.answer} did not take an answer. */
export type AnswerRefusal = "unknown" | "invalid_choice";

/**
 * Where questions wait. `ask` resolves with the chosen option's value, or
 * rejects with the signal's reason once it aborts; either way the question
 * leaves the queue (no waiter is left behind).
 */
export interface QuestionQueue {
  /** Puts a question in the queue and waits for its answer. */
  ask(question: QuestionInit, signal: AbortSignal): Promise<string>;
  /** The questions waiting for `tenant`, oldest first. */
  pending(tenant: string): PendingQuestion[] | Promise<PendingQuestion[]>;
  /**
   * Answers `tenant`'s question `id` with `choice`: `true` when the waiting
   * call got it, else why not (another tenant's question is `unknown`, as a
   * guessed id is).
   */
  answer(tenant: string, id: string, choice: string): true | AnswerRefusal | Promise<true | AnswerRefusal>;
  /** Calls `listener` whenever `tenant`'s queue changes; returns the function that stops it. */
  watch(tenant: string, listener: () => void): () => void;
}

interface Waiter {
  question: PendingQuestion;
  settle(choice: string): void;
}

/**
 * A {@linkcode QuestionQueue} in memory: questions live as long as their
 * asking call waits in this process.
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import { MemoryQuestionQueue } from "@toolfence/adapters/console";
 * const queue = new MemoryQuestionQueue();
 * const answer = queue.ask({
 *   tenant: "alice",
 *   title: "Command confirmation",
 *   message: "Run rm -rf build?",
 *   options: [{ value: "once", label: "Allow" }, { value: "deny", label: "Deny" }],
 *   defaultChoice: "deny",
 * }, new AbortController().signal);
 * const [question] = queue.pending("alice");
 * queue.answer("alice", question.id, "once");
 * console.log(await answer); // once
 * ```
 */
export class MemoryQuestionQueue implements QuestionQueue {
  readonly #waiting = new Map<string, Waiter>();
  readonly #listeners = new Map<string, Set<() => void>>();

  /** See {@linkcode QuestionQueue.ask}. */
  ask(init: QuestionInit, signal: AbortSignal): Promise<string> {
    if (signal.aborted) return Promise.reject(signal.reason);
    const question: PendingQuestion = { ...init, id: crypto.randomUUID(), asked: new Date().toISOString() };
    return new Promise<string>((resolve, reject) => {
      const leave = () => {
        signal.removeEventListener("abort", onAbort);
        this.#waiting.delete(question.id);
        this.#changed(question.tenant);
      };
      const onAbort = () => {
        leave();
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.#waiting.set(question.id, {
        question,
        settle: (choice) => {
          leave();
          resolve(choice);
        },
      });
      this.#changed(question.tenant);
    });
  }

  /** See {@linkcode QuestionQueue.pending}. */
  pending(tenant: string): PendingQuestion[] {
    return [...this.#waiting.values()].map((w) => w.question).filter((q) => q.tenant === tenant);
  }

  /** See {@linkcode QuestionQueue.answer}. */
  answer(tenant: string, id: string, choice: string): true | AnswerRefusal {
    const waiter = this.#waiting.get(id);
    if (!waiter || waiter.question.tenant !== tenant) return "unknown";
    if (!waiter.question.options.some((option) => option.value === choice)) return "invalid_choice";
    waiter.settle(choice);
    return true;
  }

  /** See {@linkcode QuestionQueue.watch}. */
  watch(tenant: string, listener: () => void): () => void {
    let set = this.#listeners.get(tenant);
    if (!set) this.#listeners.set(tenant, set = new Set());
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.#listeners.delete(tenant);
    };
  }

  #changed(tenant: string): void {
    for (const listener of [...this.#listeners.get(tenant) ?? []]) {
      try {
        listener();
      } catch {
        // A watcher that fails must not stop the others or the answer.
      }
    }
  }
}
