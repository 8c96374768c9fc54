/**
 * The racer of the tests that try a tool against an entry swapped for a link
 * while the tool runs: the entry `name` in `dir` becomes a link to `target`
 * (outside the workspace) and the entry again, by rename(2) alone, in a tight
 * loop of a separate process. Between its renames the name is also free for
 * a moment. A tool that checks a path and then acts on it by the same path
 * again follows the link swapped in meanwhile.
 *
 * @module
 */

import { spawn } from "node:child_process";
import fsp from "node:fs/promises";
import path from "node:path";
import process from "node:process";
import { exited } from "./_exited.ts";

// The entry moves to NAME.real while NAME is the link, and the link waits at NAME.link.
const RACER = `
  my ($target, $name, $relink) = @ARGV;
  symlink($target, "$name.link") or die "symlink: $!";
  while (1) {
    if ($relink) {
      symlink($target, "$name.link") unless -l "$name.link" || -l $name;
      mkdir($name) unless -e $name || -e "$name.real";
    }
    rename($name, "$name.real"); rename("$name.link", $name);
    rename($name, "$name.link"); rename("$name.real", $name);
  }
`;

/**
 * Runs `fn` while the racer swaps `dir/name` for a link to `target`, then
 * ends the racer and puts the entry back at its name (the link removed),
 * whatever state the racer stopped in. With `relink`, the racer makes the
 * link (and an empty folder at the name) again whenever they are gone, as
 * against a removal of `dir`, which would otherwise take the link at its
 * first pass and end the race.
 */
export async function whileSwappedForLink<T>(
  dir: string,
  name: string,
  target: string,
  fn: () => Promise<T>,
  options: { relink?: boolean } = {},
): Promise<T> {
  const args = ["-e", RACER, target, name, options.relink ? "1" : "0"];
  const racer = spawn("perl", args, { cwd: dir, stdio: "ignore", detached: true });
  const racerExit = exited(racer);
  try {
    return await fn();
  } finally {
    process.kill(-racer.pid!, "SIGKILL");
    await racerExit;
    const at = (suffix: string) => path.join(dir, name + suffix);
    // Stopped with the entry at NAME.real: it goes back over the link or the free name.
    await fsp.rename(at(".real"), at("")).catch(() => {});
    await fsp.rm(at(".link"), { force: true });
  }
}
