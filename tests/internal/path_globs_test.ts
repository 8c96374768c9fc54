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
import fc from "fast-check";
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
import { grepTool } from "../../tools/search/grep.ts";

const noBwrap = (await bubblewrapStatus()).path ? false : "needs bubblewrap";
const POLICY = { paths: { deny: ["**/.env", "secrets/**"], readOnly: ["vendor/**"] } };

// `text` case-folded as a file system that folds case takes it (ASCII as it is: the matcher's `i` folds that).
function folded(text: string): string {
  return /[\u0080-\uffff]/.test(text) ? text.normalize("NFC").toUpperCase().toLowerCase().normalize("NFC") : text;
}

// A spelling of `text` with each letter's case chosen by `bits`.
function spelled(text: string, bits: number): string {
  let i = 0;
  return [...text].map((c) => c.toLowerCase() === c.toUpperCase() ? c : (bits >> (i++ % 30)) & 1 ? c.toUpperCase() : c)
    .join("");
}

describe("the policy's globs ignore letter case", () => {
  test("generated spellings: every case of a matching path matches, every case of another path does not", {
    timeout: 60_000,
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
        // Compared in the NFC forms (the Kelvin sign is K there) and the case-folded ones (the long s is s there),
        // as the policy's matcher compares them.
        const forms = expanded.flatMap((p) => [p.normalize("NFC"), folded(p)]);
        const each = picomatchArray(forms, { dot: true, nocase: true });
        reference = (c) => each(c.normalize("NFC")) || each(folded(c));
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
        // Letters a case-folding file system takes for others: the long s for s, sharp s for ss, a ligature for
        // its letters (an ext4 casefold folder opens secrets/ for ſecrets/).
        [["secrets/**"], "ſecrets/key.txt"],
        [["**/.ssh/**"], "home/.ßh/id_ed25519"],
        [["**/.ssh/**"], "home/.SSH/id_ed25519"],
        [["**/config.json"], "app/conﬁg.json"],
        [["**/ſecret.txt"], "a/SECRET.txt"],
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
  test("a rule in one form matches a path in the other, with globs and folders", { timeout: 60_000 }, () => {
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
    // The long s: a case-folding file system (ext4 or tmpfs casefold, NTFS) takes ſecrets for secrets.
    await fsp.mkdir(path.join(workdir, "\u017fecrets"));
    await fsp.writeFile(path.join(workdir, "\u017fecrets", "key.txt"), "CASE-SECRET-3\n");
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
    for (const p of [".ENV", ".env", "Secrets/key.txt", "secrets/key.txt", "\u017fecrets/key.txt"]) {
      const read = await box.call(session, "read_file", { path: p });
      assert.notEqual(read.status, "success", `${p}: ${JSON.stringify(read)}`);
    }
    for (const [name, args] of [["grep", { pattern: "CASE", path: "." }], ["list_dir", { path: "." }]] as const) {
      const result = await box.call(session, name, args);
      assert.equal(result.status, "success", JSON.stringify(result));
      assert.ok(!/CASE-SECRET|\.ENV|Secrets|\u017fecrets/.test(JSON.stringify(result.output)), JSON.stringify(result));
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
      command:
        'for f in "$(printf .E%s NV)" "$(printf Sec%s rets/key.txt)" "$(printf \'\\305\\277ecrets/key.txt\')"; ' +
        'do cat "$f"; done; ls -A ./S*; echo done',
    });
    const out = JSON.stringify(result);
    assert.match(out, /done/, out);
    assert.match(out, /"sandboxed":true/, out);
    assert.ok(!out.includes("CASE-SECRET"), out);
  });
});

// A name may hold any character but `/` and NUL. picomatch writes `**` with `.`, which matches no line break unless
// the expression has the `s` flag: until 2026-12-06 a folder named `x<LF>y` took `x<LF>y/.env` out of `**/.env`, and
// read_file, grep, glob and a sandboxed `grep -ra` printed the file (so did CR, U+2028 and U+2029).
const BREAKS = ["\n", "\r", "\u2028", "\u2029", "\r\n"];

describe("the policy's globs match names holding line breaks", () => {
  test("generative: a rule matches a path whatever characters its other names hold", { timeout: 60_000 }, () => {
    const name = fc.string({ unit: fc.constantFrom("a", ".", "-", " ", "*", "[", "{", ...BREAKS), minLength: 1 })
      .filter((n) => n !== "." && n !== "..");
    fc.assert(
      fc.property(name, name, (a, b) => {
        assert.ok(pathGlobMatcher(["**/.env"])(`${a}/.env`), JSON.stringify(a));
        assert.ok(pathGlobMatcher(["**/.env"])(`${a}/${b}/.env`), JSON.stringify([a, b]));
        assert.ok(pathGlobMatcher(["secrets/**"])(`secrets/${a}`), JSON.stringify(a));
        assert.ok(pathGlobMatcher(["secrets/**"])(`secrets/${a}/${b}`), JSON.stringify([a, b]));
        assert.ok(pathGlobMatcher(["**/*.key"])(`${a}/${b}.key`), JSON.stringify([a, b]));
        assert.ok(pathGlobMatcher([".git/hooks/**"])(`.git/hooks/${a}`), JSON.stringify(a));
        assert.ok(isProtectedPath(`${a}/.git/hooks/pre-commit`), JSON.stringify(a));
      }),
      { seed: 20261206, numRuns: 2000 },
    );
  });

  test("the file tools and the shell sandbox hide a denied file in a folder named with one", {
    timeout: 90_000,
  }, async () => {
    const workdir = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-breaks-")));
    const rules = PolicyRules.fromLayers([parsePolicyFile("p.json", JSON.stringify(POLICY), "project")], workdir);
    const session = new Session({ workspace: workdir, rules, autoConfirm: true });
    try {
      await fsp.mkdir(path.join(workdir, "secrets"));
      for (const [i, brk] of BREAKS.entries()) {
        await fsp.mkdir(path.join(workdir, `x${brk}${i}`));
        await fsp.writeFile(path.join(workdir, `x${brk}${i}`, ".env"), `BREAK-SECRET-${i}\n`);
        await fsp.writeFile(path.join(workdir, "secrets", `k${brk}${i}`), `BREAK-SECRET-D${i}\n`);
      }
      const box = new ToolBox().withDefaults("fs", "search", "cmd");
      for (const [i, brk] of BREAKS.entries()) {
        for (const p of [`x${brk}${i}/.env`, `secrets/k${brk}${i}`]) {
          for (const [name, args] of [["read_file", { path: p }], ["file_info", { path: p }]] as const) {
            const read = await box.call(session, name, args);
            assert.equal(read.errorCode, "permission_denied", `${name} ${JSON.stringify(p)}: ${JSON.stringify(read)}`);
          }
        }
      }
      for (
        const [name, args] of [
          ["grep", { pattern: "BREAK", path: ".", skip_ignored: false }],
          ["glob", { pattern: "**/.env", skip_ignored: false }],
          ["glob", { pattern: "**/*", type: "any", skip_ignored: false }],
        ] as const
      ) {
        const result = await box.call(session, name, args);
        assert.equal(result.status, "success", JSON.stringify(result));
        assert.ok(!/BREAK-SECRET|\.env/.test(JSON.stringify(result.output)), JSON.stringify(result.output));
      }
      const builtin = new ToolBox().register(grepTool({ engine: "builtin" }));
      const searched = await builtin.call(session, "grep", { pattern: "BREAK", path: ".", skip_ignored: false });
      assert.equal(searched.status, "success", JSON.stringify(searched));
      assert.ok(!/BREAK-SECRET|\.env/.test(JSON.stringify(searched.output)), JSON.stringify(searched.output));
      if (!noBwrap) {
        // Not named by the line (the analysis would refuse it): the sandbox's masks must cover it.
        const ran = await box.call(session, "bash", { command: "grep -ra BREAK . 2>/dev/null; echo done" });
        const out = JSON.stringify(ran);
        assert.match(out, /"sandboxed":true/, out);
        assert.match(out, /done/, out);
        assert.ok(!out.includes("BREAK-SECRET"), out);
      }
    } finally {
      await session.close();
      await fsp.rm(workdir, { recursive: true, force: true });
    }
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
