// Runners, editors and interpreters are known under every name a system installs them by: with the sandbox off and
// an automatic answer, `python3.11 -c`, `perl5.36.0 -e`, `nodejs -e`, `tclsh8.6 x.tcl`, `wish`, `java X.java`,
// `editor -es`, `vimdiff -es`, `vim.basic -es` and `rview -es` wrote .npmrc on the automatic yes, while `python3`,
// `perl`, `node` and `vim` needed a person: the lists named one spelling of each.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtemp, readdir, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import fc from "fast-check";
import { decideCommand } from "../../../policy/shell/authorize_command.ts";
import { runsProjectCode } from "../../../policy/shell/allowlist.ts";
import { checkCommand } from "../../../policy/shell/check_command.ts";
import { installed } from "../../tools/cmd/_helpers.ts";

const SEED = 20261205;

async function personNeeded(line: string, folder: string): Promise<void> {
  const decided = await decideCommand(line, { workspaceRoot: folder, sandbox: "off" });
  assert.equal(decided.decision, "ask", `${line}: ${decided.reason}`);
  assert.equal(decided.prompt?.requirePerson, true, `${line}: ${decided.reason}`);
}

describe("programs under their other names", { timeout: 120_000 }, () => {
  test("an interpreter, editor or runner under another name needs a person without the sandbox", {
    timeout: 120_000,
  }, async () => {
    const folder = await realpath(await mkdtemp(join(tmpdir(), "toolfence-family-")));
    try {
      await writeFile(join(folder, "x.tcl"), "set f [open .npmrc w]; puts $f x; close $f; exit\n");
      await writeFile(
        join(folder, "X.java"),
        'class X { public static void main(String[] a) throws Exception { new java.io.FileWriter(".npmrc").close(); } }\n',
      );
      const vimWrite = `-es -c 'call writefile(["x"], ".npmrc")' -c 'qa!'`;
      const lines = [
        [`python3.11 -c "open('.npmrc', 'w')"`, "python3.11"],
        [`perl5.36.0 -e 'open(F, ">.npmrc")'`, "perl5.36.0"],
        [`nodejs -e "require('fs').writeFileSync('.npmrc', 'x')"`, "nodejs"],
        ["tclsh8.6 x.tcl", "tclsh8.6"],
        ["tclsh < x.tcl", "tclsh"],
        ["java X.java", "java"],
        [`editor ${vimWrite}`, "editor"],
        [`vimdiff ${vimWrite}`, "vimdiff"],
        [`vim.basic ${vimWrite}`, "vim.basic"],
        [`rview ${vimWrite}`, "rview"],
      ].filter(([, program]) => installed(program));
      for (const [line] of lines) await personNeeded(line, folder);
      // What the lines do when run: each writes .npmrc.
      for (const [line] of lines) {
        await rm(join(folder, ".npmrc"), { force: true });
        spawnSync("timeout", ["20", "bash", "-c", line], {
          cwd: folder,
          stdio: ["ignore", "ignore", "ignore"],
          env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: folder, TERM: "dumb" },
          timeout: 30_000,
        });
        assert.ok((await readdir(folder)).includes(".npmrc"), `${line} wrote .npmrc`);
      }
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  test("a compiler under another name is judged by the compiler's rule: -wrapper runs a program", {
    timeout: 120_000,
  }, async () => {
    // With allow rules for them and the sandbox off, `gcc-12 -wrapper mkdir,-p,--,made x.c -o x` and
    // `x86_64-linux-gnu-gcc -wrapper ...` ran mkdir (made appeared), while `gcc -wrapper ...` asked.
    const folder = await realpath(await mkdtemp(join(tmpdir(), "toolfence-family-")));
    try {
      await writeFile(join(folder, "x.c"), "int main(void) { return 0; }\n");
      const compilers = ["gcc-12", "x86_64-linux-gnu-gcc", "x86_64-linux-gnu-gcc-12", "g++-12", "clang-15"];
      for (const compiler of compilers) {
        for (const option of ["-wrapper mkdir,-p,--,made", "-Bdir", "-specs=s", "-fplugin=p.so", "@args"]) {
          const line = `${compiler} ${option} x.c -o x`;
          const check = await checkCommand(line, {
            allowlist: [compiler],
            sandbox: { available: false, reason: "test" },
            workspaceRoot: folder,
          });
          assert.equal(check.verdict, "ask", line);
        }
        // Its other options run as before in the sandbox (without it, what the sources `#include` is not seen).
        const plain = await checkCommand(`${compiler} -O2 -Wall x.c -o x`, {
          allowlist: [compiler],
          sandbox: { available: true },
          workspaceRoot: folder,
        });
        assert.equal(plain.verdict, "allow", `${compiler}: ${plain.reasons.join(" | ")}`);
      }
      // What the line does when run: the compiler runs the wrapper.
      const compiler = ["gcc-12", "x86_64-linux-gnu-gcc"].find(installed);
      if (compiler !== undefined) {
        spawnSync("bash", ["-c", `${compiler} -wrapper mkdir,-p,--,made x.c -o x`], {
          cwd: folder,
          stdio: "ignore",
          timeout: 60_000,
        });
        assert.ok((await readdir(folder)).includes("made"), `${compiler} ran the wrapper`);
      }
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  test(`every version and build spelling of a listed program is that program (seed ${SEED})`, {
    timeout: 120_000,
  }, async () => {
    const folder = await realpath(await mkdtemp(join(tmpdir(), "toolfence-family-")));
    try {
      const bases = ["python", "python3", "perl", "node", "ruby", "php", "lua", "tclsh", "bash", "zsh", "pip3"];
      const editors = ["vim", "vi", "less", "nano", "emacs", "env", "xargs"];
      const version = fc.tuple(
        fc.constantFrom("", "-"),
        fc.array(fc.integer({ min: 0, max: 99 }), { minLength: 1, maxLength: 3 }),
        fc.constantFrom("", "-x86_64-linux-gnu", "-config", ".exe"),
      ).map(([dash, numbers, suffix]) => `${dash}${numbers.join(".")}${suffix}`);
      const build = fc.constantFrom(".basic", ".tiny", ".nox", ".gtk3", ".distrib");
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...bases, ...editors),
          fc.oneof(version, build),
          async (base, tail) => {
            const program = `${base}${tail}`;
            if (bases.includes(base)) assert.ok(runsProjectCode([program, "x"]), program);
            await personNeeded(`${program} x .npmrc`, folder);
          },
        ),
        { seed: SEED, numRuns: 150 },
      );
      // Names that only end in digits or a dot are not taken for another program, and the listed ones run as before.
      // (base64 is a program whose effects the checker does not know: without the sandbox it needs a person for that,
      // not as a runner or an interpreter.)
      for (const line of ["base64 a", "md5sum a", "sha256sum a", "b2sum a"]) {
        const decided = await decideCommand(line, { workspaceRoot: folder, sandbox: "off" });
        if (line === "base64 a") {
          assert.match(decided.prompt?.message ?? "", /effects the checker does not know \(base64\)/);
        } else assert.notEqual(decided.prompt?.requirePerson, true, `${line}: ${decided.reason}`);
        assert.doesNotMatch(
          `${decided.reason} ${decided.prompt?.message}`,
          /code the project controls|runs the command it is given/,
          line,
        );
      }
      for (const line of ["python3 --version", "node --version", "cat a", "sed -n p a"]) {
        const decided = await decideCommand(line, { workspaceRoot: folder, sandbox: "off" });
        assert.equal(decided.decision, "allow", `${line}: ${decided.reason}`);
      }
      assert.equal(runsProjectCode(["base64", "a"]), false);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});
