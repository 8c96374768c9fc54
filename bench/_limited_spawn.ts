/**
 * A bubblewrap-wrapped argv started under the resource limits the way the
 * policy's process door starts it (no shell in front of bubblewrap: the
 * command's own shell joins the cgroup and sets the rlimits inside), shared
 * by the benches that weigh the limits' share of a spawn.
 *
 * @module
 */

import { spawn } from "node:child_process";
import { limitCommand, type LimitCommandOptions, type ResourceLimits } from "../policy/limits.ts";

/**
 * Runs `argv` (bubblewrap's) under `limits` and resolves with its standard
 * output once it has ended and its cgroup is gone. Without
 * `options.bubblewrap`: a shell in front of bubblewrap, as before 2026-12-02.
 */
export async function spawnUnderLimits(
  argv: readonly string[],
  limits: ResourceLimits,
  options: LimitCommandOptions,
  where: { cwd: string; env: Record<string, string> },
): Promise<string> {
  const limited = await limitCommand(argv, limits, options);
  try {
    return await new Promise<string>((resolve, reject) => {
      const child = spawn(limited.argv[0], limited.argv.slice(1), { ...where, stdio: ["ignore", "pipe", "pipe"] });
      let out = "";
      child.stdout.on("data", (chunk) => out += chunk);
      child.once("error", reject);
      child.once("close", () => resolve(out));
    });
  } finally {
    await limited.release();
  }
}

/** The `bubblewrap` option for a bubblewrap argv that ends with a shell line `[shell, "-c", line]`. */
export function shellLineAt(argv: readonly string[]): NonNullable<LimitCommandOptions["bubblewrap"]> {
  return { command: argv.length - 3, shellLine: true };
}
