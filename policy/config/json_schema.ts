/**
 * The JSON Schema of the policy file, made from the valibot schema, for
 * editors (`"$schema"` in `toolfence.json`) and `toolfence policy schema`.
 *
 * @module
 */
import { toJsonSchema } from "@valibot/to-json-schema";
import { PolicyFileSchema } from "./schema.ts";

/**
 * The policy file's JSON Schema (draft 7): the same keys, types and
 * descriptions as the valibot schema; checks that JSON Schema cannot say
 * (no `..` in a glob, an example with a command or a path) are left to the
 * loader.
 *
 * Needs no permissions.
 *
 * @example
 * ```ts
 * import { policyJsonSchema } from "@toolfence/policy";
 * console.log(Object.keys(policyJsonSchema().properties as object));
 * ```
 */
export function policyJsonSchema(): Record<string, unknown> {
  const schema = toJsonSchema(PolicyFileSchema, { errorMode: "ignore" }) as Record<string, unknown>;
  return {
    ...schema,
    $id: "https://jsr.io/@toolfence/policy/toolfence.schema.json",
    title: "toolfence policy file",
  };
}
