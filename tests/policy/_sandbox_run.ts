// Runs a command from sandboxArgv to completion the way the tools do: with the
// sandbox's bound descriptors passed on as 3, 4, ...

import { spawn } from "node:child_process";
import type { SandboxedCommand } from "../../policy/sandbox.ts";

/** What a finished command printed, and how it ended. */
export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `command` (30 s at most) and collects its output; does not release it. */
export function runSandboxed(
  command: Pick<SandboxedCommand, "argv" | "fds">,
  env?: Record<string, string>,
): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command.argv[0], command.argv.slice(1), {
      env,
      stdio: ["ignore", "pipe", "pipe", ...command.fds],
      timeout: 30_000,
    });
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (chunk) => stdout += chunk);
    child.stderr!.on("data", (chunk) => stderr += chunk);
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}
