/**
 * A host whose questions wait in the web console for a person of the asking
 * tenant (see {@linkcode QuestionQueue}).
 *
 * With an elicitation host beside it, both are asked at once and the first
 * answer that counts wins; the other question is withdrawn (the console's
 * leaves the page, the client's elicitation is cancelled). An elicitation
 * that cannot ask (a client without elicitation, `answers.elicitation`
 * `refuse`) is no answer: the console keeps waiting. Nor is the client's
 * answer to a question only a person may answer (`requirePerson`): the MCP
 * client may answer for itself, so that question waits for the console.
 *
 * @module
 */

import { ToolError } from "@toolfence/core";
import type { ChoiceOutcome, ChoiceRequest, ConfirmRequest, Host } from "@toolfence/core";
import type { QuestionOption, QuestionQueue } from "./question_queue.ts";

/** Options of {@linkcode consoleHost}. */
export interface ConsoleHostOptions {
  /** Also ask here (the MCP client's elicitation); the first answer that counts wins. */
  elicitation?: Host;
  /** How long a question waits for a person. Default 10 minutes. */
  timeoutMs?: number;
  /** The MCP session whose calls ask (kept with each question). */
  session?: string;
}

/** A host of the console: a {@linkcode Host} that knows its tenant. */
export interface ConsoleHost extends Host {
  /** The tenant whose person answers. */
  readonly tenant: string;
}

const DEFAULT_TIMEOUT_MS = 10 * 60_000;
const YES_NO: readonly QuestionOption[] = [{ value: "yes", label: "Yes" }, { value: "no", label: "No" }];

function unanswered(title: string, message: string, minutes: number): ToolError {
  return new ToolError(`${title}: refused because nobody answered in the console within ${minutes} minutes`, {
    code: "question_unanswered",
    details: { title, question: message },
  });
}

/**
 * A {@linkcode Host} that puts each question in `queue` for `tenant`'s person
 * and waits for the answer: a person's (`source: "user"`), so "always" grants
 * and saves as a person's answer does. When the call is cancelled or its time
 * runs out, the question leaves the queue and the call ends as cancelled or
 * timed out; when nobody answers within `timeoutMs`, the question is refused
 * with `question_unanswered`.
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import { consoleHost, MemoryQuestionQueue } from "@toolfence/adapters/console";
 * const queue = new MemoryQuestionQueue();
 * const host = consoleHost(queue, "alice");
 * const asked = host.confirm({ title: "Deploy", message: "Deploy now?", defaultChoice: false });
 * queue.answer("alice", queue.pending("alice")[0].id, "yes");
 * console.log((await asked).choice); // true
 * ```
 */
export function consoleHost(queue: QuestionQueue, tenant: string, options: ConsoleHostOptions = {}): ConsoleHost {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;

  async function ask<T>(
    request: ChoiceRequest | ConfirmRequest,
    choices: readonly QuestionOption[],
    defaultChoice: string,
    fromConsole: (value: string) => T,
    elicit: ((signal: AbortSignal) => Promise<ChoiceOutcome<T>>) | undefined,
    signal: AbortSignal | undefined,
  ): Promise<ChoiceOutcome<T>> {
    signal?.throwIfAborted();
    const done = new AbortController();
    const timer = setTimeout(
      () => done.abort(unanswered(request.title, request.message, Math.round(timeoutMs / 60_000))),
      timeoutMs,
    );
    const stop = () => done.abort(signal!.reason);
    signal?.addEventListener("abort", stop, { once: true });
    try {
      const inConsole = queue.ask({
        tenant,
        title: request.title,
        message: request.message,
        options: choices,
        defaultChoice,
        ...(request.about ? { about: request.about } : {}),
        expires: new Date(Date.now() + timeoutMs).toISOString(),
        ...(options.session ? { session: options.session } : {}),
      }, done.signal).then((value): ChoiceOutcome<T> => ({ choice: fromConsole(value), source: "user" }));
      if (elicit === undefined) return await inConsole;
      // An elicitation that refuses, fails, or answers what only a person may answer never settles the race.
      const inClient = elicit(done.signal).then(
        (outcome) => outcome.source === "client" && request.requirePerson ? new Promise<never>(() => {}) : outcome,
        () => new Promise<never>(() => {}),
      );
      return await Promise.race([inConsole, inClient]);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", stop);
      // Withdraws whichever question is still open.
      done.abort(new Error("answered"));
    }
  }

  return {
    tenant,
    showsCall: true,
    choose<T extends string>(request: ChoiceRequest<T>, signal?: AbortSignal): Promise<ChoiceOutcome<T>> {
      const elicitation = options.elicitation;
      return ask<T>(
        request,
        request.options,
        request.defaultChoice,
        (value) => value as T,
        elicitation && ((s) => elicitation.choose(request, s)),
        signal,
      );
    },
    confirm(request: ConfirmRequest, signal?: AbortSignal): Promise<ChoiceOutcome<boolean>> {
      const elicitation = options.elicitation;
      return ask<boolean>(
        request,
        YES_NO,
        request.defaultChoice ? "yes" : "no",
        (value) => value === "yes",
        elicitation && ((s) => elicitation.confirm(request, s)),
        signal,
      );
    },
  };
}
