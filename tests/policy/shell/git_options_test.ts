// git's option tables: the committed table is what the installed git prints
// (a git upgrade fails this test until `scripts/git_options.ts` is rerun), and
// the listing subcommands are read as git reads them, checked against real
// git in scratch repositories.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import process from "node:process";
import fc from "fast-check";
import { parseOptionTable, readGitOptionTable } from "../../../scripts/git_options.ts";
import { GIT_OPTIONS, GIT_OPTIONS_VERSION } from "../../../policy/shell/_git_options.ts";
import { checkCommand } from "../../../policy/shell/check_command.ts";
import { DIFFERENTIAL_DENO_ONLY } from "../../_runtime.ts";

const SEED = Number(process.env.TEST_SEED ?? 20261201);
const RUNS = Number(process.env.GIT_OPTIONS_RUNS ?? 150);
const gitMissing = spawnSync("git", ["--version"]).status === 0 ? undefined : "git is not installed";
const NO_SANDBOX = { sandbox: { available: false, reason: "test" } } as const;
// git branch and git tag run only in the sandbox (a partial clone fetches what they read): their options are judged there.
const SANDBOX = { sandbox: { available: true } } as const;

describe("git option tables", { timeout: 120_000 }, () => {
  test("the table parser reads every form parse-options prints", { timeout: 120_000 }, () => {
    const table = parseOptionTable([
      "usage: git x [<options>]",
      "",
      "    -v, --verbose         be verbose",
      "    --format <format>     format to use",
      "    --abbrev[=<n>]        digits",
      "    -n[<n>]               lines",
      "    -u, --set-upstream-to <upstream>",
      "                          change the upstream",
      "    --path blob|tree      a path",
      "    --[no-]color          colours",
      "    -D                    delete",
    ].join("\n"));
    assert.deepEqual(table, {
      short: { v: "none", n: "optional", u: "required", D: "none" },
      long: {
        verbose: "none",
        format: "required",
        abbrev: "optional",
        "set-upstream-to": "required",
        path: "required",
        color: "none",
        "no-color": "none",
      },
    });
  });

  test("the committed table is the installed git's", { timeout: 120_000 }, (t) => {
    if (gitMissing) return t.skip(gitMissing);
    const installed = readGitOptionTable();
    assert.equal(
      installed.version,
      GIT_OPTIONS_VERSION,
      "git was upgraded: rerun `deno run -A scripts/git_options.ts`",
    );
    assert.deepEqual(installed.subcommands, GIT_OPTIONS);
    assert.equal(GIT_OPTIONS.branch.long.format, "required");
  });

  test("a value-taking option takes the next word, whatever it looks like", { timeout: 120_000 }, async () => {
    // `--format` takes `--list` as its value, so NAME creates a branch.
    const created = await checkCommand("git branch --format --list NAME");
    assert.equal(created.verdict, "ask");
    assert.match(created.reasons.join(" "), /`NAME` makes `git branch` create a branch/);
    // `--merged` takes `--track` as its value (git then fails on it): nothing changes.
    assert.equal((await checkCommand("git branch --merged --track")).verdict, "allow");
    assert.equal((await checkCommand("git branch --list --format '%(refname)' 'feat*'")).verdict, "allow");
    assert.equal((await checkCommand("git tag -n5 --list 'v*'")).verdict, "allow");
    assert.equal((await checkCommand("git tag -n 5")).verdict, "ask");
  });

  test(
    "cat-file's --filters and --textconv run configured programs: they need the sandbox",
    { timeout: 120_000 },
    async () => {
      for (const line of ["git cat-file --filters HEAD:a.txt", "git cat-file --textconv HEAD:a.txt"]) {
        const check = await checkCommand(line, NO_SANDBOX);
        assert.equal(check.verdict, "ask", line);
        assert.match(check.reasons.join(" "), /sandbox/, line);
      }
    },
  );

  test(`${RUNS} generated git branch and tag lines: every allowed one leaves the refs as they were (seed ${SEED})`, {
    timeout: 120_000,
    skip: DIFFERENTIAL_DENO_ONLY,
  }, async (t) => {
    if (gitMissing) return t.skip(gitMissing);
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "git-listing-"));
    const env = { ...process.env, GIT_CONFIG_NOSYSTEM: "1", HOME: root, GIT_AUTHOR_NAME: "t", GIT_COMMITTER_NAME: "t" };
    const repo = path.join(root, "repo");
    execFileSync("git", ["init", "-q", repo], { env });
    execFileSync("git", ["-C", repo, "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "init"], { env });
    const refs = () => execFileSync("git", ["-C", repo, "for-each-ref"], { env, encoding: "utf8" });
    const initial = refs();
    // Options from the table, values that look like options or names, and operands.
    const word = (sub: "branch" | "tag") =>
      fc.oneof(
        fc.constantFrom(...Object.keys(GIT_OPTIONS[sub].long).map((name) => `--${name}`)),
        fc.constantFrom(...Object.keys(GIT_OPTIONS[sub].short).map((name) => `-${name}`)),
        fc.constantFrom("NAME", "v1", "HEAD", "--list", "-l", "%(refname)", "-n3", "--sort=refname"),
      );
    const line = fc.constantFrom("branch" as const, "tag" as const).chain((sub) =>
      fc.array(word(sub), { minLength: 1, maxLength: 4 }).map((words) => [sub, ...words])
    );
    let allowed = 0;
    try {
      await fc.assert(
        fc.asyncProperty(line, async (words) => {
          const check = await checkCommand(`git ${words.map((w) => `'${w}'`).join(" ")}`, SANDBOX);
          if (check.verdict !== "allow") return;
          allowed++;
          spawnSync("git", words, { cwd: repo, env, input: "", timeout: 5000 });
          const after = refs();
          if (after !== initial) {
            // Put the refs back before failing, so that shrinking starts clean.
            for (const ref of after.split("\n").filter((l) => l !== "" && !initial.includes(l))) {
              execFileSync("git", ["-C", repo, "update-ref", "-d", ref.split(/\s+/)[2]], { env });
            }
          }
          assert.equal(after, initial, `git ${words.join(" ")} was allowed and changed the refs`);
        }),
        { seed: SEED, numRuns: RUNS },
      );
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
    console.log(`git listing lines: ${RUNS} generated, ${allowed} allowed and run`);
    assert.ok(allowed >= RUNS / 20, `only ${allowed} lines were allowed`);
  });
});
