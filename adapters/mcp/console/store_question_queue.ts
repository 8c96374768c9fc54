/**
 * The questions waiting for a person, in the store a fleet of server replicas
 * shares: the console of every replica shows every question of the tenant,
 * and an answer given on any replica reaches the call waiting on its own.
 *
 * @module
 */

import type { Store, StoredQuestion } from "@toolfence/core";
import type { AnswerRefusal, PendingQuestion, QuestionInit, QuestionQueue } from "./question_queue.ts";
import { replicaAlive, unrefTimer } from "../_replica_liveness.ts";

/** Options of {@linkcode StoreQuestionQueue}. */
export interface StoreQuestionQueueOptions {
  /**
   * This replica's name in the store (the server's `replicaId`): a question
   * asked by a replica that is gone (its heartbeat silent) waits no more.
   * Without it, questions carry no replica and are never hidden for that.
   */
  replica?: string;
  /** How often answers and changes made elsewhere are looked for, in ms; default 250. */
  pollMs?: number;
}

/** Who withdrew a question whose call stopped waiting (as an answer, so that a later one cannot win). */
const WITHDRAWN = "withdrawn";
const DEFAULT_POLL_MS = 250;

interface Waiter {
  tenant: string;
  settle(choice: string): void;
}

/**
 * A {@linkcode QuestionQueue} in a {@linkcode Store}: each question is kept
 * there for its tenant, the first answer wins (a person's on any replica, or
 * the withdrawal when its call is cancelled or times out), and a replica
 * learns of an answer or a change made elsewhere by asking the store every
 * `pollMs` while a call of its own waits or a console watches. Another
 * tenant's question is as unknown as a guessed id.
 *
 * Requires what the store needs (see `openStore`).
 *
 * @example
 * ```ts
 * import { MemoryStore } from "@toolfence/core";
 * import { StoreQuestionQueue } from "@toolfence/adapters/console";
 * const queue = new StoreQuestionQueue(new MemoryStore());
 * const answer = queue.ask({
 *   tenant: "alice",
 *   title: "Command confirmation",
 *   message: "Run rm -rf build?",
 *   options: [{ value: "once", label: "Allow" }, { value: "deny", label: "Deny" }],
 *   defaultChoice: "deny",
 * }, new AbortController().signal);
 * const [question] = await queue.pending("alice");
 * await queue.answer("alice", question.id, "once");
 * console.log(await answer); // once
 * ```
 */
export class StoreQuestionQueue implements QuestionQueue {
  readonly #store: Store;
  readonly #replica: string | undefined;
  readonly #pollMs: number;
  readonly #waiting = new Map<string, Waiter>();
  readonly #listeners = new Map<string, Set<() => void>>();
  /** Per watched tenant: the pending ids last seen, to tell a change made elsewhere. */
  readonly #seen = new Map<string, string>();
  #timer: ReturnType<typeof setInterval> | undefined;
  #polling = false;

  /**
   * A queue over `store`'s questions; `options.replica` names this replica (its questions drop off the consoles
   * when its heartbeat stops) and `options.pollMs` how often a replica with a waiting call or an open console looks
   * for answers and changes made elsewhere.
   */
  constructor(store: Store, options: StoreQuestionQueueOptions = {}) {
    this.#store = store;
    this.#replica = options.replica;
    this.#pollMs = options.pollMs ?? DEFAULT_POLL_MS;
  }

  /** See {@linkcode QuestionQueue.ask}. */
  ask(init: QuestionInit, signal: AbortSignal): Promise<string> {
    if (signal.aborted) return Promise.reject(signal.reason);
    const id = crypto.randomUUID();
    const { tenant, session, ...asked } = init;
    return new Promise<string>((resolve, reject) => {
      let left = false;
      const leave = () => {
        left = true;
        signal.removeEventListener("abort", onAbort);
        this.#waiting.delete(id);
        this.#schedule();
        this.#changed(tenant);
      };
      const onAbort = () => {
        if (left) return;
        leave();
        reject(signal.reason);
        // Withdrawn on every replica: an answer that was not first is no answer.
        void this.#store.answerQuestion(tenant, id, null, WITHDRAWN, Date.now()).catch(() => {})
          .then(() => this.#changed(tenant));
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.#store.askQuestion({
        id,
        tenant,
        sessionId: session ?? "",
        question: { ...asked, ...(this.#replica ? { replica: this.#replica } : {}) },
        askedAt: Date.now(),
        answer: null,
        answeredBy: null,
        answeredAt: null,
      }).then(() => {
        if (left) {
          // Cancelled while it was being kept: withdrawn now that it is there.
          void this.#store.answerQuestion(tenant, id, null, WITHDRAWN, Date.now()).catch(() => {});
          return;
        }
        this.#waiting.set(id, {
          tenant,
          settle: (choice) => {
            if (left) return;
            leave();
            resolve(choice);
          },
        });
        this.#schedule();
        this.#changed(tenant);
      }, (error) => {
        if (left) return;
        leave();
        reject(error);
      });
    });
  }

  /** See {@linkcode QuestionQueue.pending}. */
  async pending(tenant: string): Promise<PendingQuestion[]> {
    const shown: PendingQuestion[] = [];
    const alive = new Map<string, boolean>();
    const now = Date.now();
    for (const stored of await this.#store.pendingQuestions(tenant)) {
      const question = pendingOf(stored);
      if (question.expires !== undefined && Date.parse(question.expires) <= now) continue;
      const replica = stored.question.replica;
      if (typeof replica === "string" && replica !== this.#replica) {
        if (!alive.has(replica)) alive.set(replica, await replicaAlive(this.#store, replica));
        if (!alive.get(replica)) continue;
      }
      shown.push(question);
    }
    return shown;
  }

  /** See {@linkcode QuestionQueue.answer}. */
  async answer(tenant: string, id: string, choice: string): Promise<true | AnswerRefusal> {
    const waiting = (await this.pending(tenant)).find((question) => question.id === id);
    if (!waiting) return "unknown";
    if (!waiting.options.some((option) => option.value === choice)) return "invalid_choice";
    if (!await this.#store.answerQuestion(tenant, id, choice, "person", Date.now())) return "unknown";
    // A call waiting here gets it at once; one on another replica at that replica's next look.
    this.#waiting.get(id)?.settle(choice);
    this.#changed(tenant);
    return true;
  }

  /** See {@linkcode QuestionQueue.watch}. */
  watch(tenant: string, listener: () => void): () => void {
    let set = this.#listeners.get(tenant);
    if (!set) this.#listeners.set(tenant, set = new Set());
    set.add(listener);
    // The first look tells of any question waiting (a watcher reads the queue when it starts; once more is harmless).
    if (!this.#seen.has(tenant)) this.#seen.set(tenant, "");
    this.#schedule();
    return () => {
      set.delete(listener);
      if (set.size === 0) {
        this.#listeners.delete(tenant);
        this.#seen.delete(tenant);
      }
      this.#schedule();
    };
  }

  // The store is asked only while something here waits for it: a call's answer, or a console's changes.
  #schedule(): void {
    const needed = this.#waiting.size > 0 || this.#listeners.size > 0;
    if (needed && this.#timer === undefined) {
      this.#timer = setInterval(() => void this.#poll(), this.#pollMs);
      unrefTimer(this.#timer);
    } else if (!needed && this.#timer !== undefined) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }

  async #poll(): Promise<void> {
    if (this.#polling) return;
    this.#polling = true;
    try {
      for (const [id, waiter] of [...this.#waiting]) {
        const stored = await this.#store.question(waiter.tenant, id).catch(() => undefined);
        if (stored && stored.answeredAt !== null && stored.answeredBy !== WITHDRAWN) {
          waiter.settle(String(stored.answer));
        }
      }
      for (const tenant of [...this.#listeners.keys()]) {
        const ids = (await this.pending(tenant).catch(() => undefined))?.map((question) => question.id).join(",");
        if (ids === undefined || !this.#listeners.has(tenant)) continue;
        const before = this.#seen.get(tenant);
        this.#seen.set(tenant, ids);
        if (before !== ids) this.#changed(tenant);
      }
    } finally {
      this.#polling = false;
    }
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

function pendingOf(stored: StoredQuestion): PendingQuestion {
  const { replica: _replica, ...asked } = stored.question as Omit<QuestionInit, "tenant"> & { replica?: string };
  return {
    ...asked,
    tenant: stored.tenant,
    ...(stored.sessionId ? { session: stored.sessionId } : {}),
    id: stored.id,
    asked: new Date(stored.askedAt).toISOString(),
  };
}
