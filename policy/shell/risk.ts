/**
 * The risk assessor that judges a shell command the allowlist did not allow,
 * and the mapping from its answer to the confirmation prompt a host shows.
 *
 * The default assessor works from rules; an LLM-backed one (through the
 * sub-agent provider) implements the same {@linkcode RiskAssessor} interface.
 *
 * @module
 */
import type { CommandCheck } from "./check_command.ts";
import { visibleText } from "../_visible_text.ts";
import { COMMAND_RUNNERS } from "./_flag_rules.ts";
import { listedName } from "./_program_family.ts";
import { unknownProgram } from "./_unknown_program.ts";
import { clockSetter } from "./_flag_rules_text.ts";

/** What a risk assessor answers for one command. */
export interface RiskAssessment {
  /** `allow`: run without asking; `unsure`: ask, default yes; `reject`: ask, default no. */
  decision: "allow" | "unsure" | "reject";
  /** One sentence a person can judge the command by. */
  reason: string;
  /** What the command does, e.g. `destroy_data`; some kinds always ask a person. */
  kind: string;
}

/** Judges a command that the allowlist did not allow. */
export interface RiskAssessor {
  /**
   * Assesses `command`, given the allowlist check of it.
   * Rejects with `signal.reason` when the signal aborts.
   */
  assess(command: string, check: CommandCheck, signal?: AbortSignal): Promise<RiskAssessment>;
}

/**
 * Kinds that always ask a person, whatever the decision and even with
 * `autoConfirm`: installing packages outside the allowed paths, changing the
 * state of the system, running code the project controls without the OS
 * sandbox, and, without it, reaching a path that may lie outside the
 * workspace, connecting with a network program, reading the host's
 * processes, or running a program whose effects the checker does not know.
 *
 * @example
 * ```ts
 * import { ALWAYS_ASK_KINDS } from "@toolfence/policy";
 * console.log(ALWAYS_ASK_KINDS.includes("change_system_status")); // true
 * ```
 */
export const ALWAYS_ASK_KINDS: readonly string[] = Object.freeze([
  "install_package_outside_allowed_paths",
  "change_system_status",
  "project_code_unsandboxed",
  "outside_unsandboxed",
  "network_unsandboxed",
  "host_unsandboxed",
  "unknown_unsandboxed",
]);

/** The confirmation a host shows for an assessed command. */
export interface CommandPrompt {
  /** Prompt title; "Dangerous Command Confirmation" for rejected commands. */
  title: string;
  /** The command and the assessor's reason. */
  message: string;
  /** The answer taken when nobody answers (auto-confirm): yes for unsure, no for reject. */
  defaultChoice: boolean;
  /** True when only a person may answer: automatic confirmation must not. */
  requirePerson: boolean;
}

const SYSTEM_COMMANDS = new Set(
  ("sudo su doas pkexec runuser systemctl service shutdown reboot halt poweroff init telinit kill killall pkill " +
    "mount umount swapon swapoff sysctl crontab at useradd userdel usermod groupadd groupdel passwd chpasswd " +
    "visudo iptables ip6tables nft ufw firewall-cmd modprobe insmod rmmod launchctl hostnamectl timedatectl " +
    "update-alternatives ldconfig setcap chroot").split(" "),
);

const SYSTEM_PACKAGE_MANAGERS = new Set(
  "apt apt-get aptitude dpkg yum dnf rpm zypper pacman apk brew port snap flatpak nix-env emerge pkg".split(" "),
);

const DESTRUCTIVE_COMMANDS = new Set("shred wipefs mkfs fdisk parted dd truncate srm".split(" "));

const SHELLS_AND_INTERPRETERS = new Set(
  "sh bash dash zsh ksh fish python python3 perl ruby node deno bun php lua".split(" "),
);

/**
 * Programs whose purpose is a connection: without the OS sandbox, whose namespace has no network but the egress
 * proxy's judged one, they reach whatever the server's host reaches (its loopback services, a cloud's metadata
 * service), so there they need a person ({@linkcode checkAnalysis} marks them as needing the sandbox). Not public API.
 */
export const NETWORK_COMMANDS: ReadonlySet<string> = new Set(
  "curl wget ssh scp sftp rsync nc ncat netcat telnet ftp socat psql mysql redis-cli mongosh dig nslookup ping".split(
    " ",
  ),
);

/**
 * Programs that read the host's other processes or its logs by themselves, with no path on the line: their
 * environments and command lines (`ps e`, `pgrep -a`, `lsof`, `ss -p`), their memory (`strace -p`, `gdb -p`), the
 * kernel's and the system's logs. Inside the sandbox `/proc` shows only its own processes; without it, before
 * 2026-12-06, `ps auxeww` on an automatic yes printed the server's OPENAI_API_KEY. Not public API.
 */
export const HOST_READERS: ReadonlySet<string> = new Set(
  ("ps pgrep pkill pidof pstree top htop atop btop lsof fuser ss netstat pmap pwdx prtstat strace ltrace gdb gcore " +
    "perf dmesg journalctl w last lastb lastlog sysctl ipcs " +
    // The system's databases through NSS (`getent shadow` reads /etc/shadow), the keyrings and secret stores, the
    // buses and the container engines' and clusters' sockets (`docker cp`, `kubectl get secret`), and the clients
    // that take their credentials from the home folder (`gh auth token`, `aws`, `gcloud`).
    // gpg reads and writes the home folder's keyrings (`gpg --export-secret-keys` prints its secret keys).
    "getent keyctl secret-tool gpg gpg2 gpgsm gpgtar busctl dbus-send gdbus docker podman nerdctl ctr crictl kubectl helm gh aws gcloud az " +
    "vault").split(" "),
);

/** The subcommands of openssl that open a connection or listen for one. */
const OPENSSL_CONNECTS: ReadonlySet<string> = new Set(["s_client", "s_server", "s_time", "ocsp"]);

/**
 * What a simple command's program reaches beyond its paths without the sandbox, by any path to it: the network
 * ({@linkcode NETWORK_COMMANDS}), the host's processes and logs ({@linkcode HOST_READERS}), or nothing.
 */
export function reachesHost(words: readonly string[]): "network" | "processes" | undefined {
  return throughRunners(words, reachOf);
}

/**
 * What `found` finds of a simple command's words, or of the words a runner it starts may run: through a runner
 * (`timeout 5 ps e`, `nice curl`, `stdbuf -oL ps`, `exec ps`), any word it may run, as the project code of a runner is
 * found: before, `timeout 5 ps auxeww` ran where `ps auxeww` asked a person.
 */
function throughRunners<T>(
  words: readonly string[],
  found: (words: readonly string[]) => T | undefined,
): T | undefined {
  const direct = found(words);
  if (direct !== undefined) return direct;
  if (words[0] === undefined || listedName(words[0], (listed) => COMMAND_RUNNERS.has(listed)) === undefined) {
    return undefined;
  }
  for (let index = 1; index < words.length; index++) {
    const through = found(words.slice(index));
    if (through !== undefined) return through;
  }
  return undefined;
}

/**
 * The options with which a runner acts on processes already running, not on the command it is given: their I/O
 * class, scheduling policy, CPU affinity, resource limits or OOM score (`ionice -c 3 -p PID`, `chrt -i -p 0 PID`,
 * `taskset -p 1 PID`, `prlimit --pid PID --nofile=0:0`, `choom -p PID -n 1000`), and those of its options that take
 * the next word as their value.
 */
const PROCESS_OPTIONS: Readonly<
  Record<string, { short: string; long: readonly string[]; values?: readonly string[] }>
> = {
  ionice: { short: "pPu", long: ["pid", "pgid", "uid"], values: ["-c", "--class", "-n", "--classdata"] },
  chrt: { short: "p", long: ["pid"] },
  taskset: { short: "p", long: ["pid"] },
  prlimit: { short: "p", long: ["pid"] },
  choom: { short: "p", long: ["pid"], values: ["-n", "--adjust"] },
  uclampset: { short: "p", long: ["pid"], values: ["-m", "-M"] },
};

/**
 * How a simple command changes the state of the system beyond its own processes and files, if it does: date setting
 * the clock (`date -s`, `date MMDDhhmm`), a runner acting on running processes ({@linkcode PROCESS_OPTIONS}). Inside
 * the sandbox its capabilities are dropped and its PID namespace holds only its own processes; without it, before,
 * `date -s 2020-01-01` and `prlimit --pid PID --nofile=0:0` (any PID, the server's too) ran on an automatic yes.
 */
function systemChange(words: readonly string[]): string | undefined {
  const name = listedName(words[0] ?? "", (listed) => listed === "date" || Object.hasOwn(PROCESS_OPTIONS, listed));
  if (name === "date") {
    const args = words.slice(1).map((word) => ({ text: word, value: word, mayBeOption: word.startsWith("-") }));
    return clockSetter(args) === undefined ? undefined : "sets the system clock";
  }
  const options = name === undefined ? undefined : PROCESS_OPTIONS[name];
  if (options === undefined) return undefined;
  // Its options and their values come before the command it runs (whose own options are not its).
  for (let index = 1; index < words.length; index++) {
    const word = words[index];
    if (word === "--" || (!word.startsWith("-") && !/^[0-9]/.test(word))) return undefined;
    if (options.values?.includes(word)) index++;
    if (!word.startsWith("-")) continue;
    const given = word.startsWith("--") ? word.slice(2).split("=", 1)[0] : undefined;
    const acts = given === undefined
      ? [...word.slice(1)].some((letter) => options.short.includes(letter))
      : given !== "" && options.long.some((long) => long.startsWith(given));
    if (acts) return "changes processes already running (their priority, CPU, limits or OOM score)";
  }
  return undefined;
}

// By the program's name under every name a system installs it by (`nc.openbsd`, `ps.procps`), as the other lists
// are matched.
function reachOf(words: readonly string[]): "network" | "processes" | undefined {
  const name = words[0] ?? "";
  const base = name.slice(name.lastIndexOf("/") + 1);
  // openssl's clients and servers (`openssl s_client -connect 127.0.0.1:PORT`) connect as curl does.
  if (listedName(base, (listed) => listed === "openssl") !== undefined && OPENSSL_CONNECTS.has(words[1] ?? "")) {
    return "network";
  }
  if (listedName(base, (listed) => NETWORK_COMMANDS.has(listed)) !== undefined) return "network";
  return listedName(base, (listed) => HOST_READERS.has(listed)) !== undefined ? "processes" : undefined;
}

/** Whether a word is one of the options: `-r` also inside a cluster like `-rf`, `--force` also as `--force=x`. */
function has(words: readonly string[], ...options: string[]): boolean {
  return words.some((word) =>
    options.some((option) => {
      if (word === option) return true;
      if (option.startsWith("--")) return word.startsWith(`${option}=`);
      return /^-[A-Za-z]+$/.test(word) && word.includes(option.slice(1));
    })
  );
}

function installKind(words: readonly string[]): string | undefined {
  const [name, sub] = words;
  if (SYSTEM_PACKAGE_MANAGERS.has(name) && /^(install|add|upgrade|remove|purge|erase|-S|-i|-U)/.test(sub ?? "")) {
    return "install_package_outside_allowed_paths";
  }
  const subcommand = sub ?? "";
  if (/^pip[0-9.]*$/.test(name) || (name.startsWith("python") && words[1] === "-m" && /^pip/.test(words[2] ?? ""))) {
    const args = name.startsWith("python") ? words.slice(3) : words.slice(1);
    if (args[0] !== "install" && args[0] !== "uninstall") return undefined;
    return has(args, "-t", "--target", "--prefix", "--root")
      ? "install_package"
      : "install_package_outside_allowed_paths";
  }
  if (["npm", "pnpm", "yarn", "bun"].includes(name)) {
    if (!/^(install|i|add|ci|update|remove|uninstall|global|link)$/.test(subcommand)) return undefined;
    return has(words, "-g", "--global") || subcommand === "global" || subcommand === "link"
      ? "install_package_outside_allowed_paths"
      : "install_package";
  }
  if (["cargo", "go", "gem", "pipx", "uv", "deno"].includes(name) && /^(install|tool)$/.test(subcommand)) {
    return "install_package_outside_allowed_paths";
  }
  return undefined;
}

function looksDestructive(words: readonly string[]): boolean {
  const [name] = words;
  if (DESTRUCTIVE_COMMANDS.has(name) || name.startsWith("mkfs.")) return true;
  if (name === "rm") return has(words.slice(1), "-r", "-R", "-f", "--recursive", "--force");
  if (name === "find") return words.includes("-delete") || (words.includes("-exec") && words.includes("rm"));
  if (name === "git") {
    return (words[1] === "reset" && words.includes("--hard")) ||
      (words[1] === "clean" && has(words.slice(2), "-f", "--force")) ||
      (words[1] === "push" && has(words.slice(2), "-f", "--force", "--force-with-lease")) ||
      (words[1] === "checkout" && words.includes("--") && words.includes("."));
  }
  return false;
}

function assessWords(words: readonly string[]): RiskAssessment | undefined {
  const name = words[0];
  if (name === undefined) return undefined;
  const shown = words.join(" ");
  if (
    SYSTEM_COMMANDS.has(name) ||
    (["chmod", "chown", "chgrp"].includes(name) &&
      words.some((w) => /^\/(etc|usr|bin|sbin|lib|boot|var|sys|proc)(\/|$)/.test(w)))
  ) {
    return { decision: "reject", kind: "change_system_status", reason: `\`${shown}\` changes the state of the system` };
  }
  const change = throughRunners(words, systemChange);
  if (change !== undefined) {
    return {
      decision: "reject",
      kind: "change_system_status",
      reason: `\`${shown}\` ${change}, which changes the state of the system`,
    };
  }
  const install = installKind(words);
  if (install === "install_package_outside_allowed_paths") {
    return {
      decision: "unsure",
      kind: install,
      reason: `\`${shown}\` installs or removes packages outside the workspace`,
    };
  }
  if (looksDestructive(words)) {
    return {
      decision: "reject",
      kind: "destroy_data",
      reason: `\`${shown}\` deletes or overwrites data that cannot be recovered`,
    };
  }
  if (install !== undefined) {
    return {
      decision: "unsure",
      kind: install,
      reason: `\`${shown}\` installs packages into the workspace (and may run their install scripts)`,
    };
  }
  if (
    NETWORK_COMMANDS.has(name) ||
    (name === "git" && /^(push|fetch|pull|clone|ls-remote|submodule)$/.test(words[1] ?? ""))
  ) {
    return { decision: "unsure", kind: "network", reason: `\`${shown}\` reaches the network` };
  }
  return undefined;
}

const PIPE_TO_SHELL = new RegExp(
  String.raw`\|\s*(?:sudo\s+)?(?:${[...SHELLS_AND_INTERPRETERS].join("|")})\b`,
);
const SENSITIVE_REDIRECT =
  /(?:^|[^<&0-9])[0-9]*>{1,2}\|?\s*["']?(?:~|\$HOME|\$\{HOME\}|\/etc\/|\/usr\/|\/bin\/|\/sbin\/|\/boot\/|\/lib|\/dev\/(?!null\b)|\/proc\/|\/sys\/)/;

const RANK: Record<RiskAssessment["decision"], number> = { allow: 0, unsure: 1, reject: 2 };

function worst(assessments: RiskAssessment[]): RiskAssessment | undefined {
  let result: RiskAssessment | undefined;
  for (const assessment of assessments) {
    const alwaysAsk = ALWAYS_ASK_KINDS.includes(assessment.kind);
    const resultAlwaysAsk = result !== undefined && ALWAYS_ASK_KINDS.includes(result.kind);
    if (
      result === undefined ||
      (alwaysAsk && !resultAlwaysAsk) ||
      (alwaysAsk === resultAlwaysAsk && RANK[assessment.decision] > RANK[result.decision])
    ) {
      result = assessment;
    }
  }
  return result;
}

/**
 * The rules-based default assessor. It never allows what the allowlist check
 * did not allow; it tells dangerous commands (reject: deleting data, piping
 * downloads into a shell, writing system or dot files, commands the parser
 * could not read) from merely unknown ones (unsure), and marks system changes
 * and package installs outside the workspace, which always ask a person.
 *
 * Needs no permissions.
 *
 * @example
 * ```ts
 * import { checkCommand } from "@toolfence/policy";
 * import { rulesRiskAssessor } from "@toolfence/policy";
 * const command = "rm -rf build";
 * const assessment = await rulesRiskAssessor.assess(command, await checkCommand(command));
 * console.log(assessment.decision, assessment.kind); // "reject" "destroy_data"
 * ```
 */
export const rulesRiskAssessor: RiskAssessor = {
  assess(command: string, check: CommandCheck, signal?: AbortSignal): Promise<RiskAssessment> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (check.verdict === "allow") {
      return Promise.resolve({
        decision: "allow",
        kind: "allowlisted",
        reason: "every command in it is on the allowlist",
      });
    }
    const found: RiskAssessment[] = [];
    for (const finding of check.commands) {
      const assessment = assessWords(finding.words);
      if (assessment !== undefined) found.push(assessment);
    }
    if (PIPE_TO_SHELL.test(command)) {
      const downloads = check.commands.some((finding) => NETWORK_COMMANDS.has(finding.words[0] ?? ""));
      found.push({
        decision: "reject",
        kind: downloads ? "run_downloaded_code" : "pipe_to_shell",
        reason: downloads
          ? "it pipes downloaded content into a shell or interpreter"
          : "it pipes text into a shell or interpreter, which runs it as code",
      });
    }
    if (SENSITIVE_REDIRECT.test(command)) {
      found.push({
        decision: "reject",
        kind: "write_outside_workspace",
        reason: "it redirects output into a system path or a file in the home folder",
      });
    }
    if (!check.parsed) {
      found.push({
        decision: "reject",
        kind: "not_understood",
        reason: `the command could not be fully parsed: ${check.reasons[0] ?? "unknown reason"}`,
      });
    }
    const verdict = worst(found);
    // Without the sandbox, project code needs a person; a dangerous verdict
    // keeps its warning (the caller still requires a person for it).
    if (
      check.sandbox?.needed === true && check.sandbox.available === false &&
      !(verdict !== undefined && (verdict.decision === "reject" || ALWAYS_ASK_KINDS.includes(verdict.kind)))
    ) {
      const programs = check.commands.filter((finding) => finding.projectCode).map((finding) => finding.words[0]);
      const why = `without the OS sandbox, which is unavailable: ${check.sandbox.reason ?? "no reason given"}`;
      const reaching = check.paths.filter((p) => p.decision === "ask").map((p) => p.written);
      const reaches = check.commands.map((finding) => [reachesHost(finding.words), finding.words[0]] as const);
      const connecting = reaches.filter(([reach]) => reach === "network").map(([, program]) => program);
      const watching = reaches.filter(([reach]) => reach === "processes").map(([, program]) => program);
      const unknown = check.commands.flatMap((finding) => finding.ok ? [] : unknownProgram(finding.words) ?? []);
      return Promise.resolve(
        programs.length > 0
          ? {
            decision: "unsure",
            kind: "project_code_unsandboxed",
            reason: `it runs code the project controls (${[...new Set(programs)].join(", ")}) ${why}`,
          }
          : reaching.length > 0
          ? {
            decision: "unsure",
            kind: "outside_unsandboxed",
            reason: `it reaches paths that may lie outside the workspace (${[...new Set(reaching)].join(", ")}) ${why}`,
          }
          : watching.length > 0
          ? {
            decision: "unsure",
            kind: "host_unsandboxed",
            reason: `it reads the host's other processes, logs, system databases, sockets or credentials by itself (${
              [...new Set(watching)].join(", ")
            }), the server's environment among them, ${why}`,
          }
          : connecting.length === 0 && unknown.length > 0
          ? {
            decision: "unsure",
            kind: "unknown_unsandboxed",
            reason: `it runs programs whose effects the checker does not know (${
              [...new Set(unknown)].join(", ")
            }), which may write outside the workspace, read the host or run other programs, ${why}`,
          }
          : {
            decision: "unsure",
            kind: "network_unsandboxed",
            reason: `it connects (${[...new Set(connecting)].join(", ")}) to whatever this host reaches, its own ` +
              `services too, ${why}`,
          },
      );
    }
    if (verdict !== undefined) return Promise.resolve(verdict);
    return Promise.resolve({
      decision: "unsure",
      kind: "not_allowlisted",
      reason: check.reasons[0] ?? "it is not on the allowlist",
    });
  },
};

/**
 * Maps an assessment to the prompt a host shows, or `undefined` when the
 * command runs without asking. Unsure asks with "yes" as default; reject asks
 * under "Dangerous Command Confirmation" with "no" as default; the kinds in
 * {@linkcode ALWAYS_ASK_KINDS} ask a person even when the decision was allow.
 *
 * Needs no permissions.
 *
 * @example
 * ```ts
 * import { promptForAssessment } from "@toolfence/policy";
 * const prompt = promptForAssessment("rm -rf build", {
 *   decision: "reject",
 *   kind: "destroy_data",
 *   reason: "deletes files",
 * });
 * console.log(prompt?.title, prompt?.defaultChoice); // "Dangerous Command Confirmation" false
 * ```
 */
export function promptForAssessment(command: string, assessment: RiskAssessment): CommandPrompt | undefined {
  const requirePerson = ALWAYS_ASK_KINDS.includes(assessment.kind);
  if (assessment.decision === "allow" && !requirePerson) return undefined;
  const dangerous = assessment.decision === "reject";
  return {
    title: dangerous ? "Dangerous Command Confirmation" : "Command Confirmation",
    message: `The agent wants to run:\n\n  ${
      visibleText(command)
    }\n\n${assessment.reason} (${assessment.kind}). Run it?`,
    defaultChoice: !dangerous,
    requirePerson,
  };
}
