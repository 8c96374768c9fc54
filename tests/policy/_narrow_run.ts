/**
 * Running tools in a real `deno run` under chosen flags (see _needs_probe.ts),
 * with a bound on how long it may take, and reading the flags `main.ts flags`
 * prints.
 *
 * @module
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { DENO } from "../_runtime.ts";

const here = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.join(here, "..", "..");

/** Longest a whole fenced run may take; a hang fails the test instead of stalling it. */
export const RUN_TIMEOUT_MS = 60_000;

/** A call's result as the probe prints it. */
export interface ProbeResult {
  status: string;
  output: unknown;
  error?: string;
  errorCode?: string;
  details?: { flag?: string; flags?: string[]; missing?: { flag?: string }[] };
  ms: number;
}

/** What a fenced run printed. */
export interface ProbeReport {
  listed: string[];
  results: ProbeResult[];
  /** The Deno that ran the probe. */
  execPath: string;
}

/** What a fenced run is asked to do. */
export interface ProbeRequest {
  workdir: string;
  tempParent: string;
  groups: string[];
  calls: { name: string; args: Record<string, unknown> }[];
}

/** Runs the probe under exactly `flags`; rejects when it fails, prints nothing or outlives the bound. */
export function runNarrow(flags: readonly string[], request: ProbeRequest): Promise<ProbeReport> {
  return new Promise((resolve, reject) => {
    execFile(
      DENO,
      ["run", ...flags, path.join(here, "_needs_probe.ts"), JSON.stringify(request)],
      { timeout: RUN_TIMEOUT_MS, killSignal: "SIGKILL" },
      (error, stdout, stderr) => {
        if (error) return reject(new Error(`fenced run failed under ${flags.join(" ")}: ${error.message}\n${stderr}`));
        resolve(JSON.parse(stdout.trim().split("\n").at(-1)!));
      },
    );
  });
}

/** The flags `main.ts flags` prints for the workspace, temp folder and groups. */
export function printedFlags(workdir: string, tempParent: string, groups: readonly string[]): Promise<string[]> {
  return new Promise((resolve, reject) => {
    execFile(
      DENO,
      [
        "run",
        "-A",
        path.join(ROOT, "main.ts"),
        "flags",
        "--workspace",
        workdir,
        "--temp-dir",
        tempParent,
        "--groups",
        groups.join(","),
      ],
      { timeout: RUN_TIMEOUT_MS },
      (error, stdout, stderr) =>
        error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout.trim().split(/\s+/)),
    );
  });
}

/** `flags` without the one named `name` (`--allow-run`, `--allow-env`, ...), whatever its value. */
export function without(flags: readonly string[], name: string): string[] {
  return flags.filter((f) => f !== name && !f.startsWith(name + "="));
}
