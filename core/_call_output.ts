/**
 * Step 6 of a call: the tool's value as lossless JSON output, cut to the cap
 * with the whole output kept as an artifact.
 *
 * @module
 */

import { ToolError } from "./errors.ts";
import type { ArtifactRef, ToolResult, ToolResultInit } from "./result.ts";
import type { ArtifactStore } from "./artifacts.ts";
import { type JsonOutput, jsonText, NotSerializableError, toJsonOutput, wellFormedData } from "./_serialize.ts";
import { readReturned, type ToolFailure } from "./failure.ts";
import { checkOutput, markOutputChecked, type OutputSchema } from "./_call_output_schema.ts";
import { describeThrown } from "./_thrown.ts";
import { cutMiddle } from "./_text_prefix.ts";

/**
 * Keeps the head and tail of `text` within `cap` characters, with a marker in
 * between naming how much was cut and the artifact that holds all of it.
 *
 * @example
 * ```ts
 * import { capText } from "@toolfence/core";
 * const ref = { id: "sha256:" + "0".repeat(64) } as const;
 * console.log(capText("x".repeat(100), 60, ref).omitted > 0);
 * ```
 */
export function capText(
  text: string,
  cap: number,
  artifact: Pick<ArtifactRef, "id">,
): { text: string; omitted: number } {
  return cutMiddle(
    text,
    cap,
    (omitted) =>
      `\n[... ${omitted} characters omitted; the whole output is artifact ${artifact.id} (page through it with read_artifact) ...]\n`,
  );
}

/** What the output step needs of the call. */
export interface OutputSink<R> {
  /** The tool's registered name. */
  readonly name: string;
  /** The provider's call id. */
  readonly callId: string | undefined;
  /** Where the whole output goes when it is cut. */
  readonly artifacts: ArtifactStore;
  /** Ends the call with a result. */
  finish(init: Partial<ToolResultInit> & Pick<ToolResultInit, "status">): R;
  /** Ends the call with an error. */
  fail(error: ToolError, extra?: Partial<ToolResultInit>): R;
  /** The result's metadata, which a returned outcome's metadata joins. */
  readonly metadata: Record<string, unknown>;
  /** What the tool said of its effects. */
  claimedEffect: ToolResultInit["effectState"];
  /** The qitos fields a returned result carried to the call's result. */
  carried: Carried | undefined;
}

/** The fields of a returned result that the call's result keeps as the tool gave them. */
export type Carried = Pick<ToolResultInit, "modelOutput" | "nextAction" | "effectRef">;

// A returned result's modelOutput, nextAction and effectRef, when well-formed: a modelOutput reaches the model in
// place of the output, so it is kept only when it is JSON whose text fits the cap.
function carriedOf(result: ToolResult | undefined, cap: number): Carried | undefined {
  if (result === undefined) return undefined;
  const carried: Carried = {};
  const { modelOutput, nextAction, effectRef } = result as Partial<ToolResult>;
  if (modelOutput !== undefined && modelOutput !== null) {
    let text: string | undefined;
    try {
      text = typeof modelOutput === "string" ? modelOutput : JSON.stringify(modelOutput);
    } catch {
      text = undefined;
    }
    if (text !== undefined && text.length <= cap) {
      carried.modelOutput = wellFormedData(JSON.parse(JSON.stringify(modelOutput)));
    }
  }
  if (typeof nextAction === "object" && nextAction !== null && !Array.isArray(nextAction)) {
    try {
      carried.nextAction = JSON.parse(JSON.stringify(nextAction));
    } catch {
      // not JSON: left out
    }
  }
  if (typeof effectRef === "string") carried.effectRef = effectRef;
  return Object.keys(carried).length > 0 ? carried : undefined;
}

/**
 * Ends the call with the tool's value: whole when it fits in `cap`, else cut
 * with an artifact. A returned outcome ({@linkcode readReturned}: `fail()`,
 * Flux's shape, a `ToolResult`) ends it as that outcome, its output kept the
 * same way. A declared `schema` checks the whole JSON output of a success
 * first (a failure's output is what the tool had, not what it promises).
 */
export function finishOutput<R>(
  call: OutputSink<R>,
  value: unknown,
  cap: number,
  schema?: OutputSchema,
): R | Promise<R> {
  // The value is the tool's: reading it (a getter, a revoked Proxy, a Proxy's traps) may throw, now or in a check
  // that awaits. That ends the call as a refused output, never as a throw out of box.call.
  const unreadable = (error: unknown) =>
    call.fail(
      new ToolError(
        `${call.name} returned a value that throws when read (${
          describeThrown(error).slice(0, 200)
        }), which is not JSON-serialisable; return plain data`,
        { code: "not_serializable" },
      ),
    );
  try {
    const finished = finishReadOutput(call, value, cap, schema);
    return finished instanceof Promise ? finished.catch(unreadable) : finished;
  } catch (error) {
    return unreadable(error);
  }
}

function finishReadOutput<R>(
  call: OutputSink<R>,
  value: unknown,
  cap: number,
  schema?: OutputSchema,
): R | Promise<R> {
  const returned = readReturned(value);
  call.carried = carriedOf(returned?.result, cap);
  if (returned === undefined) return finishValue(call, value, cap, undefined, undefined, schema);
  const { metadata } = returned.kind === "output" ? returned : returned.failure;
  // A returned outcome may carry data the tool did not make (a page, a remote server): it adds to the
  // metadata but never overwrites what the pipeline or the tool recorded, and names only artifacts this
  // session holds, as the store describes them.
  if (metadata) {
    for (const key of Object.keys(metadata)) {
      if (Object.hasOwn(call.metadata, key) || PIPELINE_KEYS.has(key)) continue;
      // Defined, not assigned: a "__proto__" key stays a plain key.
      Object.defineProperty(call.metadata, key, {
        value: metadata[key],
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
  }
  const artifacts = knownArtifacts(call.artifacts, returned.result?.artifacts);
  if (returned.kind === "output") return finishValue(call, returned.output, cap, undefined, artifacts, schema);
  call.claimedEffect = returned.failure.effectState;
  return finishValue(call, returned.failure.output, cap, returned.failure, artifacts);
}

/** The metadata keys the pipeline writes; what a tool returns never sets them. */
const PIPELINE_KEYS = new Set(["approval", "shortCircuited", "calledAs", "afterHookError", "onFailureError"]);

function knownArtifacts(store: ArtifactStore, given: unknown): ArtifactRef[] | undefined {
  if (!Array.isArray(given) || given.length === 0) return undefined;
  const known: ArtifactRef[] = [];
  for (const ref of given) {
    const id = (ref as { id?: unknown })?.id;
    const stored = typeof id === "string" ? store.ref(id) : undefined;
    if (stored && !known.includes(stored)) known.push(stored);
  }
  return known.length ? known : undefined;
}

function finishValue<R>(
  call: OutputSink<R>,
  value: unknown,
  cap: number,
  failure: ToolFailure | undefined,
  artifacts?: ArtifactRef[],
  schema?: OutputSchema,
): R | Promise<R> {
  let json: JsonOutput;
  try {
    json = toJsonOutput(value, cap);
  } catch (error) {
    if (!(error instanceof NotSerializableError)) throw error;
    return call.fail(
      new ToolError(`${call.name} returned ${error.message}`, {
        code: "not_serializable",
        details: { path: error.path },
      }),
    );
  }
  if (failure === undefined && schema !== undefined) {
    const mismatch = checkOutput(call.name, schema, json.output);
    if (mismatch instanceof Promise) {
      return mismatch.then((error) =>
        error ? call.fail(error) : passOutput(call, json, cap, failure, artifacts, schema)
      );
    }
    if (mismatch) return call.fail(mismatch);
  }
  return passOutput(call, json, cap, failure, artifacts, schema);
}

function passOutput<R>(
  call: OutputSink<R>,
  json: JsonOutput,
  cap: number,
  failure: ToolFailure | undefined,
  artifacts: ArtifactRef[] | undefined,
  checked?: OutputSchema,
): R | Promise<R> {
  if (json.fits) {
    if (failure === undefined) {
      const finished = call.finish({ status: "success", output: json.output, artifacts });
      // Finished at once, with no after-call hook: the result holds the output just checked (see outputCheckedAgainst).
      if (
        checked !== undefined && typeof finished === "object" && finished !== null && !(finished instanceof Promise)
      ) {
        markOutputChecked(finished, checked);
      }
      return finished;
    }
    return call.fail(failure.error, { status: failure.status, output: json.output, artifacts });
  }
  return capOutput(call, jsonText(json), typeof json.output === "string", cap, failure, artifacts);
}

async function capOutput<R>(
  call: OutputSink<R>,
  whole: string,
  isText: boolean,
  cap: number,
  failure: ToolFailure | undefined,
  given: ArtifactRef[] = [],
): Promise<R> {
  const artifact = await call.artifacts.put(whole, {
    mediaType: isText ? "text/plain; charset=utf-8" : "application/json",
    summary: `whole output of ${call.name}${call.callId ? ` (call ${call.callId})` : ""}, ${whole.length} characters`,
  });
  const { text, omitted } = capText(whole, cap, artifact);
  const artifacts = [artifact, ...given];
  if (failure === undefined) {
    return call.finish({ status: "success", output: text, truncated: true, omitted, artifacts });
  }
  return call.fail(failure.error, { status: failure.status, output: text, truncated: true, omitted, artifacts });
}
