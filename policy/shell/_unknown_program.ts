/**
 * The program of a command line whose effects the analysis does not know: without the OS sandbox, such a program may
 * write outside the workspace, read the host or run what it is given, so an automatic answer must not let it run.
 *
 * @module
 */
import { knownProgram } from "./_command_paths.ts";
import { COMMAND_RUNNERS, RUNS_GIVEN_COMMAND } from "./_flag_rules.ts";
import { listedName } from "./_program_family.ts";

/** Words after a runner's name that are its options, numbers or durations, or assignments, not the program it runs. */
const RUNNER_WORD = /^(|-.*|[0-9][0-9.]*[A-Za-z]*|[A-Za-z_][A-Za-z0-9_]*=.*)$/;

/**
 * The options of the common runners that take the next word as their value, and the operands they take before the
 * command: `env -u cat capsh` runs capsh (cat names a variable), `timeout -s KILL 5 capsh` capsh, `chroot / capsh`
 * capsh. A value attached (`-ucat`, `--unset=cat`) is part of its word.
 */
const RUNNER_GRAMMAR: Readonly<Record<string, { values: readonly string[]; operands: number }>> = {
  env: { values: ["-u", "--unset", "-C", "--chdir", "-S", "--split-string", "-a", "--argv0"], operands: 0 },
  sudo: {
    values: [
      "-u",
      "--user",
      "-g",
      "--group",
      "-C",
      "--close-from",
      "-D",
      "--chdir",
      "-h",
      "--host",
      "-p",
      "--prompt",
      "-r",
      "--role",
      "-t",
      "--type",
      "-T",
      "--command-timeout",
      "-U",
      "--other-user",
    ],
    operands: 0,
  },
  doas: { values: ["-u", "-C"], operands: 0 },
  runuser: {
    values: ["-u", "--user", "-g", "--group", "-G", "--supp-group", "-w", "--whitelist-environment"],
    operands: 0,
  },
  nice: { values: ["-n", "--adjustment"], operands: 0 },
  ionice: { values: ["-c", "--class", "-n", "--classdata", "-p", "--pid", "-P", "--pgid", "-u", "--uid"], operands: 0 },
  stdbuf: { values: ["-i", "--input", "-o", "--output", "-e", "--error"], operands: 0 },
  time: { values: ["-f", "--format", "-o", "--output"], operands: 0 },
  exec: { values: ["-a"], operands: 0 },
  timeout: { values: ["-s", "--signal", "-k", "--kill-after"], operands: 1 },
  chroot: { values: ["--userspec", "--groups"], operands: 1 },
  taskset: { values: [], operands: 1 },
  chrt: { values: [], operands: 1 },
  setarch: { values: [], operands: 1 },
  sg: { values: [], operands: 1 },
  logsave: { values: [], operands: 1 },
  prlimit: { values: ["-p", "--pid"], operands: 0 },
  setpriv: {
    values: [
      "--reuid",
      "--regid",
      "--groups",
      "--securebits",
      "--inh-caps",
      "--ambient-caps",
      "--bounding-set",
      "--selinux-label",
      "--apparmor-profile",
    ],
    operands: 0,
  },
  unshare: { values: ["-R", "--root", "-w", "--wd", "-S", "--setuid", "-G", "--setgid"], operands: 0 },
  nsenter: {
    values: ["-t", "--target", "-S", "--setuid", "-G", "--setgid", "-R", "--root", "-w", "--wd"],
    operands: 0,
  },
};

/**
 * The program of a simple command whose effects the analysis does not know, if it runs one: itself, or behind a
 * runner that runs the command it is given (`timeout 5 capsh -- x.sh`), the first word after the runner's options,
 * numbers and assignments (an option's value taken for the program makes the line ask a person, never run). The
 * shell's declarations, pagers, editors and clients are judged as they are.
 */
export function unknownProgram(words: readonly string[]): string | undefined {
  const [name] = words;
  if (name === undefined) return undefined;
  const runner = listedName(name, (listed) => COMMAND_RUNNERS.has(listed));
  if (runner !== undefined) {
    if (COMMAND_RUNNERS.get(runner) !== RUNS_GIVEN_COMMAND) return undefined;
    // `trap HANDLER SIGNAL...` runs the handler, a command line; `trap '' TERM`, `trap - TERM`, `trap -p` none.
    if (runner === "trap") {
      const handler = words[1]?.trim() ?? "";
      return handler === "" || handler.startsWith("-") ? undefined : unknownProgram(handler.split(/\s+/));
    }
    const command = runnerCommand(runner, words);
    // A shell it starts runs what it reads, which nobody saw (`env capsh <<< '...'`, `timeout 9 unshare < f`).
    if (command === undefined) return startsShell(words) ? name : undefined;
    return unknownProgram(command);
  }
  return knownProgram(words) ? undefined : name;
}

/**
 * Runners that start a shell when they are given no command (`unshare`, `fakeroot`, `newgrp`, `sg GROUP`, `nsenter`,
 * `chroot DIR`, `capsh --`): it runs whatever it reads, from a here-string, a pipe or a file (`unshare <<< 'cat
 * /outside/secret'` printed it with the sandbox off and an automatic answer), code nobody saw.
 */
const SHELL_WHEN_BARE: ReadonlySet<string> = new Set(
  ("su sudo doas runuser sg newgrp unshare nsenter chroot fakeroot fakeroot-sysv fakeroot-tcp capsh firejail proot " +
    "dbus-run-session").split(" "),
);

/** Whether a runner's words start a shell that reads its commands: a runner of {@linkcode SHELL_WHEN_BARE}, bare. */
export function startsShell(words: readonly string[]): boolean {
  const runner = listedName(words[0] ?? "", (listed) => SHELL_WHEN_BARE.has(listed));
  return runner !== undefined && runnerCommand(runner, words) === undefined;
}

/**
 * The options of the runners that run their command in another folder (`env -C DIR`, `sudo -D DIR`, `unshare -w DIR`):
 * the relative paths of the command lead from there.
 */
const CHDIR_OPTIONS: Readonly<Record<string, { short: string; long: readonly string[] }>> = {
  env: { short: "C", long: ["chdir"] },
  sudo: { short: "D", long: ["chdir"] },
  unshare: { short: "w", long: ["wd"] },
  nsenter: { short: "w", long: ["wd"] },
};

/**
 * Whether a runner's own options (those before the command it runs) move the command into another folder: its
 * relative paths, judged from the folder the line runs in, lead from that one. Before, with the sandbox off and an
 * automatic answer, `env -C sub cat lnk` printed the file outside `sub/lnk` leads to, where `./lnk` was a file of the
 * workspace.
 */
export function runsElsewhere(words: readonly string[]): boolean {
  // Behind another runner too (`timeout 5 env -C sub cat f`): any word may be the runner it starts.
  return words.some((_, index) => movesItsCommand(words.slice(index)));
}

function movesItsCommand(words: readonly string[]): boolean {
  const runner = listedName(words[0] ?? "", (listed) => Object.hasOwn(CHDIR_OPTIONS, listed));
  if (runner === undefined) return false;
  const options = CHDIR_OPTIONS[runner];
  const command = runnerCommand(runner, words);
  const own = words.slice(1, command === undefined ? undefined : words.length - command.length);
  return own.some((word) => optionNamed(word, options));
}

/**
 * The variables a runner's own words set for the command it runs, as a prefix assignment does: `env PATH=. cat f`
 * runs the workspace's `./cat`, `sudo LD_PRELOAD=...` loads a library; `?` for what a string env splits into words
 * may set (`env -SPATH=. cat f`). Behind another runner too (`timeout 5 env PATH=. cat f`). Taking variables away
 * (`env -u NAME`, `env -i`) moves nothing into the workspace's hands.
 */
export function runnerVariables(words: readonly string[]): string[] {
  const names: string[] = [];
  for (let index = 0; index < words.length; index++) {
    const runner = listedName(words[index], (listed) => COMMAND_RUNNERS.get(listed) === RUNS_GIVEN_COMMAND);
    if (runner === undefined) continue;
    const rest = words.slice(index);
    const command = runnerCommand(runner, rest);
    const own = rest.slice(1, command === undefined ? undefined : rest.length - command.length);
    for (const word of own) {
      const assigned = /^([A-Za-z_][A-Za-z0-9_]*)=/.exec(word);
      if (assigned !== null) names.push(assigned[1]);
      else if (runner === "env" && splitsString(word)) names.push("?");
    }
  }
  return names;
}

/** Whether an option word of env is `-S`/`--split-string` (in a cluster, before a letter that takes a value). */
function splitsString(word: string): boolean {
  if (word.startsWith("--")) return optionNamed(word, { short: "", long: ["split-string"] });
  if (!word.startsWith("-")) return false;
  for (const letter of word.slice(1)) {
    if (letter === "S") return true;
    if ("uCa".includes(letter)) return false;
  }
  return false;
}

/** Whether an option word names one of `options`: a long one by any start of it, a short one in its cluster. */
function optionNamed(word: string, options: { short: string; long: readonly string[] }): boolean {
  if (word.startsWith("--")) {
    const given = word.slice(2).split("=", 1)[0];
    return given !== "" && options.long.some((long) => long.startsWith(given));
  }
  return word.startsWith("-") && [...word.slice(1)].some((letter) => options.short.includes(letter));
}

/** The command a runner runs, its words after the runner's options and operands; `undefined` when it has none. */
function runnerCommand(runner: string, words: readonly string[]): readonly string[] | undefined {
  const grammar = RUNNER_GRAMMAR[runner];
  let operands = grammar?.operands ?? 0;
  for (let index = 1; index < words.length; index++) {
    const word = words[index];
    if (word === "--") continue;
    if (grammar?.values.includes(word)) {
      index++;
      continue;
    }
    if (RUNNER_WORD.test(word) && (operands === 0 || word.startsWith("-"))) continue;
    if (operands > 0) {
      operands--;
      continue;
    }
    return words.slice(index);
  }
  return undefined;
}
