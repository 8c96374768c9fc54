/**
 * The `ask_preference` tool.
 *
 * @module
 */

import * as v from "valibot";
import { ToolError } from "@toolfence/core";
import type { ChoiceSource } from "@toolfence/core";
import { type Tool, tool } from "@toolfence/core";
import { ASK_PREFERENCE_OUTPUT } from "./_outputs.ts";

/** Arguments of `ask_preference`, after defaults. */
export interface AskPreferenceArgs {
  /** The question, in one or two sentences. */
  question: string;
  /** The options to choose from, each a short phrase; at least one. */
  choices: string[];
  /** Whether the user may answer with their own text instead. */
  allow_extra: boolean;
  /** The suggested answer, one of `choices`; the first choice when absent. */
  default_choice?: string;
}

/** What `ask_preference` returns. */
export interface PreferenceAnswer {
  /** The answer: one of the choices, or the person's own text when `allow_extra`. */
  choice: string;
  /** Whether the answer is the person's own text rather than one of the choices. */
  extra: boolean;
  /** Always `user`: this tool never takes an automatic answer. */
  source: ChoiceSource;
}

/**
 * `ask_preference(question, choices, allow_extra = false, default_choice?)`:
 * asks the person a question with fixed choices (and their own answer when
 * `allow_extra`). It always asks a person: the question is marked
 * `requirePerson`, so `autoConfirm` never answers it and a host with nobody to
 * ask refuses (`permission_denied`). A `default_choice` that is not one of the
 * choices is an error; without one, the first choice is the default.
 *
 * Requires no permissions (the host may need some, e.g. a terminal).
 *
 * @example
 * ```ts
 * import { Session, ToolBox } from "@toolfence/toolfence";
 * import { callbackHost } from "@toolfence/policy";
 * import { askPreferenceTool } from "@toolfence/tools";
 * const session = new Session({ workspace: Deno.cwd(), host: callbackHost({ choose: (request) => request.options[0].value }) });
 * const result = await new ToolBox().register(askPreferenceTool).call(session, "ask_preference", {
 *   question: "Tabs or spaces?",
 *   choices: ["tabs", "spaces"],
 * });
 * console.log(result.output); // { choice: "tabs", extra: false, source: "user" }
 * await session.close();
 * ```
 */
export const askPreferenceTool: Tool<AskPreferenceArgs> = tool({
  name: "ask_preference",
  description: "Ask the user to choose between options when their preference decides the work " +
    "(naming, style, which of several valid approaches). Always reaches a person; keep the question short " +
    "and the choices distinct. Do not use it for permission to run commands or write files: those ask by themselves.",
  input: v.object({
    question: v.pipe(
      v.string(),
      v.minLength(1),
      v.maxLength(2000),
      v.description("The question, in one or two sentences."),
    ),
    choices: v.pipe(
      v.array(v.pipe(v.string(), v.minLength(1), v.maxLength(200))),
      v.minLength(1),
      v.maxLength(20),
      v.description("The options to choose from, each a short phrase; at least one."),
    ),
    allow_extra: v.optional(
      v.pipe(v.boolean(), v.description("Whether the user may answer with their own text instead. Default false.")),
      false,
    ),
    default_choice: v.optional(
      v.pipe(v.string(), v.description("The suggested answer; must be one of choices. Default: the first choice.")),
    ),
  }),
  output: ASK_PREFERENCE_OUTPUT,
  concurrencySafe: false,
  needs: {},
  async run({ question, choices, allow_extra, default_choice }, ctx): Promise<PreferenceAnswer> {
    const duplicates = choices.filter((c, i) => choices.indexOf(c) !== i);
    if (duplicates.length > 0) {
      throw new ToolError(`choices has duplicates: ${JSON.stringify([...new Set(duplicates)])}`, {
        code: "invalid_arguments",
        kind: "semantic",
        recoveryHint: "Give each choice once.",
      });
    }
    if (default_choice !== undefined && !choices.includes(default_choice)) {
      throw new ToolError(
        `default_choice ${JSON.stringify(default_choice)} is not one of the choices ${JSON.stringify(choices)}`,
        {
          code: "invalid_arguments",
          kind: "semantic",
          recoveryHint: "Use one of the choices as default_choice, or leave it out.",
        },
      );
    }
    const outcome = await ctx.session.choose({
      title: "Question from the agent",
      message: question,
      options: choices.map((choice) => ({ value: choice, label: choice })),
      defaultChoice: default_choice ?? choices[0],
      requirePerson: true,
      allowExtra: allow_extra,
    }, ctx.signal);
    if (outcome.source === "auto") {
      // A host must not answer a person's question by itself; never pass such an answer on. (A client's
      // answer is its user's as far as a preference goes: it authorises nothing.)
      throw new ToolError("The question was answered automatically, but it needs a person's answer", {
        code: "permission_denied",
        kind: "policy",
        status: "skipped",
        recoverable: false,
        recoveryHint: "Decide yourself, or tell the user what you need to know.",
      });
    }
    return { choice: outcome.choice, extra: !choices.includes(outcome.choice), source: outcome.source };
  },
});
