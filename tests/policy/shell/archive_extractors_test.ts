// What an archiver extracts gets the names its archive holds, which the line never shows: with the sandbox off and an
// automatic answer, `ar x e.a`, `jar xf e.zip` and `dpkg-deb -x e.deb .` wrote .npmrc and .git/hooks/pre-commit on
// the automatic yes (they were programs the analysis did not know, judged by the words they name alone).
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decideCommand } from "../../../policy/shell/authorize_command.ts";
import { installed } from "../../tools/cmd/_helpers.ts";

function run(line: string, cwd: string): void {
  spawnSync("bash", ["-c", line], { cwd, stdio: "ignore", timeout: 60_000 });
}

describe("archivers the analysis knows", { timeout: 120_000 }, () => {
  test("what ar, jar, gpgtar and dpkg-deb extract may be a protected path: without the sandbox a person decides", {
    timeout: 120_000,
  }, async () => {
    const folder = await realpath(await mkdtemp(join(tmpdir(), "toolfence-extract-")));
    const source = join(folder, "pk");
    try {
      // The archives, each holding .npmrc (and the package a git hook).
      await mkdir(join(source, "DEBIAN"), { recursive: true });
      await mkdir(join(source, ".git", "hooks"), { recursive: true });
      await writeFile(join(source, "DEBIAN", "control"), "Package: e\nVersion: 1\nArchitecture: all\nMaintainer: a\n");
      await writeFile(join(source, ".git", "hooks", "pre-commit"), "#!/bin/sh\n");
      await writeFile(join(source, ".npmrc"), "registry=http://evil.example/\n");
      const lines: string[] = [];
      if (installed("ar")) {
        run("ar rc ../e.a .npmrc", source);
        lines.push("ar x e.a", "ar xo e.a", "ar -x e.a");
      }
      if (installed("jar") && installed("zip")) {
        run("zip -q ../e.zip .npmrc", source);
        lines.push("jar xf e.zip", "jar -x -f e.zip");
      }
      // gpgtar extracts into ARCHIVE_1_/, or -C's folder (before, `gpgtar -d --skip-crypto -C . e.gtar` wrote .npmrc).
      if (installed("gpgtar")) {
        run("gpgtar --create --skip-crypto -o ../e.gtar .npmrc", source);
        lines.push("gpgtar -d --skip-crypto -C . e.gtar", "gpgtar --decrypt --skip-crypto --directory=sub e.gtar");
      }
      if (installed("dpkg-deb")) {
        run("dpkg-deb -b pk e.deb", folder);
        lines.push("dpkg-deb -x e.deb .", "dpkg-deb --extract e.deb sub", "dpkg-deb -R e.deb sub");
      }
      await rm(source, { recursive: true, force: true });
      assert.ok(lines.length > 0, "no archiver to try");
      for (const line of lines) {
        const decided = await decideCommand(line, { workspaceRoot: folder, sandbox: "off" });
        assert.equal(decided.decision, "ask", `${line}: ${decided.reason}`);
        assert.equal(decided.prompt?.requirePerson, true, `${line}: ${decided.reason}`);
        assert.match(decided.reason, /protected/, line);
      }
      // What the lines do when run: each writes .npmrc where it extracts.
      for (const line of lines) {
        for (const made of [".npmrc", ".git", "sub"]) await rm(join(folder, made), { recursive: true, force: true });
        if (line.includes("--directory=sub")) await mkdir(join(folder, "sub"));
        run(line, folder);
        const where = line.includes("sub") ? join(folder, "sub") : folder;
        assert.ok(existsSync(join(where, ".npmrc")), `${line} wrote .npmrc`);
      }
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});
