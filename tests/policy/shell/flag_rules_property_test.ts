import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { checkCommand } from "../../../policy/shell/check_command.ts";
import { DIFFERENTIAL_DENO_ONLY, GENERATED_ANALYSIS_DENO_ONLY } from "../../_runtime.ts";

const SEED = 20261201;
const RUNS = 150;
const SANDBOX = { available: true };

/** How each runner's line starts, the words that may stand around the probe, and its dangerous options. */
interface Runner {
  base: string;
  context: string[];
  /** Long options that write outside, read configuration or code from elsewhere, or run programs. */
  dangerousLong: string[];
  /** Short letters of the same kind. */
  dangerousShort: string[];
}

const RUNNERS: Runner[] = [
  {
    base: "deno test",
    context: ["-A", "--no-check", "--filter=x", "--parallel", "tests/", "a_test.ts", "--reporter=dot", "-q"],
    dangerousLong: [
      "--config",
      "--import-map",
      "--v8-flags",
      "--preload",
      "--inspect",
      "--unsafely-ignore-certificate-errors",
    ],
    dangerousShort: ["c"],
  },
  {
    base: "npm test",
    context: ["--silent", "-s", "--if-present", "--loglevel=warn"],
    dangerousLong: [
      "--prefix",
      "--script-shell",
      "--userconfig",
      "--globalconfig",
      "--node-options",
      "--logs-dir",
      "--cache",
    ],
    dangerousShort: ["C", "w"],
  },
  {
    base: "npm run test",
    context: ["--silent", "--if-present"],
    dangerousLong: ["--prefix", "--script-shell", "--logs-dir"],
    dangerousShort: ["C"],
  },
  {
    base: "pytest",
    context: ["-q", "-x", "-v", "--tb=short", "tests/", "--lf", "-rA", "--maxfail=2"],
    dangerousLong: ["--rootdir", "--confcutdir", "--basetemp", "--override-ini", "--pastebin", "--debug", "--pyargs"],
    dangerousShort: ["c", "o"],
  },
  {
    base: "python3 -m pytest",
    context: ["-q", "-x", "tests/"],
    dangerousLong: ["--rootdir", "--basetemp", "--override-ini"],
    dangerousShort: ["c", "o"],
  },
  {
    base: "cargo test",
    context: ["--release", "-q", "--lib", "--features=serde", "name_filter", "--locked"],
    dangerousLong: ["--config", "--artifact-dir", "--out-dir", "--lockfile-path"],
    dangerousShort: ["Z", "C"],
  },
];

const OUTSIDE = ["/etc/x", "/tmp/y", "../other", "a/../../b", "'~/x'", "https://example.com/t.ts", "file:///x"];

function lineArbitrary(runner: Runner, probe: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc.tuple(
    fc.array(fc.constantFrom(...runner.context), { maxLength: 4 }),
    fc.array(fc.constantFrom(...runner.context), { maxLength: 4 }),
    probe,
  ).map(([before, after, word]) => [runner.base, ...before, word, ...after].join(" "));
}

/** A long option as a program may accept it: whole or a unique-looking prefix, with `=v`, ` v` or no value. */
function longSpelling(option: string): fc.Arbitrary<string> {
  return fc.tuple(
    fc.integer({ min: Math.min(5, option.length), max: option.length }),
    fc.constantFrom("", "=/tmp/v", " /tmp/v", "=v", " v"),
  ).map(([end, value]) => `${option.slice(0, end)}${value}`);
}

/** A short option alone, in a cluster after harmless letters, with an attached or separate value. */
function shortSpelling(letter: string, harmless: string): fc.Arbitrary<string> {
  return fc.tuple(fc.constantFrom("", harmless), fc.constantFrom("", "/tmp/v", " /tmp/v", "=/tmp/v"))
    .map(([cluster, value]) => `-${cluster}${letter}${value}`);
}

const HARMLESS_SHORT: Record<string, string> = {
  "deno test": "Aq",
  "npm test": "s",
  "npm run test": "s",
  "pytest": "qx",
  "python3 -m pytest": "qx",
  "cargo test": "qr",
};

async function assertAsks(command: string): Promise<boolean> {
  const result = await checkCommand(command, { sandbox: SANDBOX });
  return result.verdict === "ask" && result.reasons.length > 0;
}

describe("flag rules: generated spellings of dangerous options", { skip: GENERATED_ANALYSIS_DENO_ONLY }, () => {
  for (const runner of RUNNERS) {
    test(
      `${runner.base}: every spelling, anywhere among harmless words, asks (seed ${SEED})`,
      { timeout: 60_000 },
      async () => {
        const probe = fc.oneof(
          fc.constantFrom(...runner.dangerousLong).chain(longSpelling),
          fc.constantFrom(...runner.dangerousShort).chain((letter) =>
            shortSpelling(letter, HARMLESS_SHORT[runner.base])
          ),
        );
        await fc.assert(fc.asyncProperty(lineArbitrary(runner, probe), assertAsks), { seed: SEED, numRuns: RUNS });
      },
    );

    // cargo's operands are test-name filters, not paths.
    if (runner.base === "cargo test") continue;
    test(
      `${runner.base}: an operand outside the workspace asks wherever it stands (seed ${SEED})`,
      { timeout: 60_000 },
      async () => {
        // After `--`, words go to the test script or harness; they are judged too.
        const probe = fc.tuple(fc.constantFrom("", "-- "), fc.constantFrom(...OUTSIDE)).map(([dash, path]) =>
          `${dash}${path}`
        );
        const lines = fc.tuple(fc.array(fc.constantFrom(...runner.context), { maxLength: 4 }), probe)
          .map(([before, word]) => [runner.base, ...before, word].join(" "));
        await fc.assert(fc.asyncProperty(lines, assertAsks), { seed: SEED, numRuns: RUNS });
      },
    );
  }

  test(`go test: every spelling of its dangerous flags asks (seed ${SEED})`, { timeout: 60_000 }, async () => {
    const dangerous = ["exec", "toolexec", "C", "modfile", "overlay", "pkgdir", "ldflags", "gcflags", "pgo"];
    const probe = fc.tuple(
      fc.constantFrom("-", "--"),
      fc.constantFrom(...dangerous),
      fc.constantFrom("=x", " x", "=/tmp/x"),
    ).map(([dash, name, value]) => `${dash}${name}${value}`);
    const line = fc.tuple(
      fc.array(fc.constantFrom("-v", "-race", "-count=1", "./...", "-run=X", "."), { maxLength: 4 }),
      fc.array(fc.constantFrom("-v", "./pkg/...", "-short"), { maxLength: 3 }),
      probe,
    ).map(([before, after, word]) => ["go test", ...before, word, ...after].join(" "));
    await fc.assert(fc.asyncProperty(line, assertAsks), { seed: SEED, numRuns: RUNS });
  });
});

describe("sed scripts: generated", { skip: GENERATED_ANALYSIS_DENO_ONLY }, () => {
  const safe = ["p", "d", "n", "N", "P", "D", "h", "H", "g", "G", "x", "=", "l", "s/a/b/g", "s|x|y|2", "y/ab/cd/"];
  const address = fc.constantFrom("", "1", "1,5", "$", "/re/", "\\,re,", "0~2", "2,+3", "/a/,/b/");
  const safeCommand = fc.tuple(address, fc.constantFrom("", "!"), fc.constantFrom(...safe)).map((parts) =>
    parts.join("")
  );
  const dangerous = fc.constantFrom("w out", "W out", "e id", "s/a/b/w out", "s/a/b/e", "s/a/b/gw out", "e");

  test(`scripts of printing and editing commands run (seed ${SEED})`, { timeout: 60_000 }, async () => {
    const script = fc.array(safeCommand, { minLength: 1, maxLength: 5 }).map((commands) => commands.join(";"));
    await fc.assert(
      fc.asyncProperty(script, async (text) => {
        const result = await checkCommand(`sed -n '${text}' f`, { sandbox: SANDBOX });
        assert.equal(result.verdict, "allow", `${text}: ${result.reasons.join(" | ")}`);
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  test(
    `a write or run anywhere in the script asks, however the script is given (seed ${SEED})`,
    { timeout: 60_000 },
    async () => {
      const parts = fc.tuple(
        fc.array(safeCommand, { maxLength: 3 }),
        fc.tuple(address, dangerous).map(([where, command]) => `${where}${command}`),
        fc.array(safeCommand, { maxLength: 3 }),
        fc.constantFrom("plain", "-e", "--expression=", "-n -e", "-- "),
      );
      await fc.assert(
        fc.asyncProperty(parts, async ([before, bad, after, form]) => {
          // `w` and `e` take the rest of the line, so the dangerous command ends the script.
          const script = [...before, bad].join(";");
          const quoted = `'${script}'`;
          // With any -e, a plain operand is an input file, not the script.
          const given = form === "plain" && after.length === 0
            ? quoted
            : form === "plain"
            ? `-e ${quoted}`
            : form === "--expression="
            ? `--expression=${quoted}`
            : `${form} ${quoted}`;
          const command = after.length > 0 ? `sed ${given} -e '${after.join(";")}' f` : `sed ${given} f`;
          const result = await checkCommand(command, { sandbox: SANDBOX });
          assert.equal(result.verdict, "ask", command);
        }),
        { seed: SEED, numRuns: RUNS },
      );
    },
  );
});

describe("git listing subcommands: generated", { skip: GENERATED_ANALYSIS_DENO_ONLY }, () => {
  const listing: Record<string, { harmless: string[]; changing: string[] }> = {
    "git branch": {
      harmless: ["-a", "-r", "-v", "-vv", "--all", "--list", "--sort=-committerdate", "--no-color", "--merged HEAD"],
      changing: ["-d x", "-D x", "-m x", "-M x y", "-c x", "-C x", "-f", "-u o/x", "--delete x", "--move x", "--track"],
    },
    "git tag": {
      harmless: ["-l", "--list", "-n", "-n3", "--sort=v:refname", "--no-column", "--points-at HEAD"],
      changing: ["-d x", "-a x", "-s x", "-f", "-m msg", "-F f", "-v x", "-u key", "--delete x", "-e"],
    },
    "git config": {
      harmless: ["--get user.name", "--list", "-l", "--show-origin", "--global", "--local", "-z", "--type=bool"],
      changing: ["--unset x", "--add x y", "--edit", "-e", "--replace-all x y", "--rename-section a b", "-f /x"],
    },
    "git remote": {
      harmless: ["-v", "--verbose"],
      changing: ["add x y", "remove x", "rm x", "rename a b", "set-url x y", "prune x", "update", "show x"],
    },
  };
  for (const [base, { harmless, changing }] of Object.entries(listing)) {
    test(
      `${base}: a changing option or operand among listing options asks (seed ${SEED})`,
      { timeout: 60_000 },
      async () => {
        const line = fc.tuple(
          fc.array(fc.constantFrom(...harmless), { maxLength: 3 }),
          fc.constantFrom(...changing),
          fc.array(fc.constantFrom(...harmless), { maxLength: 2 }),
        ).map(([before, bad, after]) =>
          // git remote reads its own options only before the subcommand.
          base === "git remote" ? [base, ...before, bad].join(" ") : [base, ...before, bad, ...after].join(" ")
        );
        await fc.assert(fc.asyncProperty(line, assertAsks), { seed: SEED, numRuns: RUNS });
      },
    );
  }
});

describe("lists of files: generated", { skip: GENERATED_ANALYSIS_DENO_ONLY }, () => {
  /** Each program's options that name a list of files to open, and words that may stand around them. */
  const programs: { name: string; long: string; short: string; harmlessShort: string; context: string[] }[] = [
    { name: "sort", long: "--files0-from", short: "", harmlessShort: "unr", context: ["-u", "-k2", "-t:", "f"] },
    { name: "wc", long: "--files0-from", short: "", harmlessShort: "lwc", context: ["-l", "-c", "f"] },
    { name: "du", long: "--files0-from", short: "", harmlessShort: "sha", context: ["-s", "-h", "."] },
    { name: "file", long: "--files-from", short: "f", harmlessShort: "biL", context: ["-b", "--mime-type", "f"] },
    { name: "tar", long: "--files-from", short: "T", harmlessShort: "tv", context: ["-t", "-v", "-f a.tar"] },
    { name: "md5sum", long: "--check", short: "c", harmlessShort: "b", context: ["--quiet", "--strict", "f"] },
    { name: "sha256sum", long: "--check", short: "c", harmlessShort: "b", context: ["--status", "f"] },
    { name: "b2sum", long: "--check", short: "c", harmlessShort: "b", context: ["-l 256", "f"] },
    { name: "cksum", long: "--check", short: "c", harmlessShort: "", context: ["-a sha256", "f"] },
  ];
  const allowlist = [...programs.map((program) => program.name), "find", "printf"];
  const lists = fc.constantFrom("-", "list.txt", "<(printf '/etc/shadow\\0')", "/dev/stdin", "'$(x)'");
  const asks = async (command: string) => {
    const result = await checkCommand(command, { allowlist, sandbox: SANDBOX });
    assert.equal(result.verdict, "ask", command);
  };

  for (const program of programs) {
    test(
      `${program.name}: every spelling of a list option asks, with any list (seed ${SEED})`,
      { timeout: 60_000 },
      async () => {
        // Whole or abbreviated (GNU getopt takes any unique prefix), the list attached with `=` or in the next word.
        const long = fc.tuple(fc.integer({ min: 5, max: program.long.length }), fc.constantFrom("=", " "), lists)
          .map(([end, joiner, list]) => `${program.long.slice(0, end)}${joiner}${list}`);
        // Alone or after harmless letters in a cluster, the list attached or in the next word.
        const short = fc.tuple(
          fc.subarray([...program.harmlessShort]).map((letters) => letters.join("")),
          fc.constantFrom("", " "),
          lists,
        ).map(([cluster, joiner, list]) => `-${cluster}${program.short}${joiner}${list}`);
        const probe = program.short === "" ? long : fc.oneof(long, short);
        // Before, among and after the operands; after `--` it names a file, and asking there costs nothing.
        const line = fc.tuple(
          fc.array(fc.constantFrom(...program.context), { maxLength: 3 }),
          fc.constantFrom("", "-- "),
          probe,
          fc.array(fc.constantFrom(...program.context), { maxLength: 2 }),
        ).map(([before, dashes, word, after]) => [program.name, ...before, `${dashes}${word}`, ...after].join(" "));
        await fc.assert(fc.asyncProperty(line, asks), { seed: SEED, numRuns: RUNS });
      },
    );
  }

  test(`find: -files0-from asks wherever it stands (seed ${SEED})`, { timeout: 60_000 }, async () => {
    const line = fc.tuple(
      fc.constantFrom("", "-L", "-H", ".", "src"),
      fc.array(fc.constantFrom("-name x", "-type f", "-maxdepth 2", "-print"), { maxLength: 2 }),
      lists,
      fc.array(fc.constantFrom("-name x", "-type f", "-print0"), { maxLength: 2 }),
    ).map(([start, before, list, after]) => ["find", start, ...before, `-files0-from ${list}`, ...after].join(" "));
    await fc.assert(fc.asyncProperty(line, asks), { seed: SEED, numRuns: RUNS });
  });
});

describe("xxd: generated lines, run for real", { skip: DIFFERENTIAL_DENO_ONLY }, () => {
  // The installed xxd runs every line the analysis allows, in a scratch workspace with a link `-evil` leading out.
  let base = "";
  before(async () => {
    base = await realpath(await mkdtemp(join(tmpdir(), "toolfence-xxd-")));
    await mkdir(join(base, "ws"));
    await mkdir(join(base, "outside"));
    await writeFile(join(base, "outside", "target"), "ORIGINAL\n");
    await writeFile(join(base, "ws", "a.txt"), "hello\n");
    await writeFile(join(base, "ws", "p.hex"), "5041594c4f41440a\n");
    await symlink(join(base, "outside", "target"), join(base, "ws", "-evil"));
  });
  after(async () => await rm(base, { recursive: true, force: true }));

  /** Every file of the scratch folders, by name, with its content. */
  async function snapshot(): Promise<string> {
    const files: string[] = [];
    for (const folder of ["ws", "outside"]) {
      for (const name of (await readdir(join(base, folder))).sort()) {
        files.push(`${folder}/${name}=${await readFile(join(base, folder, name), "utf8").catch(() => "?")}`);
      }
    }
    return files.join("\n");
  }

  test(`a line the analysis allows writes no file (seed ${SEED})`, { timeout: 120_000 }, async () => {
    const words = [
      ...["-l 4", "-c 8", "-cols 4", "-g1", "-s 1", "-ps", "-p", "-u", "-i", "-name", "-len 2", "--len"],
      ...["-r", "--revert", "--r", "-rp", "-pr", "--", "---", "-", "a.txt", "p.hex", "-x", "-evil", "out"],
    ];
    const line = fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 4 })
      .map((chosen) => ["xxd", ...chosen].join(" "));
    let allowed = 0;
    await fc.assert(
      fc.asyncProperty(line, async (command) => {
        const workspaceRoot = join(base, "ws");
        const result = await checkCommand(command, { sandbox: SANDBOX, workspaceRoot });
        if (result.verdict !== "allow") return;
        allowed++;
        const before = await snapshot();
        spawnSync("bash", ["-c", command], { cwd: workspaceRoot, input: "", timeout: 60_000 });
        assert.equal(await snapshot(), before, `${command} was allowed and wrote a file`);
      }),
      { seed: SEED, numRuns: RUNS },
    );
    assert.ok(allowed >= 20, `only ${allowed} lines were allowed, too few to tell`);
  });
});

describe("date: generated", { skip: GENERATED_ANALYSIS_DENO_ONLY }, () => {
  const harmless = ["-u", "--utc", "-R", "-d now", "--date=now", "-r f", "--debug", "+%s", "-Iseconds"];

  test(`an operand that is no +FORMAT asks wherever it stands (seed ${SEED})`, { timeout: 60_000 }, async () => {
    const time = fc.tuple(
      fc.constantFrom("", "-- "),
      fc.constantFrom("010203042030", "01020304", "0102030420.59", "now", "-", "x"),
    ).map(([dashes, word]) => `${dashes}${word}`);
    const line = fc.tuple(
      fc.array(fc.constantFrom(...harmless), { maxLength: 3 }),
      time,
      fc.array(fc.constantFrom(...harmless.filter((word) => !word.startsWith("+"))), { maxLength: 2 }),
    ).map(([before, word, after]) => ["date", ...before, word, ...after].join(" "));
    await fc.assert(fc.asyncProperty(line, assertAsks), { seed: SEED, numRuns: RUNS });
  });

  test(`options and one +FORMAT run (seed ${SEED})`, { timeout: 60_000 }, async () => {
    const line = fc.array(fc.constantFrom(...harmless.filter((word) => word !== "+%s")), { maxLength: 4 })
      .chain((words) => fc.constantFrom("", "+%F", "-- +%s").map((format) => ["date", ...words, format].join(" ")));
    await fc.assert(
      fc.asyncProperty(line, async (command) => {
        const result = await checkCommand(command, { sandbox: SANDBOX });
        assert.equal(result.verdict, "allow", `${command}: ${result.reasons.join(" | ")}`);
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });
});

describe("file: generated", () => {
  test(
    `decompressing, list and writing options ask in every spelling (seed ${SEED})`,
    { timeout: 60_000 },
    async () => {
      const file: Runner = {
        base: "file",
        context: ["-b", "-L", "--mime-type", "f", "a.txt"],
        dangerousLong: ["--uncompress", "--uncompress-noreport", "--files-from", "--compile", "--preserve-date"],
        dangerousShort: ["z", "Z", "f", "C", "p"],
      };
      const probe = fc.oneof(
        fc.constantFrom(...file.dangerousLong).chain(longSpelling),
        fc.constantFrom(...file.dangerousShort).chain((letter) => shortSpelling(letter, "bL")),
      );
      await fc.assert(fc.asyncProperty(lineArbitrary(file, probe), assertAsks), { seed: SEED, numRuns: RUNS });
    },
  );
});
