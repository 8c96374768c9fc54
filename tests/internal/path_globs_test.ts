// Letter case never matters to the policy's globs: where the file system
// folds case (macOS, Windows) `.ENV` is `.env`, so the deny, hidden,
// read-only and protected rules match every spelling on every system (fail
// closed). No case-folding file system can be made here (no vfat or ext4
// casefold in this kernel), so the real files below are distinct files of
// other letter cases, which must be covered all the same: by the matcher
// (generated spellings), by the shell sandbox's masks, and by the file tools.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import picomatchModule from "picomatch";
import os from "node:os";
import path from "node:path";
import {
  globBase,
  globMayMatchWithin,
  hasGlobSyntax,
  literalGlob,
  pathGlobMatcher,
} from "../../internal/path_globs.ts";
import { isProtectedPath } from "../../policy/protected_paths.ts";
import { PolicyRules } from "../../policy/config/rules.ts";
import { parsePolicyFile } from "../../policy/config/load.ts";
import { Session } from "../../policy/session.ts";
import { bubblewrapStatus } from "../../policy/sandbox.ts";
import { ToolBox } from "../../toolbox.ts";

const noBwrap = (await bubblewrapStatus()).path ? false : "needs bubblewrap";
const POLICY = { paths: { deny: ["**/.env", "secrets/**"], readOnly: ["vendor/**"] } };

// A spelling of `text` with each letter's case chosen by `bits`.
function spelled(text: string, bits: number): string {
  let i = 0;
  return [...text].map((c) => c.toLowerCase() === c.toUpperCase() ? c : (bits >> (i++ % 30)) & 1 ? c.toUpperCase() : c)
    .join("");
}

describe("the policy's globs ignore letter case", () => {
  test("generated spellings: every case of a matching path matches, every case of another path does not", {
    timeout: 10_000,
  }, () => {
    const cases: [string[], string, boolean][] = [
      [["**/.env"], "app/.env", true],
      [["secrets/**"], "secrets/key.txt", true],
      [["secrets/**"], "secrets", true],
      [["vendor/**"], "vendor/lib/x.js", true],
      [["**/.env"], "app/.envrc", false],
      [["secrets/**"], "secretsx/key.txt", false],
    ];
    let seed = 7;
    for (const [patterns, candidate, expected] of cases) {
      const matches = pathGlobMatcher(patterns);
      for (let n = 0; n < 200; n++) {
        seed = (seed * 1103515245 + 12345) & 0x7fffffff;
        const variant = spelled(candidate, seed);
        assert.equal(matches(variant), expected, `${patterns} ${variant}`);
      }
    }
    for (let n = 0; n < 200; n++) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      assert.ok(isProtectedPath(spelled(".git/hooks/pre-commit", seed)));
      assert.ok(isProtectedPath(spelled("pkg/.npmrc", seed)));
    }
  });
});

// picomatch ships no types; the matcher the policy's one must agree with, pattern by pattern.
const picomatchArray = picomatchModule as unknown as (
  globs: readonly string[],
  options: { dot: boolean; nocase: boolean },
) => (candidate: string) => boolean;

describe("one matcher for many patterns", () => {
  test("generative: it decides every path as picomatch does, one pattern after another", { timeout: 60_000 }, () => {
    // Pieces of patterns: names, wildcards, classes, braces, extglobs, escapes and the characters that are syntax.
    const PIECES = [
      ...["a", "b", "A", ".env", ".git", "x.y", "node_modules", "*", "**", "?", "[ab]", "[!a]", "[a-c]", "{a,b}"],
      ...["{x,.env}", "{a,b/c}", "@(a|b)", "!(a)", "+(a)", "*(b)", "?(a)", "(", ")", "+", "@", "!", ",", "\\*"],
      ...["\\[", "é", "-", ".", "lefthook.{yml,json}", "σ", "Σ", "ς", "\u212a", "k", "ſ", "ß", "s"],
    ];

    const NAMES = [
      ...["a", "b", "A", "B", "ab", ".env", ".ENV", ".git", "x.y", "node_modules", "(", "a+", "!", "é", "É", "-"],
      ...["*", ".", "lefthook.json", "LEFTHOOK.yml", "σ", "Σ", "ς", "\u212a", "k", "K", "ſ", "s", "S", "ß", "SS"],
    ];
    let seed = 20261204;
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const pattern = () => {
      const names = Array.from(
        { length: 1 + next(4) },
        () => Array.from({ length: 1 + next(3) }, () => PIECES[next(PIECES.length)]).join(""),
      );
      return (next(8) === 0 ? "!" : "") + (next(3) === 0 ? "**/" : "") + names.join("/") + (next(4) === 0 ? "/**" : "");
    };
    const candidate = () =>
      (next(6) === 0 ? "./" : "") + Array.from({ length: 1 + next(5) }, () => NAMES[next(NAMES.length)]).join("/");
    let compared = 0;
    for (let round = 0; round < 1500; round++) {
      // Few patterns as often as many: with many, another pattern's names let a path through the names' test.
      const patterns = Array.from({ length: 1 + next(round % 2 ? 2 : 12) }, pattern);
      const expanded = patterns.flatMap((p) => p.endsWith("/**") ? [p, p.slice(0, -3)] : [p]);
      let reference: (candidate: string) => boolean;
      try {
        // Compared in the NFC forms (the Kelvin sign is K there), as the policy's matcher compares them.
        const each = picomatchArray(expanded.map((p) => p.normalize("NFC")), { dot: true, nocase: true });
        reference = (c) => each(c.normalize("NFC"));
      } catch {
        assert.throws(() => pathGlobMatcher(patterns), `${JSON.stringify(patterns)}: picomatch refuses them`);
        continue;
      }
      const matches = pathGlobMatcher(patterns);
      const candidates = [...Array.from({ length: 40 }, candidate), ...expanded, ""];
      for (const c of candidates) {
        assert.equal(matches(c), reference(c), `${JSON.stringify(patterns)} against ${JSON.stringify(c)}`);
        compared++;
      }
    }
    assert.ok(compared > 10_000, `only ${compared} comparisons`);
    // Where names are not what they seem: a slash inside braces, a `.` name, letters whose case folds apart.
    for (
      const [patterns, candidate] of [
        [["{a,b/c}"], "a"],
        [["./x"], "x"],
        [["x/σ"], "x/ς"],
        [["**/Σ/**"], "ς/y"],
        [["lefthook.{yml,json}"], "LEFTHOOK.json"],
      ] as const
    ) {
      assert.equal(pathGlobMatcher(patterns)(candidate), true, `${patterns} ${candidate}`);
    }
  });
});

// Nor does Unicode normalization: macOS's file systems take `café` precomposed (NFC) and decomposed (NFD) for one
// name, and a name unpacked or checked out there may arrive in either form; here they are two files, each covered.
const NFC = "caf\u00e9";
const NFD = "cafe\u0301";

describe("the policy's globs ignore Unicode normalization", () => {
  test("a rule in one form matches a path in the other, with globs and folders", { timeout: 10_000 }, () => {
    for (const [rule, other] of [[NFC, NFD], [NFD, NFC]]) {
      assert.ok(pathGlobMatcher([`**/${rule}.key`])(`sub/${other}.key`), `${rule} ${other}`);
      assert.ok(pathGlobMatcher([`${rule}/**`])(`${other}/x.txt`));
      assert.ok(pathGlobMatcher([`${rule}/**`])(other));
      assert.ok(pathGlobMatcher([`**/caf?.key`])(`${other}.key`));
      assert.ok(pathGlobMatcher([`/srv/${rule}/*.json`])(`/srv/${other}/a.json`));
      assert.ok(pathGlobMatcher([`${rule.toUpperCase()}/**`])(`${other}/x`));
      assert.ok(!pathGlobMatcher([`${rule}/**`])(`cafe/x`));
    }
    assert.ok(isProtectedPath(`.vscode/${NFD}.json`));
  });

  test("the file tools refuse a file named in the other form, and leave it out", { timeout: 60_000 }, async () => {
    const workdir = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-nfd-")));
    const policy = { paths: { deny: [`**/${NFC}.key`, `priv${NFD.slice(3)}/**`] } };
    await fsp.writeFile(path.join(workdir, `${NFD}.key`), "NFD-SECRET-1\n");
    await fsp.mkdir(path.join(workdir, `priv${NFC.slice(3)}`));
    await fsp.writeFile(path.join(workdir, `priv${NFC.slice(3)}`, "x.txt"), "NFD-SECRET-2\n");
    const rules = PolicyRules.fromLayers([parsePolicyFile("p.json", JSON.stringify(policy), "project")], workdir);
    const session = new Session({ workspace: workdir, rules, autoConfirm: true });
    try {
      const box = new ToolBox().withDefaults("fs", "search");
      for (const p of [`${NFD}.key`, `${NFC}.key`, `priv${NFC.slice(3)}/x.txt`, `priv${NFD.slice(3)}/x.txt`]) {
        const read = await box.call(session, "read_file", { path: p });
        assert.equal(read.errorCode, "permission_denied", `${p}: ${JSON.stringify(read)}`);
      }
      for (
        const [name, args] of [
          ["grep", { pattern: "NFD", path: "." }],
          ["list_dir", { path: "." }],
          ["glob", { pattern: "**/*" }],
        ] as const
      ) {
        const result = await box.call(session, name, args);
        assert.equal(result.status, "success", JSON.stringify(result));
        const out = JSON.stringify(result.output).normalize("NFC");
        assert.ok(!/NFD-SECRET|café|privé/.test(out), out);
      }
    } finally {
      await session.close();
      await fsp.rm(workdir, { recursive: true, force: true });
    }
  });
});

describe("with real files in other letter cases", () => {
  let workdir: string;
  let session: Session;
  before(async () => {
    workdir = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-case-")));
    await fsp.mkdir(path.join(workdir, "Secrets"));
    await fsp.mkdir(path.join(workdir, "VENDOR"));
    await fsp.writeFile(path.join(workdir, ".ENV"), "CASE-SECRET-1\n");
    await fsp.writeFile(path.join(workdir, "Secrets", "key.txt"), "CASE-SECRET-2\n");
    await fsp.writeFile(path.join(workdir, "VENDOR", "lib.js"), "vendored\n");
    const rules = PolicyRules.fromLayers([parsePolicyFile("p.json", JSON.stringify(POLICY), "project")], workdir);
    session = new Session({ workspace: workdir, rules, autoConfirm: true });
  });
  after(async () => {
    await session.close();
    await fsp.rm(workdir, { recursive: true, force: true });
  });

  test("the file tools refuse or leave them out; a read-only one is not written", { timeout: 60_000 }, async () => {
    const box = new ToolBox().withDefaults("fs", "search");
    for (const p of [".ENV", ".env", "Secrets/key.txt", "secrets/key.txt"]) {
      const read = await box.call(session, "read_file", { path: p });
      assert.notEqual(read.status, "success", `${p}: ${JSON.stringify(read)}`);
    }
    for (const [name, args] of [["grep", { pattern: "CASE", path: "." }], ["list_dir", { path: "." }]] as const) {
      const result = await box.call(session, name, args);
      assert.equal(result.status, "success", JSON.stringify(result));
      assert.ok(!/CASE-SECRET|\.ENV|Secrets/.test(JSON.stringify(result.output)), JSON.stringify(result));
    }
    const write = await box.call(session, "write_file", { path: "VENDOR/lib.js", content: "changed\n" });
    assert.equal(write.errorCode, "permission_denied", JSON.stringify(write));
    assert.equal(await fsp.readFile(path.join(workdir, "VENDOR", "lib.js"), "utf8"), "vendored\n");
  });

  test("the shell sandbox masks them", {
    timeout: 60_000,
    skip: noBwrap,
  }, async () => {
    const box = new ToolBox().withDefaults("cmd");
    // Named outright, the command analysis refuses the line (it judges paths case-insensitively too).
    const named = await box.call(session, "bash", { command: "cat .ENV" });
    assert.equal(named.errorCode, "permission_denied", JSON.stringify(named));
    // Spelled at run time, the analysis cannot see the names (and asks, answered yes): the sandbox masks them.
    const result = await box.call(session, "bash", {
      command: 'for f in "$(printf .E%s NV)" "$(printf Sec%s rets/key.txt)"; do cat "$f"; done; ls -A ./S*; echo done',
    });
    const out = JSON.stringify(result);
    assert.match(out, /done/, out);
    assert.match(out, /"sandboxed":true/, out);
    assert.ok(!out.includes("CASE-SECRET"), out);
  });
});

describe("where an absolute glob's matches lie", () => {
  test("globBase: the part before the first name with a glob character, or the whole literal path", {
    timeout: 60_000,
  }, () => {
    assert.equal(globBase("/etc/app/**"), "/etc/app");
    assert.equal(globBase("/etc/app/*.json"), "/etc/app");
    assert.equal(globBase("/**/.env"), "/");
    assert.equal(globBase("/etc/toolfence/tokens.json"), "/etc/toolfence/tokens.json");
    assert.equal(globBase("/etc/a\\[1\\]/t.json"), "/etc");
  });

  test("literalGlob: a path with glob characters matches itself only, and globBase reads it whole", {
    timeout: 60_000,
  }, () => {
    const file = "/etc/a[1]/t*{x,y}.json";
    const glob = literalGlob(file);
    assert.ok(pathGlobMatcher([glob])(file));
    assert.ok(!pathGlobMatcher([glob])("/etc/a1/tx.json"));
    assert.equal(globBase(glob), "/etc");
  });

  test("generative: a name hasGlobSyntax calls plain matches itself and nothing else; an escape counts as syntax", {
    timeout: 60_000,
  }, () => {
    // The sandbox's protected-path plan takes such a name for a path to cover as it is written: `fo\\o` was taken for
    // a file named with a backslash, where the matcher reads it as `foo`.
    assert.equal(hasGlobSyntax("fo\\o"), true);
    assert.ok(pathGlobMatcher(["fo\\o"])("foo"));
    const alphabet = "ab./-_ *?[]{}!()+@\\,^$|";
    let seed = 20261203;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 2000; i++) {
      const name = Array.from(
        { length: 1 + Math.floor(next() * 8) },
        () => alphabet[Math.floor(next() * alphabet.length)],
      )
        .join("");
      if (hasGlobSyntax(name)) continue;
      const match = pathGlobMatcher([name]);
      assert.ok(match(name), name);
      assert.ok(!match(`${name}x`) && !match(`x${name}`), name);
    }
  });

  test("globMayMatchWithin: only where a match could lie in the folder or be the folder", { timeout: 60_000 }, () => {
    const cases: [string, string, boolean][] = [
      ["src/*.ts", "/w", true],
      ["/w/secrets/**", "/w", true],
      ["/etc/toolfence/tokens.json", "/w", false],
      ["/srv/store.db-*", "/srv/tenants", false],
      ["/srv/*/x.env", "/srv/tenants", true],
      ["/srv/*", "/srv/tenants", true],
      ["/**/id_rsa", "/srv/tenants", true],
      ["/s?v/**", "/srv/tenants", true],
      ["/x?v/*", "/srv/tenants", false],
      // With `**` anywhere below its base, it may: said without matching further.
      ["/x?v/**", "/srv/tenants", true],
    ];
    for (const [glob, folder, may] of cases) {
      assert.equal(globMayMatchWithin(glob, folder), may, `${glob} in ${folder}`);
    }
  });
});
