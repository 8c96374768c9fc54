/**
 * The host: whoever answers when the policy asks a person.
 *
 * @module
 */

/**
 * Who made a choice: a person (`user`), an automatic rule such as
 * `autoConfirm` (`auto`), or a client that answered for its user (`client`,
 * an MCP elicitation answer: not proof that a person saw the question; it
 * never grants and never answers what only a person may).
 */
export type ChoiceSource = "user" | "auto" | "client";

/**
 * The answer to a question. It deliberately has no truth value of its own:
 * read `.choice`.
 */
export interface ChoiceOutcome<T> {
  /** The chosen value. */
  readonly choice: T;
  /** `user` when a person chose, `auto` when a rule did. */
  readonly source: ChoiceSource;
}

/** One option of a {@linkcode ChoiceRequest}. */
export interface ChoiceOption<T extends string = string> {
  /** The value returned when this option is chosen. */
  value: T;
  /** What the person sees. */
  label: string;
}

/**
 * What a question is about, for a host that shows more than the message (a
 * web console): the call, the command or path, the rule that asked, the
 * policy's reasons, and for a write the text before and after. Every field is
 * optional; the message alone must still say everything a person needs.
 */
export interface QuestionSubject {
  /** The tool whose call asks (filled in by the session from the call in flight). */
  tool?: string;
  /** That call's id. */
  callId?: string;
  /** The command line asked about. */
  command?: string;
  /** The real path asked about. */
  path?: string;
  /** The rule that asked, as `policy explain` describes it. */
  rule?: string;
  /** The policy's reasons, as `policy explain` gives them. */
  reasons?: readonly string[];
  /** For a write: the file's text now (absent for a new file or one too large or not text). */
  before?: string;
  /** For a write: the text it would have. */
  after?: string;
  /**
   * For a network destination: its origin (`scheme://host:port`) and, when it
   * resolves to an address of this machine or its network, that address's
   * class (`loopback`, `private`, `link-local`, ...).
   */
  destination?: { origin: string; inside?: string };
}

/** A question with a fixed set of answers. */
export interface ChoiceRequest<T extends string = string> {
  /** Short heading, e.g. `Write permission`. */
  title: string;
  /** The question, with the path or command it is about. */
  message: string;
  /** The answers, in display order. */
  options: readonly ChoiceOption<T>[];
  /** The answer taken by `autoConfirm` and offered as the default. */
  defaultChoice: T;
  /** Never answer automatically (e.g. `ask_preference`); only a person may answer. */
  requirePerson?: boolean;
  /** Whether a free-text answer outside `options` is accepted. */
  allowExtra?: boolean;
  /** What the question is about, for hosts that show it. */
  about?: QuestionSubject;
}

/** A yes/no question. */
export interface ConfirmRequest {
  /** Short heading. */
  title: string;
  /** The question. */
  message: string;
  /** The default answer. */
  defaultChoice: boolean;
  /** Never answer automatically; only a person may answer. */
  requirePerson?: boolean;
  /** What the question is about, for hosts that show it. */
  about?: QuestionSubject;
}

/**
 * Answers questions for a session. Implementations: terminal, auto, deny-all,
 * callback (in `policy/hosts.ts`) and MCP elicitation (in `adapters/mcp`).
 *
 * @example A host that always takes the default
 * ```ts
 * import type { Host } from "@toolfence/core";
 * const host: Host = {
 *   choose: (req) => Promise.resolve({ choice: req.defaultChoice, source: "auto" }),
 *   confirm: (req) => Promise.resolve({ choice: req.defaultChoice, source: "auto" }),
 * };
 * ```
 */
export interface Host {
  /** Asks a question with fixed answers. */
  choose<T extends string>(
    request: ChoiceRequest<T>,
    signal?: AbortSignal,
  ): Promise<ChoiceOutcome<T>>;
  /** Asks a yes/no question. */
  confirm(request: ConfirmRequest, signal?: AbortSignal): Promise<ChoiceOutcome<boolean>>;
  /**
   * Whether this host shows which tool and call ask (`about.tool`,
   * `about.callId`). Only then does the pipeline keep track of the call in
   * flight for its questions, which costs about a microsecond a call.
   */
  readonly showsCall?: boolean;
}
