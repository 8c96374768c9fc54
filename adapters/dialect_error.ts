/**
 * The error a dialect throws when a tool's input schema cannot be expressed in
 * a provider's wire format. It is thrown while the schemas are built, never at
 * request time, and names the tool, the place in the schema and the reason.
 *
 * @module
 */

/**
 * A tool's input schema holds something a dialect cannot express.
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import { SchemaDialectError } from "@toolfence/adapters";
 * const error = new SchemaDialectError("gemini", "lookup", "/properties/code", "Gemini enums hold only strings");
 * console.log(error.message);
 * // Tool "lookup" cannot be expressed in the gemini dialect: at /properties/code: Gemini enums hold only strings
 * ```
 */
export class SchemaDialectError extends Error {
  /** The dialect, e.g. `openai-chat`. */
  readonly dialect: string;
  /** The tool whose schema failed. */
  readonly toolName: string;
  /** JSON Pointer into the tool's input schema, `""` for the root. */
  readonly schemaPath: string;
  /** Why the dialect cannot express it. */
  readonly reason: string;

  /** Creates the error. */
  constructor(dialect: string, toolName: string, schemaPath: string, reason: string) {
    super(
      `Tool "${toolName}" cannot be expressed in the ${dialect} dialect: at ${schemaPath || "the root"}: ${reason}`,
    );
    this.name = "SchemaDialectError";
    this.dialect = dialect;
    this.toolName = toolName;
    this.schemaPath = schemaPath;
    this.reason = reason;
  }
}
