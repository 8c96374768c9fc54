// OpenAI refuses a function tool whose description is longer than 1024 characters: the request fails with 400
// `string_above_max_length` ("Invalid 'tools[0].function.description': string too long. Expected a string with maximum
// length 1024"), at request time and for every tool of the request. The OpenAI dialects and the OpenAI Agents tools
// refuse such a tool while the tools are built instead, naming it; a cut description would hide from the model what
// its author wrote, so none is cut.

import type { AnyTool } from "@toolfence/core";
import { SchemaDialectError } from "./dialect_error.ts";

/** The longest function description OpenAI takes, in characters. */
export const OPENAI_DESCRIPTION_LIMIT = 1024;

/** The tool's description, or a `SchemaDialectError` naming the tool when OpenAI would refuse it. */
export function openAIDescription(t: AnyTool, dialect: string): string {
  // Counted in code points (as OpenAI's message counts them), not UTF-16 units.
  let length = 0;
  for (const _ of t.description) length++;
  if (length > OPENAI_DESCRIPTION_LIMIT) {
    throw new SchemaDialectError(
      dialect,
      t.name,
      "",
      `its description is ${length} characters and OpenAI takes at most ${OPENAI_DESCRIPTION_LIMIT} ` +
        "(the request would fail with string_above_max_length); shorten the tool's description",
    );
  }
  return t.description;
}
