// Judges where the browser may go: the scheme, workspace file: URLs, and
// every network destination through the policy's DestinationJudge (the same
// judge as the sandboxed commands' egress proxy), which asks the session's
// host about destinations no rule decides.

import { fileURLToPath } from "node:url";
import { ToolError } from "@toolfence/core";
import type { SessionBase as Session } from "@toolfence/core";
import {
  defaultPort,
  type Destination,
  type DestinationAnswer,
  DestinationJudge,
  type DestinationQuestion,
  type EgressRules,
  type QuestionBudget,
} from "@toolfence/policy";

export type { Destination } from "@toolfence/policy";

/** Rules for the browser group (see `BrowserOptions`): the policy's {@linkcode EgressRules}. */
export type DestinationRules = EgressRules;

function refused(message: string, code: string, details: Record<string, unknown>): ToolError {
  return new ToolError(message, {
    code,
    kind: "policy",
    status: "skipped",
    recoverable: false,
    recoveryHint: "Use an allowed address, or ask the user to allow this destination.",
    details,
  });
}

/**
 * How many questions about destinations a page may cause between two browser calls that a person (or the MCP
 * client) answers; past them its requests to destinations not yet decided are refused without asking, as a
 * command's past `MAX_NETWORK_QUESTIONS`. An automatic answer takes none.
 */
export const MAX_PAGE_QUESTIONS = 5;

/** The questions a page caused since the last browser call. */
interface PageQuestions {
  /** Answered by a person or the client. */
  answered: number;
  /** Being asked. */
  readonly pending: Set<Promise<unknown>>;
}

/** The per-session judge of browser destinations. */
export class Destinations {
  readonly #session: Session;
  readonly #judge: DestinationJudge;
  #pageQuestions: PageQuestions = { answered: 0, pending: new Set() };
  // The asker of the questions between two browser calls: a yes that holds for its asker only (the MCP client's under
  // answers.elicitation once) holds until the next call.
  #call: QuestionBudget = { max: Infinity, asked: 0, held: new Map() };
  #callSignal: AbortSignal | undefined;
  // Passed to the judge for the page's own requests (the proxy's), and so handed back to #ask with their questions:
  // never aborted, it only tells them from the model's (browser_navigate's, browser_tabs'), which are not counted.
  readonly #fromPage = new AbortController().signal;

  constructor(session: Session, rules: DestinationRules) {
    this.#session = session;
    // The session's policy files' network.deny holds for the browser as for the commands, whatever options the
    // tools were made with (a library's Browsers({}), a server's tools made from another workspace's files).
    const denied = session.policy.networkRules?.deny ?? [];
    const judged = denied.length ? { ...rules, deny: [...(rules.deny ?? []), ...denied] } : rules;
    this.#judge = new DestinationJudge(judged, { ask: (question, signal) => this.#ask(question, signal) });
  }

  /**
   * Judges a URL before the browser loads it: `file:` must lie in the
   * workspace, `http(s)`/`ws(s)` go through {@linkcode judgeHost}; anything else
   * (`about:blank`, `data:`) needs no network and no file. Throws a policy
   * `ToolError` when the URL may not be loaded.
   */
  async judgeUrl(raw: string, signal?: AbortSignal): Promise<void> {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new ToolError(`${JSON.stringify(raw)} is not a URL`, {
        code: "invalid_url",
        kind: "semantic",
        recoveryHint: "Give an absolute URL such as https://example.com/.",
      });
    }
    if (url.protocol === "file:") return void await this.judgeFile(url);
    const port = defaultPort(url.protocol);
    if (port !== undefined) {
      await this.judgeHost(url.protocol, url.hostname, url.port || port, signal);
      return;
    }
    if (url.href === "about:blank" || url.protocol === "data:") return;
    throw refused(
      `The browser may only open http, https and workspace file: URLs, not ${url.protocol}`,
      "url_not_allowed",
      {
        url: raw,
      },
    );
  }

  /** The real path of a `file:` URL, which must lie in the workspace. */
  async judgeFile(url: URL): Promise<string> {
    if (url.hostname !== "" && url.hostname !== "localhost") {
      throw refused(`file: URLs with a host (${url.hostname}) are not allowed`, "url_not_allowed", { url: url.href });
    }
    let named: string;
    try {
      named = fileURLToPath(url);
    } catch (error) {
      // An encoded slash (`..%2f`) names no path; before, Node's TypeError reached the model as a bare tool_error.
      throw new ToolError(`${url.href} names no file: ${(error as Error).message}`, {
        code: "invalid_url",
        kind: "semantic",
        recoveryHint: "Spell the path's slashes as / (not %2F) in a file: URL inside the workspace.",
        details: { url: url.href },
      });
    }
    return await this.#session.policy.resolveForRead(named);
  }

  /**
   * Judges a host and port for `scheme` (`http:`, `https:`, `ws:`, `wss:`)
   * with the policy's {@linkcode DestinationJudge}: returns the origin and
   * the addresses to connect to; throws `url_not_allowed` or `dns_failed`.
   */
  judgeHost(scheme: string, hostname: string, port: string, signal?: AbortSignal): Promise<Destination> {
    // The model's URL is judged before its call opens the page (navigate, tabs): the call begins here.
    if (signal !== undefined) this.newCall(signal);
    return this.#judge.judge(scheme, hostname, port, signal, this.#call);
  }

  /**
   * Judges a request of the page (through the browser's proxy) as {@linkcode judgeHost} does, within the page's
   * {@linkcode MAX_PAGE_QUESTIONS}: before, one page of 60 images on 60 unlisted hosts asked the person 60 times.
   */
  judgePageHost(scheme: string, hostname: string, port: string): Promise<Destination> {
    return this.#judge.judge(scheme, hostname, port, this.#fromPage, this.#call);
  }

  /**
   * A browser call begins, known by its `signal` (once: a call that judged its URL and then opens its page begins
   * once): the page may cause {@linkcode MAX_PAGE_QUESTIONS} questions again, and the answers that held for the last
   * call hold no more.
   */
  newCall(signal: AbortSignal): void {
    if (signal === this.#callSignal) return;
    this.#callSignal = signal;
    this.#pageQuestions = { answered: 0, pending: new Set() };
    this.#call = { max: Infinity, asked: 0, held: new Map() };
  }

  async #ask(question: DestinationQuestion, signal?: AbortSignal): Promise<DestinationAnswer> {
    if (signal !== this.#fromPage) return await this.#choose(question, signal);
    const questions = this.#pageQuestions;
    // Questions being asked count until answered (an automatic answer gives its place back): a page's burst of new
    // hosts waits for them rather than asking past the budget.
    while (questions.answered + questions.pending.size >= MAX_PAGE_QUESTIONS) {
      if (questions.pending.size === 0) {
        // Thrown, not answered "deny": the judge then neither remembers it nor refuses the host for the session.
        throw new ToolError(
          `the page already caused ${MAX_PAGE_QUESTIONS} questions about destinations since the last browser ` +
            "call, so no more are asked",
          { code: "url_not_allowed", kind: "policy", details: { questions: MAX_PAGE_QUESTIONS } },
        );
      }
      await Promise.race(questions.pending).catch(() => {});
    }
    const asked = this.#choose(question);
    questions.pending.add(asked);
    try {
      const answer = await asked;
      if (answer.answeredBy !== "auto") questions.answered++;
      return answer;
    } finally {
      questions.pending.delete(asked);
    }
  }

  async #choose({ origin, addresses, inside }: DestinationQuestion, signal?: AbortSignal): Promise<DestinationAnswer> {
    const outcome = await this.#session.choose<"allow" | "deny">({
      title: "Browser destination",
      message: inside
        ? `The browser wants to connect to ${origin}, which resolves to the ${inside} address ${addresses[0]}` +
          " (this machine or its network). Allow for this session?"
        : `The browser wants to connect to ${origin}${
          addresses[0] ? ` (${addresses[0]})` : ""
        }. Allow for this session?`,
      options: [{ value: "allow", label: "Allow this origin for this session" }, { value: "deny", label: "Deny" }],
      defaultChoice: inside ? "deny" : "allow",
      about: { destination: { origin, ...(inside ? { inside } : {}) } },
    }, signal);
    // Under answers.elicitation refuse the MCP client's answer counts for nothing, as it does for the commands'
    // destinations: before, a client's yes let the browser reach a loopback server the person was never asked about.
    const answers = this.#session.policy.clientAnswers;
    const counts = outcome.source !== "client" || answers !== "refuse";
    return {
      allowed: outcome.choice === "allow" && counts,
      answeredBy: outcome.source === "user" ? "person" : outcome.source === "client" ? "client" : "auto",
      // The client's yes allows one action, this browser call (before, it was the session's).
      holds: outcome.source === "client" && answers !== "grant" ? "asker" : "session",
    };
  }
}
