// Step 6 of a call, for a tool that declares `output`: its JSON output is
// checked against that schema before it is passed on (or cut). A mismatch is
// the tool's fault, `invalid_output`, naming the path where it sits; the output
// itself is never passed on.

import { textPrefix } from "./_text_prefix.ts";
import * as v from "valibot";
import { ToolError } from "./errors.ts";
import type { StandardSchema, StandardSchemaResult } from "./schema.ts";
import { isStandardSchema, isValibotSchema } from "./_standard_schema.ts";

/** A tool's declared output schema: valibot (sync or async), zod 4, ArkType or another Standard Schema. */
export type OutputSchema = StandardSchema;

/** How many issues the details list; the message names the first. */
const MAX_ISSUES = 10;

/** valibot quotes the received value whole; an output may be megabytes, so each text is bounded. */
const MAX_TEXT = 200;

function bounded(text: string): string {
  return text.length <= MAX_TEXT ? text : `${textPrefix(text, MAX_TEXT)}… (${text.length - MAX_TEXT} more characters)`;
}

/** `files[2].size`, as the not_serializable check names paths; empty for the root. */
function pathOf(segments: readonly (PropertyKey | { readonly key: unknown })[] = []): string {
  let path = "";
  for (const item of segments) {
    const key = typeof item === "object" ? item.key : item;
    if (typeof key === "number") path += `[${key}]`;
    else path += path ? `.${String(key)}` : String(key);
  }
  return path;
}

/** One issue as the details list it; valibot's carry what was expected and received. */
type ListedIssue = { path: string; expected?: string | null; received?: string; message: string };

function valibotListed(issue: v.BaseIssue<unknown>): ListedIssue {
  return {
    path: pathOf(issue.path),
    expected: issue.expected === null ? null : bounded(issue.expected),
    received: bounded(issue.received),
    message: bounded(issue.message),
  };
}

/** One issue of a {@linkcode StandardSchemaResult}. */
type StandardIssue = Exclude<StandardSchemaResult<unknown>["issues"], undefined>[number];

function standardListed(issue: StandardIssue): ListedIssue {
  return { path: pathOf(issue.path), message: bounded(issue.message) };
}

function mismatch(name: string, issues: readonly ListedIssue[]): ToolError {
  const listed = issues.slice(0, MAX_ISSUES);
  const first = listed[0];
  return new ToolError(
    `${name} returned an output that does not match its declared output schema at ${
      first.path || "(root)"
    }: ${first.message}. This is a fault of the tool, not of the call`,
    {
      code: "invalid_output",
      recoveryHint: "Do not retry the same call; report the fault, or reach the goal another way.",
      details: { path: first.path, issues: listed, issueCount: issues.length },
    },
  );
}

function broken(name: string, error: unknown): ToolError {
  return new ToolError(`${name} declares an output schema that cannot check its output: ${String(error)}`, {
    code: "invalid_output",
    details: { path: "", schemaError: String(error) },
  });
}

/**
 * Checks `output` (a tool's JSON output) against its declared schema, as the
 * pipeline does on the way out: `undefined` when it matches, else the
 * `invalid_output` error naming the path of the first mismatch
 * (`details.path`, and every issue in `details.issues`). A schema that is not
 * a Standard Schema (valibot, zod 4, ArkType), or that throws, fails closed
 * the same way. A promise only for a schema that validates asynchronously.
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import { checkOutput } from "@toolfence/core";
 * const error = checkOutput("stat", v.strictObject({ size: v.number() }), { size: "3" });
 * console.log(error instanceof Error && error.details); // { path: "size", ... }
 * ```
 */
export function checkOutput(
  name: string,
  schema: OutputSchema,
  output: unknown,
): ToolError | undefined | Promise<ToolError | undefined> {
  if (!isStandardSchema(schema)) return broken(name, "it is not a Standard Schema (valibot, zod, ArkType)");
  try {
    if (isValibotSchema(schema)) {
      if (schema.async) {
        return v.safeParseAsync(schema, output).then(
          (parsed) => parsed.success ? undefined : mismatch(name, parsed.issues.map(valibotListed)),
          (error) => broken(name, error),
        );
      }
      const parsed = v.safeParse(schema, output);
      return parsed.success ? undefined : mismatch(name, parsed.issues.map(valibotListed));
    }
    const judged = (result: StandardSchemaResult<unknown>) =>
      result.issues === undefined ? undefined : mismatch(name, result.issues.map(standardListed));
    const result = schema["~standard"].validate(output);
    return result instanceof Promise ? result.then(judged, (error) => broken(name, error)) : judged(result);
  } catch (error) {
    return broken(name, error);
  }
}

// The results the call pipeline ended with an output it had checked against `schema`, straight from its finish:
// no after-call hook (which may replace or change a result) had run on them.
const checkedResults = new WeakMap<object, OutputSchema>();

/** Records that `result` holds an output checked against `schema`, as finished with no after-call hook. */
export function markOutputChecked(result: object, schema: OutputSchema): void {
  checkedResults.set(result, schema);
}

/**
 * Whether the call pipeline checked `result`'s output against `schema` and
 * ended the call with it unchanged: `result` is the very object its finish
 * made (not a copy, not the answer of an after-call hook), so that checking
 * it again (the MCP server's structuredContent does) can only agree.
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import { outputCheckedAgainst, tool, ToolBox } from "@toolfence/core";
 * import { Session } from "@toolfence/policy";
 * const output = v.strictObject({ n: v.number() });
 * const n = tool({ name: "n", description: "One.", input: v.object({}), output, run: () => ({ n: 1 }) });
 * const box = new ToolBox().register(n);
 * const session = new Session({ workspace: Deno.cwd() });
 * console.log(outputCheckedAgainst(await box.call(session, "n", {}), output)); // true
 * await session.close();
 * ```
 */
export function outputCheckedAgainst(result: object, schema: OutputSchema): boolean {
  return checkedResults.get(result) === schema;
}
