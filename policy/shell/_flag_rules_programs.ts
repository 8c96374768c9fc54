/**
 * Flag rules for programs no default entry allows, which a policy file's allow
 * rule may let run: ssh, scp and sftp, the C compilers, and the programs that
 * read their arguments from a response file (`@FILE`). An allow rule for one of
 * them allows it as a client, compiler or binary tool; the options with which
 * it runs another program or loads a library ask:
 *
 * - ssh `-o ProxyCommand=CMD` runs CMD here before it connects (even to a host
 *   that does not exist), and so do `LocalCommand`, `KnownHostsCommand`,
 *   `Match exec` in a config file (`-F`), a PKCS#11 or security-key library
 *   (`-I`, `PKCS11Provider`); scp's and sftp's `-S PROGRAM`, sftp's `-D` (the
 *   server program, run here) and `-b` (a batch file, whose `!cmd` lines run
 *   here). `-o` asks unless its keyword is one known to change only how the
 *   connection is made.
 * - gcc `-wrapper PROG,ARGS` runs PROG around each of its programs, `-B DIR`
 *   runs cc1, as and ld from DIR, a spec file or a plugin changes or loads
 *   code, clang's `-Xclang -load`, `--ld-path`, and a linker plugin too.
 * - `@FILE` hands gcc, clang, ld, the binutils, javac, java and rustc more
 *   arguments from FILE, options among them, which the checker cannot see
 *   (and FILE may lie anywhere).
 *
 * - gpg's `--agent-program`, `--dirmngr-program`, `--photo-viewer`, an options
 *   file or another home folder (which name the programs it starts), and the
 *   files it writes besides `-o` (`--log-file`, `--keyring`).
 * - openssl's `-provider-path`, a provider not its own, an engine and a
 *   configuration file load a library.
 * - install's `--strip-program` runs a program.
 * - mknod's block and character nodes reach the host's devices.
 * - `rustup run`, `pyenv exec`, `docker run` and the like run the command
 *   they are given.
 * - netcat's and ncat's `-e PROG`, `-c CMD`, `--sh-exec`, `--lua-exec` run a
 *   program for the connection.
 *
 * The paths they name stay judged as an unknown program's (every path as a
 * write it may be): these rules only add what asks.
 *
 * @module
 */
import type { BashWord } from "./_tree.ts";
import { hiddenOptionReason, shown } from "./_options.ts";
import type { Rule } from "./_flag_rules_runners.ts";
import type { PathOperand } from "./_path_operands.ts";

/** Which letters take a value, per program (OpenSSH 9's). */
const SSH_VALUED: Readonly<Record<string, string>> = {
  ssh: "BbcDEeFIiJLlmOoPpQRSWw",
  scp: "cDFiJloPSX",
  sftp: "BbcDFiJloPRSX",
};

/** Letters that ask whatever their value, per program, and why. */
const SSH_ASKING: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  ssh: {
    F: "makes ssh read a configuration file, which can name programs it runs (ProxyCommand, Match exec)",
    I: "makes ssh load a PKCS#11 library",
  },
  scp: {
    F: "makes scp read an ssh configuration file, which can name programs it runs (ProxyCommand, Match exec)",
    S: "names the program scp runs for the connection",
  },
  sftp: {
    F: "makes sftp read an ssh configuration file, which can name programs it runs (ProxyCommand, Match exec)",
    S: "names the program sftp runs for the connection",
    D: "names the sftp server program, which sftp runs here",
    b: "makes sftp run the commands of a batch file, whose `!` lines run here",
  },
};

/**
 * The `-o` keywords that change only how the connection is made (lower case). Every other one asks:
 * ProxyCommand, LocalCommand, KnownHostsCommand, PKCS11Provider, SecurityKeyProvider and XAuthLocation run a program
 * or load a library here, Include reads a configuration file, ControlPath and the known-hosts files are written.
 */
const SSH_HARMLESS_KEYWORDS: ReadonlySet<string> = new Set(
  ("addressfamily batchmode checkhostip ciphers compression connectionattempts connecttimeout escapechar " +
    "exitonforwardfailure fingerprinthash gssapiauthentication hashknownhosts hostbasedauthentication " +
    "hostkeyalgorithms identitiesonly ipqos kbdinteractiveauthentication challengeresponseauthentication " +
    "kexalgorithms loglevel macs numberofpasswordprompts passwordauthentication port preferredauthentications " +
    "pubkeyacceptedalgorithms pubkeyacceptedkeytypes pubkeyauthentication rekeylimit requesttty " +
    "serveralivecountmax serveraliveinterval stricthostkeychecking tcpkeepalive user visualhostkey")
    .split(" "),
);

/** Keywords harmless with the value `/dev/null` only (`-o UserKnownHostsFile=/dev/null`). */
const SSH_NULL_FILES: ReadonlySet<string> = new Set(["userknownhostsfile", "globalknownhostsfile"]);

function sshOptionProblem(word: BashWord, value: string | undefined, name: string): string | undefined {
  if (value === undefined) return `${shown(word)}, the value of \`-o\`, is only known when the command runs`;
  const match = /^\s*([A-Za-z0-9]+)\s*(?:=\s*|\s+)?(.*)$/s.exec(value);
  const keyword = match?.[1].toLowerCase() ?? "";
  if (SSH_HARMLESS_KEYWORDS.has(keyword)) return undefined;
  if (SSH_NULL_FILES.has(keyword) && match?.[2].trim() === "/dev/null") return undefined;
  return `\`-o ${value}\` sets an option of ${name} not known to be harmless (ProxyCommand, LocalCommand and ` +
    "KnownHostsCommand run a program here, a provider loads a library)";
}

/** ssh, scp and sftp: their options read as getopt clusters, wherever they stand (ssh reads them after the host). */
const sshRule: Rule = (args, name) => {
  const valued = SSH_VALUED[name];
  const asking = SSH_ASKING[name];
  for (let i = 0; i < args.length; i++) {
    const word = args[i];
    if (word.value === undefined) {
      if (word.mayBeOption) return hiddenOptionReason(word, name);
      continue;
    }
    if (word.value === "--") break;
    if (!word.value.startsWith("-") || word.value === "-") continue;
    for (let at = 1; at < word.value.length; at++) {
      const letter = word.value[at];
      if (Object.hasOwn(asking, letter)) return `${shown(word)} ${asking[letter]}`;
      if (!valued.includes(letter)) continue;
      const rest = word.value.slice(at + 1);
      const valueWord = rest !== "" ? word : args[++i];
      if (letter === "o") {
        const problem = sshOptionProblem(valueWord ?? word, rest !== "" ? rest : valueWord?.value, name);
        if (problem !== undefined) return problem;
      }
      break;
    }
  }
  return undefined;
};

/** A response file: more arguments, options among them, read from a file when the program runs. */
function responseFile(word: BashWord, name: string): string {
  return `${shown(word)} makes ${name} read more arguments from a file, whose options cannot be checked; ` +
    "write them on the command line";
}

/** The pieces gcc hands the linker, assembler or preprocessor (`-Wl,a,b`, `-Xlinker a`). */
function passedOn(args: readonly BashWord[], i: number): { pieces: string[]; skip: number } | undefined {
  const value = args[i].value!;
  const comma = /^-W[lap],(.*)$/s.exec(value);
  if (comma) return { pieces: comma[1].split(","), skip: 0 };
  if (["-Xlinker", "-Xassembler", "-Xpreprocessor"].includes(value)) {
    return { pieces: args[i + 1]?.value === undefined ? ["@"] : [args[i + 1].value!], skip: 1 };
  }
  return undefined;
}

/** gcc's and clang's options that run a program, load code or change which programs run. */
function compilerOption(value: string): string | undefined {
  if (value === "-wrapper") return "makes the compiler run a program around each of its own";
  if (value.startsWith("-B") || value.startsWith("--prefix")) {
    return "makes the compiler run cc1, as and ld from a folder";
  }
  if (/^--?specs/.test(value)) return "makes the compiler read a spec file, which can change the programs it runs";
  if (/^-f(pass-)?plugin/.test(value)) return "makes the compiler load a plugin";
  if (value === "-Xclang" || value.startsWith("-Xclang=")) {
    return "passes options to clang's front end (`-load` loads a plugin)";
  }
  if (/^--?ld-path/.test(value) || (value.startsWith("-fuse-ld=") && value.includes("/"))) {
    return "makes the compiler run the linker program it names";
  }
  if (/^--?(gcc-toolchain|gcc-install-dir)|^-ccc-/.test(value)) {
    return "makes the compiler look for its programs elsewhere";
  }
  return undefined;
}

const compilerRule: Rule = (args, name) => {
  for (let i = 0; i < args.length; i++) {
    const word = args[i];
    const value = word.value;
    if (value === undefined) {
      if (word.mayBeOption) return hiddenOptionReason(word, name);
      continue;
    }
    if (value.startsWith("@")) return responseFile(word, name);
    const problem = compilerOption(value);
    if (problem !== undefined) return `${shown(word)} ${problem}`;
    const passed = passedOn(args, i);
    if (passed === undefined) continue;
    if (passed.pieces.some((piece) => piece.startsWith("@"))) return responseFile(word, name);
    if (passed.pieces.some((piece) => /plugin/i.test(piece))) return `${shown(word)} makes the linker load a plugin`;
    i += passed.skip;
  }
  return undefined;
};

/** The binutils and the other programs that read `@FILE` (the binutils' `--plugin` loads a library). */
const responseFileRule: Rule = (args, name) => {
  for (const word of args) {
    if (word.value === undefined) {
      if (word.mayBeOption) return hiddenOptionReason(word, name);
      continue;
    }
    if (word.value.startsWith("@")) return responseFile(word, name);
    if (/^--?plugin/.test(word.value)) return `${shown(word)} makes ${name} load a plugin library`;
  }
  return undefined;
};

/**
 * netcat and ncat: `-e PROG` (`--exec`) runs PROG with the connection as its input and output, `-c CMD`
 * (`--sh-exec`) runs CMD with `sh -c`, `--lua-exec` a Lua script, whichever side connects. A cluster holding `e` or `c`
 * asks (in OpenBSD's nc they name a TLS peer and switch TLS on, which asking costs little); so does any start of the
 * long options (getopt takes one).
 */
const netcatRule: Rule = (args, name) => {
  for (const word of args) {
    const value = word.value;
    if (value === undefined) {
      if (word.mayBeOption) return hiddenOptionReason(word, name);
      continue;
    }
    if (value === "--") break;
    if (value.startsWith("--")) {
      const given = value.slice(2).split("=")[0];
      if (given.length > 1 && ["exec", "sh-exec", "lua-exec"].some((long) => long.startsWith(given))) {
        return `${shown(word)} makes ${name} run a program or command for the connection`;
      }
      continue;
    }
    if (value.startsWith("-") && /[ec]/.test(value.slice(1))) {
      return `${shown(word)} makes ${name} run a program or command for the connection (\`-e\`, \`-c\`)`;
    }
  }
  return undefined;
};

/** gpg's long options that run a program or read a configuration that may name one, and why. */
const GPG_ASKING: readonly (readonly [string, string])[] = [
  ["agent-program", "names the gpg-agent program gpg starts when none runs"],
  ["dirmngr-program", "names the dirmngr program gpg starts"],
  ["keyboxd-program", "names the keyboxd program gpg starts"],
  ["photo-viewer", "names the program gpg runs to show photo IDs"],
  ["exec-path", "sets where gpg looks for the programs it runs"],
  ["options", "makes gpg read an options file, which can name the programs it starts"],
  ["homedir", "makes gpg read the configuration of another folder, which can name the programs it starts"],
  ["log-file", "makes gpg write a log file"],
  ["logger-file", "makes gpg write a log file"],
  ["keyring", "names a keyring gpg reads and writes"],
  ["primary-keyring", "names a keyring gpg writes"],
  ["secret-keyring", "names a keyring gpg reads"],
  ["trustdb-name", "names the trust database gpg creates and writes"],
  // gpgtar runs the gpg it is given, with the options it is given; gpgsm starts a key protection program.
  ["gpg", "names the gpg program gpgtar runs"],
  ["gpg-args", "hands the gpg that gpgtar runs options, which can name the programs it starts"],
  ["protect-tool-program", "names the key protection program gpgsm runs"],
];

/**
 * gpg: the options naming the programs it starts (`--agent-program PROG -c f` runs PROG when no agent runs), an
 * options file or another home folder (whose gpg.conf and gpg-agent.conf name them), the files it writes besides
 * `-o`, and `show-photos` (which runs the photo viewer) ask. gpg takes any unambiguous start of a long option.
 */
const gpgRule: Rule = (args, name, context) => {
  context.pathOperands?.push(...gpgNamedAfter(args));
  for (const word of args) {
    const value = word.value;
    if (value === undefined) {
      if (word.mayBeOption) return hiddenOptionReason(word, name);
      continue;
    }
    if (value === "--") break;
    if (/show-photos/i.test(value)) return `${shown(word)} makes ${name} run the program that shows photo IDs`;
    if (!value.startsWith("--")) continue;
    const given = value.slice(2).split("=")[0].toLowerCase();
    if (given.length < 3) continue;
    const asking = GPG_ASKING.find(([long]) => long.startsWith(given));
    if (asking !== undefined) return `${shown(word)} ${asking[1]}`;
  }
  return undefined;
};

const GPG_SUFFIXES = [".gpg", ".asc", ".sig", ".pgp"];

/**
 * The files gpg names after its inputs when no `-o` is given: `x.gpg`, `x.asc`, `x.sig` from `x` (`-c`, `-e`, `-s`,
 * `-a`, `-b`), and `x` from `x.gpg` (`gpg x.gpg`, `--decrypt-files`: `gpg .npmrc.gpg` wrote `.npmrc`). Which words
 * are inputs depends on options, so every word that is no option is taken as one: written as each of those names.
 */
function gpgNamedAfter(args: readonly BashWord[]): PathOperand[] {
  const files: PathOperand[] = [];
  const origin = "a file gpg names after its input";
  for (const word of args) {
    if (word.value === undefined) {
      files.push({ value: undefined, access: "write", origin });
      continue;
    }
    if (word.value.startsWith("-")) continue;
    for (const suffix of GPG_SUFFIXES) {
      files.push({ value: `${word.value}${suffix}`, access: "write", origin });
      if (word.value.toLowerCase().endsWith(suffix) && word.value.length > suffix.length) {
        files.push({ value: word.value.slice(0, -suffix.length), access: "write", origin });
      }
    }
  }
  return files;
}

/** openssl's providers that come with it; any other is a library loaded from the provider path. */
const OPENSSL_PROVIDERS = new Set(["default", "base", "legacy", "fips", "null"]);

/**
 * openssl: `-provider-path DIR -provider NAME` loads `DIR/NAME.so` (code, run here: shown with a library whose
 * constructor wrote a file), a provider by path too, an engine (`-engine`, `openssl engine ID`) loads one, and a
 * configuration file (`-config`) can name modules to load. Options take one dash or two.
 */
const opensslRule: Rule = (args, name) => {
  if (args[0]?.value === "engine" && args.slice(1).some((word) => !word.value?.startsWith("-"))) {
    return `\`${name} engine\` with an engine named loads it, a library whose code runs here`;
  }
  for (let i = 0; i < args.length; i++) {
    const word = args[i];
    const value = word.value;
    if (value === undefined) {
      if (word.mayBeOption) return hiddenOptionReason(word, name);
      continue;
    }
    const option = /^--?([a-z_-]+)(?:=(.*))?$/s.exec(value);
    if (option === null) continue;
    const [, key, inline] = option;
    if (key === "provider-path" || key.endsWith("engine") || key === "config") {
      return `${shown(word)} makes ${name} load a library or a configuration that names one, whose code runs here`;
    }
    if (key === "provider") {
      const provider = inline ?? args[i + 1]?.value;
      if (provider === undefined || !OPENSSL_PROVIDERS.has(provider)) {
        return `${shown(word)} makes ${name} load a provider library, whose code runs here`;
      }
    }
  }
  return undefined;
};

/** install: `--strip-program=PROG` runs PROG on every file it installs (`-s` runs `strip`, found on the PATH). */
const installRule: Rule = (args, name) => {
  for (const word of args) {
    const value = word.value;
    if (value === undefined) {
      if (word.mayBeOption) return hiddenOptionReason(word, name);
      continue;
    }
    if (value === "--") break;
    const given = value.startsWith("--") ? value.slice(2).split("=")[0] : "";
    if (given.length > "strip".length && "strip-program".startsWith(given)) {
      return `${shown(word)} names the program ${name} runs on each file it installs`;
    }
  }
  return undefined;
};

/**
 * mknod's block, character and unbuffered nodes reach the host's devices: its disks, its memory, the kernel's log. A
 * device node already in the workspace is judged as the outside; one the line makes is not there to be judged when
 * the line is, so a later command of the line reads it unseen (`mknod d b 7 0; head -c 40 d` printed a disk outside,
 * with the sandbox off and an automatic answer). Its use is only known when the command runs.
 */
const mknodRule: Rule = (args, name, context) => {
  const operands: BashWord[] = [];
  for (let index = 0; index < args.length; index++) {
    const word = args[index];
    const value = word.value;
    if (value === undefined) {
      operands.push(word);
      continue;
    }
    if (value === "--") {
      operands.push(...args.slice(index + 1));
      break;
    }
    // `-m MODE`, `--mode MODE` take the next word; `-mMODE`, `--mode=MODE`, `-Z` and `--context[=CTX]` do not.
    if (value === "-m" || (value.length > 2 && "--mode".startsWith(value))) index++;
    else if (!value.startsWith("-") || value === "-") operands.push(word);
  }
  const type = operands[1];
  if (type !== undefined && type.value !== undefined && type.value === "p") return undefined;
  context.pathOperands?.push({ value: undefined, access: "read", origin: "the device node mknod makes" });
  return `${type === undefined ? `\`${name}\`` : shown(type)} makes a device node, which reaches the host's disks, ` +
    "memory or kernel";
};

/**
 * The subcommands with which a program runs the command it is given (here, or in a container or machine it
 * reaches): an allow rule for the program would allow any command through them.
 */
const RUNNING_SUBCOMMANDS: Readonly<Record<string, readonly string[]>> = {
  rustup: ["run"],
  pyenv: ["exec"],
  rbenv: ["exec"],
  nodenv: ["exec"],
  goenv: ["exec"],
  jenv: ["exec"],
  volta: ["run"],
  fnm: ["exec"],
  opam: ["exec"],
  flatpak: ["run"],
  snap: ["run"],
  lxc: ["exec"],
  machinectl: ["shell"],
  kubectl: ["exec", "debug", "run"],
  docker: ["run", "exec", "create"],
  podman: ["run", "exec", "create"],
  scl: ["enable"],
  ip: ["netns", "vrf"],
};

/**
 * A program of {@linkcode RUNNING_SUBCOMMANDS}: any of its words may be the subcommand (a global option's value, a
 * `+toolchain` come before it: `docker --context c run`, `rustup +nightly run`), so any word naming one asks.
 */
const subcommandRunnerRule: Rule = (args, name) => {
  for (const word of args) {
    if (word.value === undefined) {
      if (word.mayBeOption) return hiddenOptionReason(word, name);
      continue;
    }
    if (RUNNING_SUBCOMMANDS[name].includes(word.value)) return `\`${name} ${word.value}\` runs the command it is given`;
  }
  return undefined;
};

const COMPILERS = "gcc g++ cc c++ cpp clang clang++ clang-cpp";
const RESPONSE_FILE_PROGRAMS = "ld ld.bfd ld.gold ld.lld lld as ar nm objdump objcopy strip ranlib readelf size " +
  "strings addr2line c++filt gprof javac java javadoc jar rustc rustdoc";

/**
 * The rules of programs the analysis knows only these options of: registered apart from the flag rules of known
 * programs, so that the paths they name stay judged as an unknown program's.
 */
export const PROGRAM_RULES: ReadonlyMap<string, Rule> = new Map<string, Rule>([
  ...["ssh", "scp", "sftp"].map((name) => [name, sshRule] as const),
  ...COMPILERS.split(" ").map((name) => [name, compilerRule] as const),
  ...RESPONSE_FILE_PROGRAMS.split(" ").map((name) => [name, responseFileRule] as const),
  ...["nc", "netcat", "ncat"].map((name) => [name, netcatRule] as const),
  ...["gpg", "gpg2", "gpgsm", "gpgtar"].map((name) => [name, gpgRule] as const),
  ["openssl", opensslRule],
  ["install", installRule],
  ["mknod", mknodRule],
  ...Object.keys(RUNNING_SUBCOMMANDS).map((name) => [name, subcommandRunnerRule] as const),
]);
