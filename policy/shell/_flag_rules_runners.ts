/**
 * Flag rules for the test runners: `deno test`, `npm test` / `npm run test`,
 * `pytest` / `python -m pytest`, `cargo test` and `go test`. Each accepts only
 * the options known to be harmless (an unknown or abbreviated option asks,
 * named), and no option or operand may write outside the workspace, read
 * configuration or code from outside it, or name another project.
 *
 * @module
 */
import type { BashWord } from "./_tree.ts";
import {
  type FlagContext,
  flags,
  hiddenOptionReason,
  insideWorkspace,
  type OptionDef,
  type OptionGrammar,
  passedOnProblem,
  readOptions,
  shown,
  type ValueCheck,
  valued,
} from "./_options.ts";

/** A flag rule: why the arguments must ask, or `undefined`. */
export type Rule = (args: readonly BashWord[], name: string, context: FlagContext) => string | undefined;

const optionalPath: OptionDef = { value: "optional", check: insideWorkspace };
const requiredPath: OptionDef = { value: "required", check: insideWorkspace };

/**
 * A value the runner writes: a file (a report, a profile, a lock file, a test binary), or with `below` a folder it
 * creates files in whose names only the run knows (a target or coverage folder). Inside the workspace, and recorded
 * as written, so that the path rules judge it as the write it is: a read-only path denies, a protected one is marked.
 */
function written(below = false): ValueCheck {
  return (word, value, context) => {
    const problem = insideWorkspace(word, value, context);
    if (problem !== undefined) return problem;
    const origin = below ? "a folder the runner writes in" : "a file the runner writes";
    context.pathOperands?.push({ value, access: "write", origin, ...(below ? { below } : {}) });
    return undefined;
  };
}
const writtenFile: OptionDef = { value: "required", check: written() };
const writtenFolder: OptionDef = { value: "required", check: written(true) };
const anyValue: OptionDef = { value: "optional" };

function oneOf(...allowed: string[]): ValueCheck {
  return (_word, value) => allowed.includes(value) ? undefined : `is not one of ${allowed.join(", ")}`;
}

// Permission flags only widen what the test code may do inside the sandbox.
const DENO_PERMISSIONS = "allow-all allow-read allow-write allow-net allow-env allow-run allow-sys allow-ffi " +
  "allow-hrtime allow-import deny-read deny-write deny-net deny-env deny-run deny-sys deny-ffi deny-import";

const denoTest: OptionGrammar = {
  program: "deno test",
  short: {
    ...flags("A q h r"),
    ...Object.fromEntries([..."RWNESIP"].map((letter) => [letter, anyValue])),
  },
  long: {
    ...Object.fromEntries(DENO_PERMISSIONS.split(" ").map((name) => [name, anyValue])),
    ...flags(
      "no-prompt quiet doc parallel trace-leaks trace-ops clean permit-no-files hide-stacktraces " +
        "no-remote no-npm cached-only no-lock no-config no-clear-screen coverage-raw-data-only help unstable",
    ),
    check: anyValue,
    "no-check": anyValue,
    watch: anyValue,
    "fail-fast": anyValue,
    shuffle: anyValue,
    seed: { value: "required" },
    filter: { value: "required" },
    reporter: { value: "required", check: oneOf("pretty", "dot", "junit", "tap") },
    "junit-path": writtenFile,
    // Without a value, deno writes the folder `coverage`.
    coverage: { value: "optional", check: written(true), absent: "coverage" },
    "env-file": optionalPath,
    cert: requiredPath,
    // deno updates the lock file it is given.
    lock: { value: "optional", check: written() },
    frozen: anyValue,
    "log-level": { value: "required" },
    ext: { value: "required" },
    location: { value: "required" },
    "watch-exclude": anyValue,
    "permission-set": anyValue,
    reload: anyValue,
  },
  longPrefixes: { "unstable-": {} },
  operand: insideWorkspace,
  afterBoundary: (words, context) => passedOnProblem(words, "the tests (Deno.args)", context),
};

// npm reads every unknown `--name=value` as configuration (`--script-shell`,
// `--prefix`, `--userconfig`, `--node-options`), so only these are accepted.
const npmTest: OptionGrammar = {
  program: "npm test",
  short: flags("s q d"),
  long: {
    ...flags("silent quiet if-present ignore-scripts foreground-scripts no-color json workspaces ws"),
    loglevel: {
      value: "required",
      check: oneOf("silent", "error", "warn", "notice", "http", "info", "verbose", "silly"),
    },
    color: { value: "required", check: oneOf("always", "true", "false") },
    workspace: {
      value: "required",
      check: (_word, value) => /^[A-Za-z0-9@][A-Za-z0-9@._-]*$/.test(value) ? undefined : "is not a package name",
    },
  },
  operand: (word, _value, context) => passedOnProblem([word], "the test script", context),
  afterBoundary: (words, context) => passedOnProblem(words, "the test script", context),
};

// `-p no:NAME` switches a plugin off; `-p NAME` loads one.
const pluginOff: OptionDef = {
  value: "required",
  check: (_word, value) =>
    value.startsWith("no:") ? undefined : "loads a plugin (only `-p no:NAME` runs without asking)",
};

const pytest: OptionGrammar = {
  program: "pytest",
  short: {
    ...flags("v q x s l h V"),
    ...valued("k m r n W"),
    p: pluginOff,
  },
  long: {
    ...flags(
      "verbose quiet exitfirst lf last-failed ff failed-first nf new-first sw stepwise stepwise-skip " +
        "co collect-only showlocals full-trace strict-markers strict-config disable-warnings no-header " +
        "no-summary setup-show setup-only setup-plan runxfail cache-show cache-clear doctest-modules " +
        "markers fixtures fixtures-per-test version help no-cov strict",
    ),
    ...valued(
      "maxfail durations durations-min tb color capture deselect import-mode last-failed-no-failures lfnf " +
        "verbosity pythonwarnings timeout reruns doctest-glob",
    ),
    ignore: requiredPath,
    "ignore-glob": requiredPath,
    "junit-xml": writtenFile,
    junitxml: writtenFile,
    "log-file": writtenFile,
    "log-level": { value: "required" },
    "log-cli-level": { value: "required" },
    "log-format": { value: "required" },
    "cov-report": {
      value: "required",
      check: oneOf("term", "term-missing", "html", "xml", "json", "lcov", "annotate"),
    },
    cov: optionalPath,
  },
  operand: insideWorkspace,
};

/**
 * pytest (8.2 and later) reads the arguments of `@FILE` in place of any word
 * that starts with `@`, an option's value too (`-k @f`): options the checker
 * never sees (`--basetemp`, `-p`, `--junitxml` outside).
 */
function argumentsFile(args: readonly BashWord[]): BashWord | undefined {
  return args.find((arg) => (arg.value ?? arg.text.replace(/^["'\\]+/, "")).startsWith("@"));
}

const pytestRule: Rule = (args, _name, context) => {
  const file = argumentsFile(args);
  if (file !== undefined) {
    return `${
      shown(file)
    } makes pytest read its arguments from a file, whose options cannot be checked; write them on the command line`;
  }
  return readOptions(args, pytest, context).problem;
};

/** `python -m pytest ...`: the pytest rule applies to what follows the module. */
const pythonRule: Rule = (args, name, context) => {
  if (args[0]?.value === "-m" && args[1]?.value === "pytest") return pytestRule(args.slice(2), "pytest", context);
  const hidden = args.find((arg) => arg.value === undefined && arg.mayBeOption);
  return hidden === undefined ? undefined : hiddenOptionReason(hidden, name);
};

// libtest's own options, after `cargo test --`.
const libtest: OptionGrammar = {
  program: "the cargo test harness",
  short: { ...flags("q h"), Z: { value: "required", check: oneOf("unstable-options") } },
  long: {
    ...flags(
      "nocapture no-capture show-output exact ignored include-ignored list test bench quiet " +
        "force-run-in-process report-time ensure-time shuffle help",
    ),
    ...valued("test-threads format color skip shuffle-seed"),
    logfile: writtenFile,
  },
};

const cargoTest: OptionGrammar = {
  program: "cargo test",
  short: {
    ...flags("q v r h"),
    ...valued("p j F"),
  },
  long: {
    ...flags(
      "release lib bins tests examples benches all-targets doc no-run no-fail-fast workspace all all-features " +
        "no-default-features quiet verbose frozen locked offline future-incompat-report keep-going " +
        "ignore-rust-version timings help",
    ),
    ...valued("bin test example bench package exclude jobs features profile color message-format"),
    "target-dir": writtenFolder,
    "manifest-path": requiredPath,
    // A target may be a JSON specification file, which can name the linker to run.
    target: {
      value: "required",
      check: (_word, value) =>
        /^[A-Za-z0-9_.-]+$/.test(value) && !value.endsWith(".json") ? undefined : "is not a target name",
    },
  },
  afterBoundary: (words, context) => readOptions(words, libtest, context).problem,
};

const GO_OUTPUT_FLAGS = ["coverprofile", "cpuprofile", "memprofile", "blockprofile", "mutexprofile", "trace"];

const GO_TEST_BINARY_FLAGS = "v run count short timeout failfast parallel bench benchtime benchmem skip list " +
  "cpu shuffle fullpath";

function goTestBinaryFlags(prefix: string): Record<string, OptionDef> {
  return Object.fromEntries(GO_TEST_BINARY_FLAGS.split(" ").map((name) => [`${prefix}${name}`, anyValue]));
}

// Go's flag package: `-name`, `--name`, `-name=value`, `-name value`.
const goValued: OptionDef = { value: "required" };
const goTest: OptionGrammar = {
  program: "go test",
  singleDashLong: true,
  long: {
    ...flags("v short failfast benchmem cover json race msan asan a n x work trimpath c i modcacherw fullpath"),
    ...Object.fromEntries(
      ("run count timeout parallel bench benchtime skip list cpu shuffle covermode coverpkg tags mod vet p " +
        "fuzz fuzztime fuzzminimizetime").split(" ").map((name) => [name, goValued]),
    ),
    ...goTestBinaryFlags("test."),
    // Boolean-like: only `-buildvcs=false`; a following word is a package.
    buildvcs: anyValue,
    // Files go test writes: inside the workspace only.
    ...Object.fromEntries(
      GO_OUTPUT_FLAGS.flatMap((name) => [[name, writtenFile], [`test.${name}`, writtenFile]]),
    ),
    // The test binary, or a folder it is put in.
    o: writtenFolder,
    h: {},
    help: {},
  },
  boundaries: ["-args", "--args"],
  operand: (_word, value, context) => {
    const problem = insideWorkspace(_word, value, context);
    if (problem !== undefined) return problem;
    // `example.com/x` is a module from elsewhere; `./x`, `x/y` (standard library) and `.` are not.
    const first = value.split("/")[0];
    const file = value.endsWith(".go");
    return first.includes(".") && first !== "." && !file ? "names a package of another module" : undefined;
  },
  afterBoundary: (words, context) => {
    for (const word of words) {
      const match = /^--?test\.([^=]+)/.exec(word.value ?? "");
      const known = GO_TEST_BINARY_FLAGS.split(" ").includes(match?.[1] ?? "") ||
        GO_OUTPUT_FLAGS.includes(match?.[1] ?? "");
      // Output files are judged as paths with the other words below.
      if (match !== null && !known) {
        return `${shown(word)} is not a test binary flag known to be harmless (it may write a profile or log file)`;
      }
    }
    return passedOnProblem(words, "the test binary", context);
  },
};

function subcommandRule(subcommands: Record<string, OptionGrammar>, skip = 0): Rule {
  return (args, name, context) => {
    const sub = args[skip]?.value;
    const grammar = sub === undefined ? undefined : subcommands[sub];
    if (grammar === undefined) {
      const hidden = args.find((arg) => arg.value === undefined && arg.mayBeOption);
      return hidden === undefined ? undefined : hiddenOptionReason(hidden, name);
    }
    return readOptions(args.slice(skip + 1), grammar, context).problem;
  };
}

/** `npm run test ...`: like `npm test`. */
const npmRule: Rule = (args, name, context) => {
  if (args[0]?.value === "run" && args[1]?.value === "test") {
    return readOptions(args.slice(2), { ...npmTest, program: "npm run test" }, context).problem;
  }
  return subcommandRule({ test: npmTest, t: npmTest })(args, name, context);
};

/** The test runners' rules, by program name. */
export const RUNNER_RULES: ReadonlyMap<string, Rule> = new Map<string, Rule>([
  ["deno", subcommandRule({ test: denoTest })],
  ["npm", npmRule],
  ["pytest", pytestRule],
  ["py.test", pytestRule],
  ["python", pythonRule],
  ["python3", pythonRule],
  ["cargo", subcommandRule({ test: cargoTest })],
  ["go", subcommandRule({ test: goTest })],
]);
