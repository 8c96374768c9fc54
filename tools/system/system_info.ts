/**
 * The `system_info` tool.
 *
 * @module
 */

import * as v from "valibot";
import os from "node:os";
import process from "node:process";
import { type Tool, tool } from "@toolfence/core";
import { sysFact } from "./_sys.ts";
import { SYSTEM_INFO_OUTPUT } from "./_outputs.ts";

/** What `system_info` returns; facts the runtime fences are left out. */
export interface SystemInfo {
  /** `linux`, `darwin`, `windows`, ... */
  os: string;
  /** Kernel release, e.g. `6.8.0-45-generic` (needs `--allow-sys=osRelease` under Deno). */
  release?: string;
  /** CPU architecture, e.g. `x64`, `arm64`. */
  arch: string;
  /** IANA time zone, e.g. `Europe/Berlin`. */
  time_zone: string;
  /** BCP 47 locale, e.g. `en-US`. */
  locale: string;
  /** The JavaScript runtime and its version, e.g. `deno 2.9.6`. */
  runtime: string;
  /** Logical CPUs (needs `--allow-sys=cpus` under Deno). */
  cpus?: number;
}

function runtimeName(): string {
  const deno = (globalThis as { Deno?: { version?: { deno?: string } } }).Deno;
  if (deno?.version?.deno) return `deno ${deno.version.deno}`;
  return `node ${process.versions.node}`;
}

/**
 * `system_info()`: the operating system, its release, the architecture, the
 * time zone and locale, the runtime.
 *
 * Requires nothing; `--allow-sys=osRelease,cpus` adds the release and the CPU count.
 *
 * @example
 * ```ts
 * import { Session, ToolBox } from "@toolfence/toolfence";
 * import { systemInfoTool } from "@toolfence/tools";
 * const session = new Session({ workspace: Deno.cwd() });
 * console.log((await new ToolBox().register(systemInfoTool).call(session, "system_info", {})).output);
 * await session.close();
 * ```
 */
export const systemInfoTool: Tool<Record<string, never>> = tool({
  name: "system_info",
  description:
    "Describe the machine the tools run on: operating system and release, CPU architecture, time zone, locale, runtime.",
  input: v.object({}),
  output: SYSTEM_INFO_OUTPUT,
  idempotent: true,
  effects: ["reads"],
  needs: {},
  optionalNeeds: { sys: ["osRelease", "cpus"] },
  run(): SystemInfo {
    const intl = Intl.DateTimeFormat().resolvedOptions();
    const release = sysFact("osRelease", () => os.release());
    const cpus = sysFact("cpus", () => os.cpus().length);
    return {
      os: process.platform === "win32" ? "windows" : process.platform,
      ...(release !== undefined ? { release } : {}),
      arch: process.arch,
      time_zone: intl.timeZone,
      locale: intl.locale,
      runtime: runtimeName(),
      ...(cpus ? { cpus } : {}),
    };
  },
});
