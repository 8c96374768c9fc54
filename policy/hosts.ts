/**
 * Hosts: who answers when the policy asks a person. A terminal prompt, an
 * automatic host that takes every default, a deny-all host for runs with nobody
 * to ask, a callback host for embedding in a UI, and `withAutoConfirm` for a
 * session's `autoConfirm` setting.
 *
 * When no person can answer (the deny-all host, or a question marked
 * `requirePerson` reaching the automatic host), the host throws a `ToolError`
 * with code `permission_denied` (kind `policy`, status `skipped`) instead of
 * inventing an answer: a choice request has no universal "deny" value, and a
 * refusal that says why is clearer than a fake choice.
 *
 * @module
 */
import process from "node:process";
import readline from "node:readline";
import { ToolError } from "@toolfence/core";
import { serialQueue } from "@toolfence/internal";
import type { ChoiceOutcome, ChoiceRequest, ConfirmRequest, Host } from "@toolfence/core";
import { visibleText } from "./_visible_text.ts";

function noPerson(title: string, message: string, why: string): ToolError {
  return new ToolError(`${title}: refused because ${why} (${message})`, {
    code: "permission_denied",
    kind: "policy",
    status: "skipped",
    recoverable: false,
    recoveryHint: "Do something that needs no approval, or tell the user what you need.",
    details: { title, question: message, why },
  });
}

/**
 * A host that answers every question with its default, marked `auto`.
 * Questions that require a person are refused (see the module notes).
 *
 * @example
 * ```ts
 * import { autoHost } from "@toolfence/policy";
 * const outcome = await autoHost().confirm({ title: "Run", message: "Run ls?", defaultChoice: true });
 * console.log(outcome); // { choice: true, source: "auto" }
 * ```
 */
export function autoHost(): Host {
  return { choose: answerAutomatically, confirm: answerAutomatically };
}

function answerAutomatically<T>(
  request: { title: string; message: string; defaultChoice: T; requirePerson?: boolean },
): Promise<ChoiceOutcome<T>> {
  if (request.requirePerson) {
    return Promise.reject(
      noPerson(request.title, request.message, "it needs a person's answer and this session answers automatically"),
    );
  }
  return Promise.resolve({ choice: request.defaultChoice, source: "auto" });
}

/**
 * A host for non-interactive runs: anything that would ask is refused with
 * `permission_denied` ("no person can be asked").
 *
 * @example
 * ```ts
 * import { denyAllHost } from "@toolfence/policy";
 * await denyAllHost().confirm({ title: "Run", message: "Run rm?", defaultChoice: false })
 *   .catch((error) => console.log(error.code)); // permission_denied
 * ```
 */
export function denyAllHost(): Host {
  return {
    choose<T extends string>(
      request: ChoiceRequest<T>,
    ): Promise<ChoiceOutcome<T>> {
      return Promise.reject(
        noPerson(
          request.title,
          request.message,
          "no person can be asked in this session",
        ),
      );
    },
    confirm(request: ConfirmRequest): Promise<ChoiceOutcome<boolean>> {
      return Promise.reject(
        noPerson(
          request.title,
          request.message,
          "no person can be asked in this session",
        ),
      );
    },
  };
}

/**
 * Wraps `host` for a session with `autoConfirm`: every question gets its
 * default, marked `auto` (so it never grants anything), except questions that
 * require a person, which go to `host`.
 *
 * @example
 * ```ts
 * import { denyAllHost, withAutoConfirm } from "@toolfence/policy";
 * const host = withAutoConfirm(denyAllHost());
 * console.log(await host.confirm({ title: "Run", message: "Run ls?", defaultChoice: true }));
 * ```
 */
export function withAutoConfirm(host: Host): Host {
  const auto = autoHost();
  return {
    choose: (request, signal) => request.requirePerson ? host.choose(request, signal) : auto.choose(request),
    confirm: (request, signal) => request.requirePerson ? host.confirm(request, signal) : auto.confirm(request),
  };
}

/** An answer from a callback: a bare value (a person's) or a full outcome. */
export type CallbackAnswer<T> = T | ChoiceOutcome<T>;

/** The functions behind a {@linkcode callbackHost}. */
export interface HostCallbacks {
  /** Answers a choice; a bare value counts as a person's answer. */
  choose<T extends string>(
    request: ChoiceRequest<T>,
    signal?: AbortSignal,
  ): CallbackAnswer<T> | Promise<CallbackAnswer<T>>;
  /** Answers a yes/no question; when omitted, `choose` is asked with the options `yes` and `no`. */
  confirm?(
    request: ConfirmRequest,
    signal?: AbortSignal,
  ): CallbackAnswer<boolean> | Promise<CallbackAnswer<boolean>>;
}

function asOutcome<T>(answer: CallbackAnswer<T>): ChoiceOutcome<T> {
  if (
    typeof answer === "object" && answer !== null && "choice" in answer &&
    "source" in answer
  ) {
    const outcome = answer as ChoiceOutcome<T>;
    if (outcome.source !== "user" && outcome.source !== "auto" && outcome.source !== "client") {
      throw new TypeError(
        `Host answer has an unknown source ${JSON.stringify(outcome.source)}`,
      );
    }
    return { choice: outcome.choice, source: outcome.source };
  }
  return { choice: answer as T, source: "user" };
}

function checkChoice<T extends string>(
  request: ChoiceRequest<T>,
  outcome: ChoiceOutcome<T>,
): ChoiceOutcome<T> {
  const valid = typeof outcome.choice === "string" &&
    (request.allowExtra ||
      request.options.some((o) => o.value === outcome.choice));
  if (!valid) {
    throw new TypeError(
      `Host answered ${JSON.stringify(outcome.choice)}, which is not an option of "${request.title}"`,
    );
  }
  return requirePersonIfAsked(request, outcome);
}

// A question only a person may answer must not take an automatic answer from the host.
function requirePersonIfAsked<T>(
  request: { title: string; message: string; requirePerson?: boolean },
  outcome: ChoiceOutcome<T>,
): ChoiceOutcome<T> {
  if (request.requirePerson && outcome.source !== "user") {
    throw noPerson(request.title, request.message, "it needs a person's answer and the host answered automatically");
  }
  return outcome;
}

/**
 * A host backed by functions, e.g. a UI dialog. Answers are checked: a choice
 * that is not one of the options (unless `allowExtra`) or a non-boolean
 * confirmation is an error, never silently taken as consent.
 *
 * @example
 * ```ts
 * import { callbackHost } from "@toolfence/policy";
 * const asked: string[] = [];
 * const host = callbackHost({
 *   choose: (request) => {
 *     asked.push(request.message);
 *     return request.defaultChoice;
 *   },
 * });
 * console.log(await host.confirm({ title: "Run", message: "Run ls?", defaultChoice: true }), asked);
 * ```
 */
export function callbackHost(callbacks: HostCallbacks): Host {
  return {
    async choose<T extends string>(
      request: ChoiceRequest<T>,
      signal?: AbortSignal,
    ): Promise<ChoiceOutcome<T>> {
      signal?.throwIfAborted();
      return checkChoice(
        request,
        asOutcome(await callbacks.choose(request, signal)),
      );
    },
    async confirm(
      request: ConfirmRequest,
      signal?: AbortSignal,
    ): Promise<ChoiceOutcome<boolean>> {
      signal?.throwIfAborted();
      if (callbacks.confirm === undefined) {
        const yesNo: ChoiceRequest<"yes" | "no"> = {
          title: request.title,
          message: request.message,
          options: [{ value: "yes", label: "Yes" }, {
            value: "no",
            label: "No",
          }],
          defaultChoice: request.defaultChoice ? "yes" : "no",
          requirePerson: request.requirePerson,
        };
        const outcome = checkChoice(
          yesNo,
          asOutcome(await callbacks.choose(yesNo, signal)),
        );
        return { choice: outcome.choice === "yes", source: outcome.source };
      }
      const outcome = asOutcome(await callbacks.confirm(request, signal));
      if (typeof outcome.choice !== "boolean") {
        throw new TypeError(
          `Host answered ${JSON.stringify(outcome.choice)} to a yes/no question`,
        );
      }
      return requirePersonIfAsked(request, outcome);
    },
  };
}

/** Options of {@linkcode terminalHost}. */
export interface TerminalHostOptions {
  /** Where answers are read; default `process.stdin`. */
  input?: NodeJS.ReadableStream;
  /** Where questions are shown; default `process.stderr`, so that stdout stays free for data (e.g. MCP). */
  output?: NodeJS.WritableStream;
  /** How many unreadable answers before giving up; default 5. */
  maxAttempts?: number;
}

/**
 * A host that asks on a terminal: the question, numbered options with the
 * default marked, one line of answer (a number, an option's value or label, or
 * an empty line for the default). Questions are asked one at a time. End of input refuses.
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import { terminalHost } from "@toolfence/policy";
 * const host = terminalHost();
 * const outcome = await host.confirm({ title: "Run", message: "Run npm test?", defaultChoice: true });
 * console.log(outcome.choice);
 * ```
 */
export function terminalHost(options: TerminalHostOptions = {}): Host {
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stderr;
  const maxAttempts = options.maxAttempts ?? 5;
  const serially = serialQueue();

  // Reads one line, or undefined at end of input.
  function readLine(
    prompt: string,
    signal?: AbortSignal,
  ): Promise<string | undefined> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const rl = readline.createInterface({ input, terminal: false });
      let done = false;
      const finish = (action: () => void) => {
        if (done) return;
        done = true;
        signal?.removeEventListener("abort", onAbort);
        rl.close();
        action();
      };
      const onAbort = () => finish(() => reject(signal!.reason));
      signal?.addEventListener("abort", onAbort, { once: true });
      rl.once("line", (line) => finish(() => resolve(line)));
      rl.once("close", () => finish(() => resolve(undefined)));
      output.write(prompt);
    });
  }

  async function ask<R>(
    title: string,
    message: string,
    body: string,
    prompt: string,
    parse: (line: string) => R | undefined,
    signal?: AbortSignal,
  ): Promise<R> {
    output.write(`\n[${visibleText(title)}] ${visibleText(message)}\n${visibleText(body)}`);
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      const line = await readLine(prompt, signal);
      if (line === undefined) {
        throw noPerson(
          title,
          message,
          "the terminal closed before an answer was given",
        );
      }
      const answer = parse(line.trim());
      if (answer !== undefined) return answer;
      output.write(`Not an answer: ${JSON.stringify(line.trim())}\n`);
    }
    throw noPerson(
      title,
      message,
      `no valid answer was given in ${maxAttempts} attempts`,
    );
  }

  return {
    choose<T extends string>(
      request: ChoiceRequest<T>,
      signal?: AbortSignal,
    ): Promise<ChoiceOutcome<T>> {
      return serially(async () => {
        const defaultIndex = request.options.findIndex((o) => o.value === request.defaultChoice);
        const body = request.options
          .map((o, i) => `  ${i + 1}) ${o.label}${i === defaultIndex ? " (default)" : ""}\n`)
          .join("");
        const range = request.options.length > 0 ? `1-${request.options.length}` : "an answer";
        const prompt = `Choose ${range}${defaultIndex >= 0 ? ` [${defaultIndex + 1}]` : ""}: `;
        const choice = await ask<T>(
          request.title,
          request.message,
          body,
          prompt,
          (line) => {
            if (line === "") {
              return defaultIndex >= 0 ? request.defaultChoice : undefined;
            }
            if (/^\d+$/.test(line)) {
              return request.options[Number(line) - 1]
                ?.value;
            }
            const lower = line.toLowerCase();
            const match = request.options.find((o) =>
              o.value.toLowerCase() === lower || o.label.toLowerCase() === lower
            );
            if (match) return match.value;
            return request.allowExtra ? line as T : undefined;
          },
          signal,
        );
        return { choice, source: "user" };
      });
    },
    confirm(
      request: ConfirmRequest,
      signal?: AbortSignal,
    ): Promise<ChoiceOutcome<boolean>> {
      return serially(async () => {
        const prompt = request.defaultChoice ? "[Y/n]: " : "[y/N]: ";
        const choice = await ask<boolean>(
          request.title,
          request.message,
          "",
          prompt,
          (line) => {
            const lower = line.toLowerCase();
            if (lower === "") return request.defaultChoice;
            if (lower === "y" || lower === "yes") return true;
            if (lower === "n" || lower === "no") return false;
            return undefined;
          },
          signal,
        );
        return { choice, source: "user" };
      });
    },
  };
}
