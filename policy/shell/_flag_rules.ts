/**
 * Rules for commands that read by default but can write files or run other
 * programs with some arguments. An allowlist entry says "this command may run";
 * these rules say "but not like this", whichever entry matched.
 *
 * Option matching is deliberately loose: a long option matches when it is any
 * prefix of a dangerous one (GNU getopt accepts `sort --out=f`), and a short
 * option matches when its letter appears anywhere in a cluster (`sort -uo f`).
 * Loose matching only ever asks more often.
 *
 * @module
 */
import type { BashWord } from "./_tree.ts";

/**
 * Commands that run another command, or change how later commands run: an
 * allowlist entry for one of them would allow everything, so they always ask.
 */
export const COMMAND_RUNNERS: ReadonlyMap<string, string> = new Map([
  ...namesFor(
    "env xargs exec command builtin eval source . sudo doas su runuser nohup time timeout nice ionice chroot setsid stdbuf unbuffer watch strace ltrace flock parallel script busybox coproc sh bash dash zsh ksh mksh fish csh tcsh fc trap pkexec gosu sg newgrp systemd-run at batch nsenter unshare firejail bwrap proot fakeroot valgrind gdb taskset chrt prlimit xvfb-run npx pnpx bunx uvx dbus-run-session tmux screen expect",
    "runs the command it is given",
  ),
  ...namesFor(
    "alias hash enable export declare typeset local readonly set shopt unset let read mapfile readarray getopts",
    "changes how the shell runs later commands",
  ),
  ...namesFor(
    "less more most man vi vim nvim view ex ed nano emacs",
    "can run shell commands from inside it",
  ),
]);

function namesFor(names: string, why: string): [string, string][] {
  return names.split(" ").map((name) => [name, why]);
}

type Rule = (args: readonly BashWord[], name: string) => string | undefined;

function shown(word: BashWord): string {
  return `\`${word.text}\``;
}

/** The first argument that could expand into an option nobody can see yet. */
function hiddenOption(args: readonly BashWord[], name: string): string | undefined {
  const word = args.find((arg) => arg.value === undefined && arg.mayBeOption);
  if (word === undefined) return undefined;
  return `${shown(word)} could expand into an option of ${name}, which has options that write files or run programs`;
}

interface OptionSpec {
  /** Single-letter options, e.g. `o` for `-o`. */
  short?: string;
  /** Long option names without dashes. */
  long?: readonly string[];
  /** Exact words (find's primaries, which have a single dash). */
  exact?: readonly string[];
  /** What the options do, for the reason. */
  effect: string;
}

function matchesOption(value: string, spec: OptionSpec): boolean {
  if (spec.exact?.includes(value)) return true;
  if (value.startsWith("--") && value.length > 2) {
    const given = value.slice(2).split("=", 1)[0];
    return given !== "" && (spec.long ?? []).some((long) => long.startsWith(given));
  }
  if (value.startsWith("-") && !value.startsWith("--") && spec.short) {
    return [...value.slice(1)].some((letter) => spec.short!.includes(letter));
  }
  return false;
}

function optionRule(spec: OptionSpec): Rule {
  return (args, name) => {
    const word = args.find((arg) => arg.value !== undefined && matchesOption(arg.value, spec));
    return word === undefined ? hiddenOption(args, name) : `${shown(word)} ${spec.effect}`;
  };
}

/** Non-option words, skipping the values of the listed short options. */
function operands(args: readonly BashWord[], optionsWithValue: string): BashWord[] {
  const result: BashWord[] = [];
  for (let i = 0; i < args.length; i++) {
    const value = args[i].value;
    if (value === "--") return [...result, ...args.slice(i + 1)];
    if (value !== undefined && value.startsWith("-") && value !== "-") {
      if (value.length === 2 && optionsWithValue.includes(value[1])) i++;
      continue;
    }
    result.push(args[i]);
  }
  return result;
}

const uniqRule: Rule = (args, name) => {
  const hidden = hiddenOption(args, name);
  if (hidden !== undefined) return hidden;
  const files = operands(args, "fsw");
  if (files.some((file) => file.value === undefined)) {
    return `${
      shown(files.find((file) => file.value === undefined)!)
    } may expand to several files, and uniq writes to its second file`;
  }
  return files.length > 1 ? `${shown(files[1])} is uniq's output file, which it writes` : undefined;
};

const teeRule: Rule = (args, name) => {
  const hidden = hiddenOption(args, name);
  if (hidden !== undefined) return hidden;
  const file = operands(args, "").find((arg) => arg.value !== "/dev/null");
  return file === undefined ? undefined : `${shown(file)} is a file tee writes`;
};

const gitGlobal: OptionSpec = {
  short: "cC",
  long: ["config-env", "exec-path=", "git-dir", "work-tree"],
  effect: "makes git read another configuration or repository, which can run programs",
};
const gitSubcommand: OptionSpec = {
  short: "O",
  long: ["output", "open-files-in-pager", "exec", "upload-pack", "receive-pack", "help"],
  effect: "lets git write a file or start another program",
};

const gitRule: Rule = (args, name) => {
  const hidden = hiddenOption(args, name);
  if (hidden !== undefined) return hidden;
  let index = 0;
  for (; index < args.length && args[index].value?.startsWith("-"); index++) {
    const value = args[index].value!;
    // `--exec-path` alone only prints the path; with a value it moves git's helpers.
    if (value === "--exec-path") continue;
    const option = value.startsWith("--exec-path=") ? "--exec-path=" : value;
    if (matchesOption(option, gitGlobal)) return `${shown(args[index])} ${gitGlobal.effect}`;
  }
  const word = args.slice(index).find((arg) => arg.value !== undefined && matchesOption(arg.value, gitSubcommand));
  return word === undefined ? undefined : `${shown(word)} ${gitSubcommand.effect}`;
};

/**
 * A conservative reading of a sed script: returns what makes it write files or
 * run commands, or `undefined` when it does neither. Anything unfamiliar counts
 * as dangerous.
 */
export function sedScriptEffect(script: string): string | undefined {
  let i = 0;
  const skipDelimited = (delimiter: string): boolean => {
    for (; i < script.length; i++) {
      if (script[i] === "\\") i++;
      else if (script[i] === delimiter) {
        i++;
        return true;
      }
    }
    return false;
  };
  const skipTo = (pattern: RegExp): void => {
    const rest = script.slice(i).search(pattern);
    i = rest === -1 ? script.length : i + rest + 1;
  };
  while (i < script.length) {
    const char = script[i];
    if (/[\s;!{}0-9,$~+]/.test(char)) {
      i++;
    } else if (char === "/" || char === "\\") {
      // An address regex: `/re/` or `\cREc`.
      const delimiter = char === "/" ? "/" : script[++i];
      i++;
      if (delimiter === undefined || !skipDelimited(delimiter)) {
        return "has an unterminated address";
      }
      if (script[i] === "I" || script[i] === "M") i++;
    } else if (char === "s" || char === "y") {
      const delimiter = script[++i];
      if (delimiter === undefined || delimiter === "\n" || delimiter === "\\") {
        return `has an unusual ${char} command`;
      }
      i++;
      if (!skipDelimited(delimiter) || !skipDelimited(delimiter)) {
        return `has an unterminated ${char} command`;
      }
      if (char === "s") {
        const flags = /^[0-9gpiImMew ]*/.exec(script.slice(i))?.[0] ?? "";
        if (/[ew]/.test(flags)) return "has an s command with the e or w flag";
        i += flags.length;
      }
    } else if ("ewW".includes(char)) {
      return `uses the ${char} command`;
    } else if ("aicrR#".includes(char)) {
      // Text to insert, a file to read or a comment: the rest of the line.
      skipTo(/\n/);
    } else if ("btTv:".includes(char)) {
      // GNU sed ends labels at a semicolon as well as at a newline.
      skipTo(/[;\n]/);
    } else if ("dDgGhHlnNpPqQxz=F".includes(char)) {
      i++;
    } else {
      return `uses the unfamiliar command \`${char}\``;
    }
  }
  return undefined;
}

const sedRule: Rule = (args, name) => {
  const hidden = hiddenOption(args, name);
  if (hidden !== undefined) return hidden;
  const scripts: BashWord[] = [];
  const operandWords: BashWord[] = [];
  let explicitScript = false;
  for (let i = 0; i < args.length; i++) {
    const value = args[i].value;
    if (value === undefined || !value.startsWith("-") || value === "-") {
      operandWords.push(args[i]);
      continue;
    }
    if (value === "--") {
      operandWords.push(...args.slice(i + 1));
      break;
    }
    if (value.startsWith("--")) {
      const [option, inline] = value.slice(2).split(/=(.*)/s, 2);
      if (option === "" || "in-place".startsWith(option)) {
        return `${shown(args[i])} makes sed edit files in place`;
      }
      if ("file".startsWith(option)) {
        return `${shown(args[i])} reads a sed script from a file, which cannot be checked`;
      }
      if ("expression".startsWith(option)) {
        explicitScript = true;
        const script = inline !== undefined ? { ...args[i], value: inline } : args[++i];
        if (script !== undefined) scripts.push(script);
      } else if ("line-length".startsWith(option) && inline === undefined) {
        i++;
      }
      continue;
    }
    for (let letter = 1; letter < value.length; letter++) {
      const option = value[letter];
      if (option === "i") return `${shown(args[i])} makes sed edit files in place`;
      if (option === "f") {
        return `${shown(args[i])} reads a sed script from a file, which cannot be checked`;
      }
      if (option === "e" || option === "l") {
        const inline = value.slice(letter + 1);
        const argument = inline !== "" ? { ...args[i], value: inline } : args[++i];
        if (option === "e" && argument !== undefined) {
          explicitScript = true;
          scripts.push(argument);
        }
        break;
      }
    }
  }
  if (!explicitScript && operandWords.length > 0) scripts.push(operandWords[0]);
  for (const script of scripts) {
    if (script.value === undefined) {
      return `the sed script ${shown(script)} is only known when the command runs`;
    }
    const effect = sedScriptEffect(script.value);
    if (effect !== undefined) return `the sed script ${shown(script)} ${effect}`;
  }
  return undefined;
};

const awkRule: Rule = (args, name) => {
  const hidden = hiddenOption(args, name);
  if (hidden !== undefined) return hidden;
  const fileOption = args.find((arg) =>
    arg.value !== undefined && matchesOption(arg.value, {
      short: "fiEl",
      long: ["file", "include", "exec", "load"],
      effect: "",
    })
  );
  if (fileOption !== undefined) {
    return `${shown(fileOption)} loads awk code from a file, which cannot be checked`;
  }
  // Which word is the program depends on options with values; every word is
  // checked instead, so that none is missed.
  for (const arg of args) {
    if (arg.value === undefined && !arg.mayBeOption) {
      return `the awk argument ${shown(arg)} is only known when the command runs`;
    }
    if (arg.value !== undefined && /system|[|>]|@load|getline/.test(arg.value)) {
      return `the awk program ${shown(arg)} can run commands or write files (system, |, >, getline)`;
    }
  }
  return undefined;
};

const tarRule: Rule = (args, name) => {
  const hidden = hiddenOption(args, name);
  if (hidden !== undefined) return hidden;
  const first = args[0]?.value ?? "";
  // `tar xf a.tar`: the first word is a cluster of options without a dash.
  if (first !== "" && !first.startsWith("-") && /[cxruA]/.test(first)) {
    return `${shown(args[0])} makes tar write files`;
  }
  return optionRule({
    short: "cxruAIF",
    long: [
      "create",
      "extract",
      "get",
      "append",
      "update",
      "catenate",
      "concatenate",
      "delete",
      "to-command",
      "use-compress-program",
      "checkpoint-action",
      "info-script",
      "new-volume-script",
      "rsh-command",
    ],
    effect: "makes tar write files or run a program",
  })(args, name);
};

/**
 * Go's flag package reads `-name`, `--name`, `-name=value` and `--name=value`
 * alike and has no clusters; names match exactly.
 */
function goFlagRule(names: readonly string[], effect: string): Rule {
  return (args, name) => {
    const word = args.find((arg) => {
      const match = /^--?([^=]+)/.exec(arg.value ?? "");
      return match !== null && names.includes(match[1]);
    });
    return word === undefined ? hiddenOption(args, name) : `${shown(word)} ${effect}`;
  };
}

const pytestRule = optionRule({
  short: "pco",
  long: [
    "basetemp",
    "junitxml",
    "junit-xml",
    "override-ini",
    "rootdir",
    "confcutdir",
    "debug",
    "pastebin",
    "resultlog",
    "result-log",
    "report-log",
    "cov-report",
    "html",
    "json-report-file",
  ],
  effect: "makes pytest load plugins, use another configuration, or write or delete files outside the project",
});

/** `python -m pytest ...`: the pytest rule applies to what follows the module. */
const pythonRule: Rule = (args, name) =>
  args[0]?.value === "-m" && args[1]?.value === "pytest"
    ? pytestRule(args.slice(2), "pytest")
    : hiddenOption(args, name);

const FLAG_RULES: ReadonlyMap<string, Rule> = new Map<string, Rule>([
  ["pytest", pytestRule],
  ["python", pythonRule],
  ["python3", pythonRule],
  [
    "go",
    goFlagRule(
      [
        "exec",
        "toolexec",
        "o",
        "C",
        "coverprofile",
        "cpuprofile",
        "memprofile",
        "blockprofile",
        "mutexprofile",
        "trace",
        "outputdir",
        "modfile",
        "overlay",
        "pkgdir",
      ],
      "makes go run another program, use another module or write files outside the project",
    ),
  ],
  [
    "cargo",
    optionRule({
      short: "Z",
      long: ["config", "target-dir", "manifest-path", "config-path"],
      effect: "makes cargo use another configuration or project, or build outside the project",
    }),
  ],
  [
    "npm",
    optionRule({
      long: ["script-shell", "prefix", "userconfig", "globalconfig", "node-options", "workspace"],
      effect: "makes npm run scripts with another shell, configuration or project",
    }),
  ],
  ["git", gitRule],
  [
    "find",
    optionRule({
      exact: [
        "-exec",
        "-execdir",
        "-ok",
        "-okdir",
        "-delete",
        "-fprint",
        "-fprint0",
        "-fprintf",
        "-fls",
      ],
      effect: "makes find run commands, delete or write files",
    }),
  ],
  [
    "sort",
    optionRule({
      short: "o",
      long: ["output", "compress-program"],
      effect: "makes sort write a file or run a program",
    }),
  ],
  [
    "rg",
    optionRule({
      // -z runs gzip, xz, bzip2 and friends on compressed files (found by the oracle).
      short: "z",
      long: ["pre", "hostname-bin", "search-zip"],
      effect: "makes ripgrep run a program",
    }),
  ],
  ["uniq", uniqRule],
  ["tee", teeRule],
  [
    "tree",
    optionRule({ short: "oR", long: ["output"], effect: "makes tree write files" }),
  ],
  [
    "file",
    optionRule({
      short: "Cp",
      long: ["compile", "preserve-date"],
      effect: "makes file write a compiled magic file or reset file times",
    }),
  ],
  [
    "date",
    optionRule({ short: "s", long: ["set"], effect: "sets the system clock" }),
  ],
  [
    "printf",
    optionRule({ short: "v", effect: "assigns a shell variable" }),
  ],
  [
    "test",
    optionRule({
      exact: ["-v", "-R"],
      effect: "evaluates array subscripts, which can run commands",
    }),
  ],
  [
    "[",
    optionRule({
      exact: ["-v", "-R"],
      effect: "evaluates array subscripts, which can run commands",
    }),
  ],
  ["sed", sedRule],
  ["awk", awkRule],
  ["gawk", awkRule],
  ["mawk", awkRule],
  ["nawk", awkRule],
  ["tar", tarRule],
]);

/**
 * Judges the arguments of an allowlisted command; returns why it must ask, or
 * `undefined` when its arguments are harmless.
 */
export function flagProblem(name: string, args: readonly BashWord[]): string | undefined {
  return FLAG_RULES.get(name)?.(args, name);
}
