/**
 * Per-session policy state: the shell-command allowlist and the write grants a
 * person gave. Plain data, JSON-serialisable, saved and loaded as a file.
 *
 * @module
 */
import fsp from "node:fs/promises";
import path from "node:path";
import { DEFAULT_COMMAND_ALLOWLIST } from "./shell/allowlist.ts";
import { atomicWrite } from "@toolfence/internal";
import { isWithin } from "@toolfence/internal";

/** The serialised form of a {@linkcode PolicyState}. */
export interface PolicyStateData {
  /** Allowlist entries: words separated by single spaces, matched as a token prefix. */
  commandAllowlist: string[];
  /** Absolute real paths a person granted writing to; a folder covers everything beneath it. */
  writeGrants: string[];
}

function normaliseCommand(entry: string): string {
  if (typeof entry !== "string") {
    throw new TypeError("An allowlist entry must be a string");
  }
  const normal = entry.trim().split(/\s+/).join(" ");
  if (normal === "" || normal.includes("\0")) {
    throw new TypeError(`Invalid allowlist entry ${JSON.stringify(entry)}`);
  }
  return normal;
}

function normaliseGrant(realPath: string): string {
  if (
    typeof realPath !== "string" || !path.posix.isAbsolute(realPath) ||
    realPath.includes("\0")
  ) {
    throw new TypeError(
      `A write grant must be an absolute path, got ${JSON.stringify(realPath)}`,
    );
  }
  return path.posix.normalize(realPath).replace(/(?<=.)\/$/, "");
}

/**
 * The allowlists and grants of one session.
 *
 * Requires no permissions (`save` and `load` need `--allow-write` / `--allow-read` for the file).
 *
 * @example
 * ```ts
 * import { PolicyState } from "@toolfence/policy";
 * const state = new PolicyState();
 * state.addCommand("npm test");
 * state.grantWrite("/home/me/project/src");
 * console.log(state.isWriteGranted("/home/me/project/src/a.ts")); // true
 * console.log(JSON.stringify(state));
 * ```
 */
export class PolicyState {
  #commands: string[];
  #grants: string[];

  /** Creates a state; the command allowlist defaults to {@linkcode DEFAULT_COMMAND_ALLOWLIST}. */
  constructor(data: Partial<PolicyStateData> = {}) {
    this.#commands = [];
    this.#grants = [];
    for (const entry of data.commandAllowlist ?? DEFAULT_COMMAND_ALLOWLIST) {
      this.addCommand(entry);
    }
    for (const grant of data.writeGrants ?? []) this.grantWrite(grant);
  }

  /** The command allowlist entries, in the order they were added. */
  commandAllowlist(): readonly string[] {
    return Object.freeze([...this.#commands]);
  }

  /** Adds an entry (whitespace is normalised); adding an existing entry does nothing. */
  addCommand(entry: string): void {
    const normal = normaliseCommand(entry);
    if (!this.#commands.includes(normal)) this.#commands.push(normal);
  }

  /** Removes an entry; returns whether it was there. */
  removeCommand(entry: string): boolean {
    const normal = normaliseCommand(entry);
    const index = this.#commands.indexOf(normal);
    if (index < 0) return false;
    this.#commands.splice(index, 1);
    return true;
  }

  /** The write grants, in the order they were given. */
  writeGrants(): readonly string[] {
    return Object.freeze([...this.#grants]);
  }

  /** Grants writing to a real path (a file, or a folder and everything beneath it). */
  grantWrite(realPath: string): void {
    const normal = normaliseGrant(realPath);
    if (!this.#grants.includes(normal)) this.#grants.push(normal);
  }

  /** Revokes exactly this grant (not grants beneath or above it); returns whether it was there. */
  revokeWrite(realPath: string): boolean {
    const normal = normaliseGrant(realPath);
    const index = this.#grants.indexOf(normal);
    if (index < 0) return false;
    this.#grants.splice(index, 1);
    return true;
  }

  /** Whether a grant covers `realPath`, judged by whole path components. */
  isWriteGranted(realPath: string): boolean {
    let normal: string;
    try {
      normal = normaliseGrant(realPath);
    } catch {
      return false;
    }
    return this.#grants.some((grant) => isWithin(normal, grant));
  }

  /** The plain data, for `JSON.stringify`. */
  toJSON(): PolicyStateData {
    return {
      commandAllowlist: [...this.#commands],
      writeGrants: [...this.#grants],
    };
  }

  /**
   * Builds a state from parsed JSON, refusing anything that is not exactly a
   * {@linkcode PolicyStateData} (unknown keys included): a state file that is not
   * understood must not silently widen or narrow what runs.
   */
  static fromJSON(data: unknown): PolicyState {
    if (typeof data !== "object" || data === null || Array.isArray(data)) {
      throw new TypeError("Policy state must be a JSON object");
    }
    const record = data as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      if (key !== "commandAllowlist" && key !== "writeGrants") {
        throw new TypeError(
          `Policy state has an unknown key ${JSON.stringify(key)}`,
        );
      }
    }
    for (const key of ["commandAllowlist", "writeGrants"] as const) {
      const value = record[key];
      if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) {
        throw new TypeError(
          `Policy state's ${key} must be an array of strings`,
        );
      }
    }
    return new PolicyState({
      commandAllowlist: record.commandAllowlist as string[],
      writeGrants: record.writeGrants as string[],
    });
  }

  /**
   * Saves the state as JSON, atomically, readable only by the owner.
   *
   * Requires `--allow-write` and `--allow-read` for the file's folder.
   */
  async save(file: string): Promise<void> {
    const absolute = path.resolve(file);
    const folder = await fsp.realpath(path.dirname(absolute));
    await atomicWrite(
      path.join(folder, path.basename(absolute)),
      JSON.stringify(this.toJSON(), null, 2) + "\n",
      { mode: 0o600 },
    );
  }

  /**
   * Loads a state saved with {@linkcode save}.
   *
   * Requires `--allow-read` for the file.
   */
  static async load(file: string): Promise<PolicyState> {
    const text = await fsp.readFile(file, "utf8");
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw new TypeError(
        `Policy state file ${file} is not valid JSON: ${(error as Error).message}`,
      );
    }
    try {
      return PolicyState.fromJSON(parsed);
    } catch (error) {
      throw new TypeError(
        `Policy state file ${file}: ${(error as Error).message}`,
      );
    }
  }

  /** An independent copy. */
  clone(): PolicyState {
    return new PolicyState(this.toJSON());
  }
}
