// The awk reader against the installed gawk and mawk: gawk --sandbox refuses,
// when they run, exactly the things that run commands or open other files;
// every generated program the reader finds harmless runs under --sandbox as it
// runs without it. Generated programs that hide a command, a write or a read
// behind a `/` that is a regex or a division, or behind a redirection far into
// a print or getline statement, never read as harmless while gawk or mawk does
// the thing.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import process from "node:process";
import fc from "fast-check";
import { awkCommandProblem, awkProgramProblem } from "../../../policy/shell/_awk_program.ts";
import type { PathOperand } from "../../../policy/shell/_path_operands.ts";
import type { BashWord } from "../../../policy/shell/_tree.ts";
import { DIFFERENTIAL_DENO_ONLY } from "../../_runtime.ts";

const SEED = Number(process.env.TEST_SEED ?? 20261201);
const RUNS = Number(process.env.AWK_PROGRAM_RUNS ?? 300);
const word = (value: string): BashWord => ({ text: `'${value}'`, value, mayBeOption: value.startsWith("-") });
const installed = (awk: string) => spawnSync(awk, ["-W", "version"]).status === 0;
const AWKS = ["gawk", "mawk"].filter(installed);

/**
 * A directory with the input file `in` and a file `S` holding SECRET: an awk
 * program run there (on `in`) acts when it creates `M` (running a command or
 * writing a file) or prints SECRET (reading another file).
 */
function stage(): { dir: string; acts: (awk: string, program: string) => boolean } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "awk-acts-"));
  fs.writeFileSync(path.join(dir, "in"), "l1 2\nl2 3\n");
  fs.writeFileSync(path.join(dir, "S"), "SECRET\n");
  const acts = (awk: string, program: string) => {
    fs.rmSync(path.join(dir, "M"), { force: true });
    const run = spawnSync(awk, [program, "in"], { cwd: dir, input: "", encoding: "utf8", timeout: 5000 });
    return fs.existsSync(path.join(dir, "M")) || run.stdout.includes("SECRET");
  };
  return { dir, acts };
}

// Each one runs `touch M`, writes `M` or reads `S` in gawk or mawk (the test below runs them), and asks.
const ATTACKS = [
  // A regex where an operand is expected, its `"` hiding nothing from awk: a reader that divides there
  // opens a string at the `"` that swallows the `system`.
  '{ x = $/"/; system("touch M"); y = "\\"" }',
  '{ x = (/"/); system("touch M"); y = "\\"" }',
  '{ n = split($0, a, /"/); system("touch M"); y = "\\"" }',
  '{ x = !/"/; system("touch M"); y = "\\"" }',
  '{ x = $0 ~ /"/; system("touch M"); y = "\\"" }',
  '{ x = $0 !~ /"/; system("touch M"); y = "\\"" }',
  '{ x = 1 + /"/; system("touch M"); y = "\\"" }',
  '{ x = 1 ? /"/ : 2; system("touch M"); y = "\\"" }',
  '{ x = 1 && /"/; system("touch M"); y = "\\"" }',
  '{ /"/; system("touch M"); y = "\\"" }',
  '{ x = 1; /"/; system("touch M"); y = "\\"" }',
  '{ x = 1\n/"/; system("touch M"); y = "\\"" }',
  '/"/ || 1 { system("touch M"); y = "\\"" }',
  '{ x = 1 } /"/ || 1 { system("touch M"); y = "\\"" }',
  '{ if (1) /"/; system("touch M"); y = "\\"" }',
  '{ while (x++ < 1) /"/; system("touch M"); y = "\\"" }',
  '{ for (k in a) /"/; system("touch M"); y = "\\"" }',
  '{ for (;x++ < 1;) /"/; system("touch M"); y = "\\"" }',
  '{ if (0) x = 1; else /"/; system("touch M"); y = "\\"" }',
  '{ do /"/; while (0); system("touch M"); y = "\\"" }',
  '{ print /"/; system("touch M"); y = "\\"" }',
  'function f() { return /"/ } { system("touch M"); y = "\\"" }',
  // A division after an operand: a reader that starts a regex there swallows the `system` into it.
  '{ x = /a/ / 1; system("touch M"); y = 1 / 2 }',
  'NR==1{ n = getline / 1; system("touch M"); m = 1 / 1 }',
  'NR==1{ x = getline v / 2; system("touch M"); y = 1 / 2 }',
  'NR==1{ x = (getline) / 2; system("touch M"); y = 1 / 2 }',
  '{ x = (4) / 2; system("touch M"); y = 1 / 2 }',
  '{ a[1] = 4; x = a[1] / 2; system("touch M"); y = 1 / 2 }',
  '{ x = n / 2; system("touch M"); y = 1 / 2 }',
  '{ x = 4 / 2; system("touch M"); y = 1 / 2 }',
  '{ x = "4" / 2; system("touch M"); y = 1 / 2 }',
  '{ x = NF / 2; system("touch M"); y = 1 / 2 }',
  '{ x = $NF / 2; system("touch M"); y = 1 / 2 }',
  '{ x = 4 \\\n/ 2; system("touch M"); y = 1 / 2 }',
  '{ x = 4 \\\r\n/ 2; system("touch M"); y = 1 / 2 }',
  // Where gawk and mawk disagree, one of them runs the `system` the other hides.
  '{ x = n++ / 2; system("touch M"); y = 1 / 2 }',
  '{ x = n-- / 2; system("touch M"); y = 1 / 2 }',
  '{ x = n++ / 1 "/; system("touch M"); y = "/" }',
  '{ x = length / 2; system("touch M"); y = 1 / 2 }',
  '{ x = length / 1 "/; system("touch M"); y = "/" }',
  '{ x = 4 \\  \n/ 2; system("touch M"); y = 1 / 2 }',
  'NR==1{ x = /a/ /=/; system("touch M"); y = 1 / 2 }',
  'NR==1{ x = 1 + n /=/; system("touch M"); y = 1 / 2 }',
  '{ x = /[[:alpha:]/]"/; system("touch M"); y = "\\"" }',
  '{ x = /a][/]"/; system("touch M"); y = "\\"" }',
  // A redirection after `&&`, `||`, `?:`, parentheses or a continued line is still the statement's.
  '{print "x", 1 && 1 > "M"}',
  '{print "x", 0 || 1 > "M"}',
  '{print "x", 1 && 1 >> "M"}',
  '{ print 1 ? "a" : "b" > "M" }',
  '{ print (1 ? "a" : "b") > "M" }',
  '{ print (1, 2) > "M" }',
  '{ print(1)(2) > "M" }',
  '{ printf("%s", 1) > "M" }',
  '{ printf "%s", (1 > 0) > "M" }',
  '{ print 1,\n2 > "M" }',
  '{ print 1 &&\n1 > "M" }',
  '{ print 1 ||\n1 > "M" }',
  '{ print 1 ?\n2 : 3 > "M" }',
  '{ print 1 ? 2 :\n3 > "M" }',
  '{ print 1 | "touch M" }',
  '{ print 1 |& "touch M" }',
  '{ close("M"); print > "M" }',
  '{ fflush(); print > "M" }',
  '{ print > "M"; close("M") }',
  '{ if (1) print > "M"; else print }',
  '{ "touch M" | getline }',
  '{ getline $(1 && 1) < "S"; print }',
  '{ getline $(0 || 1) < "S"; print }',
  '{ getline v < "S"; print v }',
  '{ getline a[(1)] < "S"; print a[1] }',
  '{ getline a[1 && 1] < "S"; print a[1] }',
  '{ getline < "S"; print }',
  '{ while ((getline v < "S") > 0) print v }',
  '{ if ((getline v < "S") && 1) print v }',
  // gawk's SYMTAB reaches ARGV and ARGC by name.
  'BEGIN { SYMTAB["ARGV"][1] = "S"; SYMTAB["ARGC"] = 2 } { print }',
];

describe("awk programs", { timeout: 120_000 }, () => {
  test("everyday programs run; commands, pipes, other files and redirections ask", { timeout: 120_000 }, () => {
    for (
      const program of [
        "{print $1}",
        "$3 > 100 {print $1}",
        "NR>1",
        "{ print (a > b) }",
        "{ s += $2 } END { print s / NR / 2 }",
        "/a|b/ { n++ } END { print n }",
        '{ print "system | getline > x" }',
        "{ while ((getline line) > 0) n++ }",
        'BEGIN { FS = ":" } { print $1, length($0) }',
        "{ close(x); fflush() }",
        "/re/ {n++} END {print n}",
        "{ s += $2 } END { print s / NR }",
        "NR % 2 == 0",
        "length > 72",
        "{ print $1 / $2, $NF / 2, (NF) / 2, a[1] / 2, NR / 2 }",
        '{ print ($1 > 0 ? "pos" : "neg") }',
        "{ n = split($0, a, /,/); print n }",
        '{ gsub(/a/, "b"); sub(/\\/$/, ""); print }',
        "/^#/ { next } { print }",
        "{ if ($1 ~ /^[0-9]+$/) print }",
        "$1 ~ /^[a-z]+[]x]/ && !/[^]a]/",
        "{ a[$1] += $2 } END { for (k in a) print k, a[k] }",
        'BEGIN { OFS = "\\t" } { $1 = $1; print }',
        '{ printf "%s %d\\n", $1, $2 * 100 / $3 }',
        "{ $3 /= 1024; total /= 2; print }",
        "{ if ((getline line) < 1) exit; print line }",
        "{ print length($0), substr($0, 1, 10), tolower($1) }",
        '{ print $1 } # a comment with / and "\n/x/ { print }',
        "{ x = 1 + \\\n 2; print x }",
      ]
    ) {
      assert.equal(awkProgramProblem(program), undefined, program);
    }
    for (
      const program of [
        'BEGIN{system("rm x")}',
        "BEGIN { system (x) }",
        '{ print > "f" }',
        '{ print $1 >> "f" }',
        '{ printf("%s", $1) > "f" }',
        '{ print | "sh" }',
        '{ "id" | getline x }',
        '{ getline line < "/etc/passwd" }',
        '{ print |& "cmd" }',
        'BEGIN{f="sys" "tem"; @f("id")}',
        '@include "x.awk"',
        'BEGIN { ARGV[1] = "/etc/shadow"; ARGC = 2 }',
        "/[/]/ { print }",
        '{ print "unterminated }',
      ]
    ) {
      assert.ok(awkProgramProblem(program) !== undefined, program);
    }
  });

  test("the tester's lines, and variants of each class, ask", { timeout: 60_000 }, () => {
    for (
      const program of [
        ...ATTACKS,
        '{ x = /a/ / 1; system("id > \\057tmp\\057pwned"); y = 1 / 2 }',
        'NR==1{ n = getline / 1; system("touch \\057tmp\\057p"); m = 1 / 1 }',
        '{ x = $/"/; system("echo PWN"); y = "\\"" }',
        '{print "x", 1 && 1 > "/tmp/pwned"}',
        '{ getline $(1 && 1) < "/etc/passwd"; print }',
      ]
    ) {
      assert.ok(awkProgramProblem(program) !== undefined, program);
    }
    // Where the reading is unsure it asks, saying why.
    assert.match(awkProgramProblem("{ x = n++ / 2 }") ?? "", /awks read differently/);
    assert.match(awkProgramProblem("{ print length / 2 }") ?? "", /awks read differently/);
    assert.match(awkProgramProblem("{ a[1] /= 2 }") ?? "", /unless an assignment can follow/);
    assert.match(awkProgramProblem("{ x = 1 \\ # c\n/ 2 }") ?? "", /outside a string or regex/);
    assert.match(awkProgramProblem("{ x = /a\\\nb/ }") ?? "", /continued on the next line/);
  });

  test("each of those attacks runs, writes or reads in gawk or mawk", {
    timeout: 60_000,
    skip: DIFFERENTIAL_DENO_ONLY,
  }, (t) => {
    if (AWKS.length < 2) return t.skip("gawk and mawk are not both installed");
    const { dir, acts } = stage();
    try {
      for (const program of ATTACKS) {
        assert.ok(AWKS.some((awk) => acts(awk, program)), `neither awk acts on ${JSON.stringify(program)}`);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test("operands are input files, except assignments; -f records its file", { timeout: 120_000 }, () => {
    const files: PathOperand[] = [];
    assert.equal(
      awkCommandProblem(["-F:", "{print $1}", "a.txt", "n=1", "/etc/passwd"].map(word), "awk", files),
      undefined,
    );
    assert.deepEqual(files.map((file) => file.value), ["a.txt", "/etc/passwd"]);
    const fromFile: PathOperand[] = [];
    assert.match(awkCommandProblem(["-f", "prog.awk", "a.txt"].map(word), "awk", fromFile) ?? "", /loads awk code/);
    // The code of a file is not seen: what it writes is recorded as a write only the run knows.
    assert.deepEqual(fromFile.map((file) => [file.value, file.access]), [
      ["prog.awk", "read"],
      [undefined, "write"],
      ["a.txt", "read"],
    ]);
    for (const line of [["-e", "x"], ["-i", "x.awk"], ["-l", "x"], ["-E", "x.awk"], ["--exec", "x"], ["-W", "exec"]]) {
      assert.ok(awkCommandProblem(line.map(word), "gawk") !== undefined, line.join(" "));
    }
  });

  test(`${RUNS} generated programs: each one read as harmless runs under gawk --sandbox (seed ${SEED})`, {
    timeout: 120_000,
    skip: DIFFERENTIAL_DENO_ONLY,
  }, (t) => {
    if (spawnSync("gawk", ["--version"]).status !== 0) return t.skip("gawk is not installed");
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "awk-program-"));
    const statement = fc.constantFrom(
      "print 1",
      "print (1 > 2)",
      "x = 4 / 2 / 1",
      'if ("a" ~ /b|c/) n++',
      'print "system(1) | getline"',
      "getline",
      "close(x)",
      'y = length("ab")',
      'system("true")',
      'print "x" > "out"',
      'printf("%s", 1) >> "out"',
      '"true" | getline v',
      'getline v < "in"',
      'print 1 | "cat"',
      'ARGV[1] = "in"; ARGC = 2',
      'print 1 > "/dev/null"',
    );
    const program = fc.array(statement, { minLength: 1, maxLength: 4 }).map((parts) => `BEGIN { ${parts.join("; ")} }`);
    fs.writeFileSync(path.join(cwd, "in"), "x\n");
    let harmless = 0;
    try {
      fc.assert(
        fc.property(program, (text) => {
          const run = (sandbox: boolean) =>
            spawnSync("gawk", [...(sandbox ? ["--sandbox"] : []), text], {
              cwd,
              input: "",
              encoding: "utf8",
              timeout: 5000,
            });
          const problem = awkProgramProblem(text);
          if (problem !== undefined) return;
          harmless++;
          const sandboxed = run(true);
          assert.ok(
            !/sandbox/.test(sandboxed.stderr),
            `${text} was read as harmless; gawk --sandbox: ${sandboxed.stderr}`,
          );
        }),
        { seed: SEED, numRuns: RUNS },
      );
    } finally {
      fs.rmSync(cwd, { recursive: true, force: true });
    }
    console.log(`awk programs: ${RUNS} generated, ${harmless} read as harmless`);
    assert.ok(harmless >= RUNS / 20, `only ${harmless} programs read as harmless`);
  });
  /**
   * Each generated program runs under every installed awk; none that gawk or
   * mawk lets act may read as harmless, and enough of them act for the
   * property to mean something.
   */
  const differential = (name: string, programs: fc.Arbitrary<string>) =>
    test(`${RUNS} generated programs, ${name}: none read as harmless acts in gawk or mawk (seed ${SEED})`, {
      timeout: 60_000,
      skip: DIFFERENTIAL_DENO_ONLY,
    }, (t) => {
      if (AWKS.length === 0) return t.skip("neither gawk nor mawk is installed");
      const { dir, acts } = stage();
      let harmless = 0;
      let acting = 0;
      try {
        fc.assert(
          fc.property(programs, (text) => {
            const actors = AWKS.filter((awk) => acts(awk, text));
            if (actors.length > 0) acting++;
            if (awkProgramProblem(text) !== undefined) return;
            harmless++;
            assert.deepEqual(actors, [], `${text} was read as harmless`);
          }),
          { seed: SEED, numRuns: RUNS },
        );
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
      console.log(`awk programs, ${name}: ${RUNS} generated, ${acting} act, ${harmless} read as harmless`);
      assert.ok(acting >= RUNS / 10, `only ${acting} programs act`);
      assert.ok(harmless >= RUNS / 50, `only ${harmless} programs read as harmless`);
    });

  const payload = fc.constantFrom(
    'system("touch M")',
    'print "x" > "M"',
    'printf "x" >> "M"',
    'print "x" | "cat > M"',
    '"touch M" | getline',
    'getline v < "S"; print v',
  );
  // `{ BEFORE/INSIDE/; PAYLOAD; AFTER }`: whether the payload runs turns on whether each `/` is a regex or divides.
  const before = fc.constantFrom(
    ...["x = /a/ ", "x = getline ", "x = getline v ", "x = $", "x = $ ", "x = NF ", "x = n ", "x = 4 ", 'x = "4" '],
    ...["x = (4) ", "x = a[1] ", "x = n++ ", "x = n-- ", "x = ++", "x = length ", "x = substr ", "x = case "],
    ...["x = func ", "x = $NF ", "x = $1 ", "x = a[1]++ ", "x = ", "x = !", "x = -", "x = (", "x = 1, "],
    ...["x = 1 ? ", "x = 1 && ", "x = 1 ~ ", "x = 1 ^ ", "x = 1 ** ", "x = NR % ", "x = 1 in a ", "x = 2 /"],
    ...["if (1) ", "while (n++ < 1) ", "for (k in a) ", "else ", "print ", "x = 1; ", "x = 1\n", "} ", "} NR "],
    ...["x = 4 \\\n", "x = 4 \\\r\n", "x = 4 \\ \n", "x = 4 # c\n"],
  );
  const inside = fc.constantFrom(
    ...["1", '"', " 1 ", "a", '"/', 'a"', "=", ' 2 "', "\\/"],
    ...["[", "]", "[/]", "[[:alpha:]/]", "a][", "[]", "[^]/]"],
  );
  const after = fc.constantFrom(
    ...["y = 1 / 2", 'y = "\\""', 'y = "/"', "y = 1 /", "y = /", "y = 2", 'y = /"/', 'y = $/"/'],
    ...['y = "\\"" / 1', "y = /a/ / 1", 'y = 1 / "/"'],
  );
  differential(
    "a payload between a regex and a division",
    fc.tuple(
      fc.constantFrom("", "NR==1 ", "BEGIN "),
      before,
      inside,
      fc.constantFrom("/", " / ", "", "/ "),
      payload,
      after,
    )
      .map(([rule, left, regex, close, act, right]) => `${rule}{ ${left}/${regex}${close}; ${act}; ${right} }`),
  );

  // print and getline statements whose redirection comes after `&&`, `||`, `?:`, parentheses, a continued line.
  const term = fc.constantFrom(
    ...["1", "$1", "x", '"a"', "(1)", "(1, 2)", "(1 > 0)", "a[1]", "f(1)", "length($0)", "(1 ? 2 : 3)"],
    ...["$(1 && 1)", "substr($0, 1 > 0)"],
  );
  const join = fc.constantFrom(
    ...[" && ", " || ", ", ", ",\n", " &&\n", " ||\n", " ? 1 : ", " ?\n1 :\n", " ", " + ", " ~ ", " in a "],
  );
  const expression = fc.tuple(fc.array(fc.tuple(term, join), { minLength: 1, maxLength: 3 }), term)
    .map(([parts, last]) => parts.map(([operand, operator]) => operand + operator).join("") + last);
  const print = fc.tuple(
    fc.constantFrom("print ", "printf ", "print(", "printf("),
    expression,
    fc.constantFrom(' > "M"', ' >> "M"', ' | "cat > M"', ""),
  ).map(([keyword, list, redirection]) => `${keyword}${list}${keyword.endsWith("(") ? ")" : ""}${redirection}`);
  const getline = fc.tuple(
    fc.constantFrom("", "v", "$1", "$(1 && 1)", "a[1 && 1]", "a[(1)]", "$(0 || 1)", "$NF", "a[$(1)]"),
    fc.constantFrom(' < "S"', "", ' < "S" && 1'),
    fc.constantFrom("", ")", " > 0)", ") < 1"),
  ).map(([variable, redirection, test]) =>
    test === "" ? `getline ${variable}${redirection}` : `if ((getline ${variable}${redirection}${test}) print v`
  );
  differential(
    "a redirection deep in a print or getline statement",
    fc.tuple(
      fc.array(fc.oneof(print, getline, fc.constantFrom('close("M")', "fflush()")), { minLength: 1, maxLength: 3 }),
      fc.constantFrom("; ", "\n"),
    ).map(([statements, separator]) =>
      `function f(x) { return x } NR==1 { ${statements.join(separator)}; print v, a[1] }`
    ),
  );
});
