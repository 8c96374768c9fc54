/**
 * A bubblewrap-wrapped argv started under the resource limits the way the
 * policy's process door starts it (a shell in front of bubblewrap joins the
 * cgroup, sets the rlimits and execs it), shared by the benches that weigh
 * the limits' share of a spawn.
 *
 * @module
 */

import { spawn } from "node:child_process";
import { limitCommand, type LimitCommandOptions, type ResourceLimits } from "../policy/limits.ts";

/**
 * Runs `argv` (bubblewrap's) under `limits` and resolves with its standard
 * output once it has ended and its cgroup is gone. `rewrite`, when given,
 * changes the limited argv before the start (a bench's "the way before").
 */
export async function spawnUnderLimits(
  argv: readonly string[],
  limits: ResourceLimits,
  options: LimitCommandOptions,
  where: { cwd: string; env: Record<string, string> },
  rewrite: (argv: string[]) => string[] = (argv) => argv,
): Promise<string> {
  const limited = await limitCommand(argv, limits, options);
  try {
    const started = rewrite(limited.argv);
    return await new Promise<string>((resolve, reject) => {
      const child = spawn(started[0], started.slice(1), { ...where, stdio: ["ignore", "pipe", "pipe"] });
      let out = "";
      child.stdout.on("data", (chunk) => out += chunk);
      child.once("error", reject);
      child.once("close", () => resolve(out));
    });
  } finally {
    await limited.release();
  }
}
