/**
 * Rules for commands that read by default but can write files or run other
 * programs with some arguments. An allowlist entry says "this command may run";
 * these rules say "but not like this", whichever entry matched. The rules live
 * by program family: test runners, git, and text and file tools.
 *
 * @module
 */
import type { BashWord } from "./_tree.ts";
import type { FlagContext } from "./_options.ts";
import { RUNNER_RULES } from "./_flag_rules_runners.ts";
import { gitRule } from "./_flag_rules_git.ts";
import { jqRule, TEXT_RULES } from "./_flag_rules_text.ts";
import { DATA_RULES } from "./_flag_rules_data.ts";
import { NET_RULES } from "./_flag_rules_net.ts";
import { PROGRAM_RULES } from "./_flag_rules_programs.ts";
import { listedName } from "./_program_family.ts";

export type { FlagContext } from "./_options.ts";

/** Database, file transfer, debugger, mail and web clients that run shell commands from their own commands. */
const SHELL_ESCAPE_CLIENTS =
  "psql mysql mariadb duckdb pgcli mycli litecli usql lftp ftp sqlcmd sqlplus lldb mutt lynx w3m elinks";

/** Why a runner of {@linkcode COMMAND_RUNNERS} that runs the command after its options always asks. */
export const RUNS_GIVEN_COMMAND = "runs the command it is given";

/** Why a pager, editor or client of {@linkcode COMMAND_RUNNERS} always asks: its own commands run shell commands. */
export const RUNS_SHELL_ESCAPES = "can run shell commands from inside it";

/**
 * Commands that run another command, or change how later commands run: an
 * allowlist entry for one of them would allow everything, so they always ask.
 */
export const COMMAND_RUNNERS: ReadonlyMap<string, string> = new Map([
  ...namesFor(
    "env xargs exec command builtin eval source . sudo doas su runuser nohup time timeout nice ionice chroot setsid stdbuf unbuffer watch strace ltrace flock parallel script busybox coproc sh bash dash zsh ksh mksh fish csh tcsh fc trap pkexec gosu sg newgrp systemd-run at batch nsenter unshare firejail bwrap proot fakeroot valgrind gdb taskset chrt prlimit xvfb-run npx pnpx bunx uvx dbus-run-session tmux screen expect setarch linux32 linux64 i386 x86_64 setpriv ssh-agent capsh systemd-inhibit start-stop-daemon choom",
    RUNS_GIVEN_COMMAND,
  ),
  // The same, from profilers, test and time harnesses, process supervisors, sandboxes and compiler caches.
  ...namesFor(
    "perf runcon catchsegv faketime eatmydata nocache numactl rlwrap torsocks proxychains proxychains4 tsocks hyperfine entr tini dumb-init daemonize cpulimit trickle chpst softlimit envdir setuidgid su-exec nsjail systemd-nspawn schroot cgexec aa-exec mpirun mpiexec watchexec nodemon sem chronic ifne lckdo pee zrun mispipe ccache sccache distcc icecc caffeinate arch retry",
    RUNS_GIVEN_COMMAND,
  ),
  // The same, from session and job launchers, batch schedulers and openers (xdg-open runs the program a file's type
  // names, a `.desktop` file's `Exec=` too; crontab installs commands that run later).
  ...namesFor("dbus-launch dtach abduco tsp nq srun sbatch salloc corepack pipx", RUNS_GIVEN_COMMAND),
  // The same, from programs seldom thought of as runners: e2fsprogs' logsave runs its command with the output logged,
  // the dynamic loader runs the program it is given (`ld.so /usr/bin/touch x`), gpg-agent --daemon and
  // gpg-connect-agent --exec start theirs, systemd-cat its command, `ip netns exec` and `ip vrf exec` theirs.
  ...namesFor(
    "logsave ld.so ld-linux.so.2 ld-linux-x86-64.so.2 ld-linux-aarch64.so.1 ld64.so.1 ld64.so.2 gpg-agent " +
      "gpg-connect-agent systemd-cat ip",
    RUNS_GIVEN_COMMAND,
  ),
  // The same, from glibc's and the profilers' wrappers (`memusage`, `sotruss`, `heaptrack`, `gp-collect-app`), the
  // other builds of fakeroot, util-linux's `uclampset`, systemd's socket activator, record-and-replay debuggers,
  // container and supervision tools, and `pg_virtualenv` and `debconf-apt-progress`, which run theirs after a
  // server or a progress bar is set up: with the sandbox off and an automatic answer, `capsh -- x.sh`,
  // `memusage bash x.sh`, `sotruss bash x.sh`, `fakeroot-sysv bash x.sh` and `heaptrack bash x.sh` ran x.sh.
  ...namesFor(
    "memusage sotruss heaptrack gp-collect-app gprofng fakeroot-sysv fakeroot-tcp uclampset systemd-socket-activate " +
      "rr singularity apptainer lxc-execute lxc-attach s6-setuidgid s6-envuidgid run-one run-this-one pg_virtualenv " +
      "debconf-apt-progress flatpak-spawn distrobox scriptlive",
    RUNS_GIVEN_COMMAND,
  ),
  ...namesFor("xdg-open", "runs the program a file's type names (a `.desktop` file's own command too)"),
  ...namesFor("crontab", "installs commands that run later"),
  // Relays whose addresses are programs and files as well as sockets: socat's `SYSTEM:CMD`, `EXEC:PROG` run here,
  // `OPEN:F`, `CREATE:F` and `UNIX-CONNECT:S` open any file or socket; websocat's `sh-c:CMD` and `cmd:CMD`.
  ...namesFor("socat websocat", "runs the command or opens the file an address names"),
  ...namesFor(
    "alias hash enable export declare typeset local readonly set shopt unset let read mapfile readarray getopts",
    "changes how the shell runs later commands",
  ),
  ...namesFor(
    "less more most man vi vim nvim view ex ed nano emacs sqlite3 m4 dc gnuplot",
    RUNS_SHELL_ESCAPES,
  ),
  // Clients whose own commands, given in an argument, a script or standard input, run shell commands: psql's `\!`
  // and `\o |CMD` (`psql URL -c '\! cat /outside/secret'`), the MySQL and MariaDB clients' `system` and `\!`,
  // duckdb's `.shell`, lftp's and ftp's `!`, sqlcmd's `!!`, sqlplus's `host`, lldb's `platform shell` and `script`,
  // the text browsers' and mutt's `!`.
  ...namesFor(SHELL_ESCAPE_CLIENTS, RUNS_SHELL_ESCAPES),
]);

/**
 * The runners whose commands the analysis never sees whole: `xargs` and `parallel` take their words from a stream,
 * a pager or editor runs what is typed or configured (`!cmd`, `LESSOPEN`, `:!cmd`), `at` and `script` run what they
 * are given later, `let` evaluates its words as arithmetic, where a variable's value is evaluated again and a command
 * substitution in an array subscript of it runs (`x='a[$(CMD)]'; let x`). What those commands write is only known when
 * they run: any path, a protected one too.
 */
export const UNSEEN_COMMANDS: ReadonlySet<string> = new Set(
  (
    "xargs parallel watch flock script scriptlive at batch expect gdb fc trap tmux screen socat websocat dtach abduco tsp nq let " +
    "srun sbatch salloc xdg-open crontab " +
    "less more most man vi vim nvim view ex ed nano emacs sqlite3 m4 dc gnuplot " + SHELL_ESCAPE_CLIENTS
  ).split(" "),
);

function namesFor(names: string, why: string): [string, string][] {
  return names.split(" ").map((name) => [name, why]);
}

const FLAG_RULES = new Map([
  ...RUNNER_RULES,
  ...TEXT_RULES,
  ...DATA_RULES,
  ["git", gitRule],
  ...NET_RULES,
  ["jq", jqRule],
]);

/** Whether a program's arguments have a flag rule: what its options do is known. */
export function hasFlagRule(name: string): boolean {
  return FLAG_RULES.has(name);
}

/**
 * Judges the arguments of an allowlisted command; returns why it must ask, or
 * `undefined` when its arguments are harmless.
 */
export function flagProblem(name: string, args: readonly BashWord[], context: FlagContext = {}): string | undefined {
  // A program of PROGRAM_RULES is no known one (hasFlagRule): only the options with which it runs programs are.
  // A program of PROGRAM_RULES under another of its names (`gcc-12`, `x86_64-linux-gnu-gcc`) is judged as it is.
  const program = FLAG_RULES.has(name) ? name : listedName(name, (listed) => PROGRAM_RULES.has(listed));
  return (FLAG_RULES.get(name) ?? PROGRAM_RULES.get(program ?? name))?.(args, name, context);
}
