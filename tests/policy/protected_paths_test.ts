import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_PROTECTED_PATHS, isProtectedPath, mayContainProtectedPath } from "../../policy/protected_paths.ts";

describe("protected paths", () => {
  test("files that steer programs are protected, at the depths where programs read them", { timeout: 60_000 }, () => {
    for (
      const p of [
        ".git/config",
        ".git/hooks/pre-commit",
        ".git/info/attributes",
        ".git",
        "vendor/lib/.git/config",
        ".gitmodules",
        "docs/.gitattributes",
        ".npmrc",
        "packages/a/.npmrc",
        ".yarnrc.yml",
        "bunfig.toml",
        ".pypirc",
        "pip.conf",
        ".bashrc",
        ".profile",
        ".zshrc",
        ".vscode",
        ".vscode/settings.json",
        ".idea/workspace.xml",
        ".mcp.json",
        ".envrc",
        "toolfence.json",
      ]
    ) assert.equal(isProtectedPath(p), true, p);
  });

  test("files a tool loads as configuration or runs, in the folder it runs in or one below", {
    timeout: 60_000,
  }, () => {
    for (
      const p of [
        // Mercurial's hooks and extensions, Jujutsu's tools.
        ".hg/hgrc",
        "vendor/lib/.hg/hgrc",
        ".hg/sharedpath",
        ".jj/repo/config.toml",
        // direnv, mise and asdf read every folder from the one a command runs in up.
        "packages/a/.envrc",
        ".tool-versions",
        "packages/a/.tool-versions",
        "mise.toml",
        ".mise.toml",
        "mise.local.toml",
        ".mise.development.toml",
        ".config/mise.toml",
        ".config/mise/config.toml",
        ".config/mise/conf.d/a.toml",
        ".mise/config.toml",
        "mise/config.toml",
        ".rtx.toml",
        // The programs package managers and rustup run.
        "rust-toolchain",
        "crates/a/rust-toolchain.toml",
        ".yarn/releases/yarn-4.1.0.cjs",
        ".yarn/plugins/plugin.cjs",
        ".pnpmfile.cjs",
        ".bundle/config",
        // Start-up files read from the folder an interpreter or debugger runs in.
        ".pdbrc",
        "src/.irbrc",
        ".pryrc",
        // Editors and agents opened on a folder below the root.
        ".zed/settings.json",
        ".helix/languages.toml",
        ".nvim.lua",
        ".dir-locals.el",
        "packages/a/.mcp.json",
        "packages/a/.claude/settings.json",
        "opencode.json",
        ".aider.conf.yml",
        ".continue/mcpServers/a.yaml",
        ".kiro/settings/mcp.json",
        "hk.pkl",
        // A home folder's, should the workspace be one.
        ".gitconfig",
        ".ssh/config",
        ".config/git/config",
        ".kube/config",
      ]
    ) assert.equal(isProtectedPath(p), true, p);
    for (const p of ["mise.md", "src/mise.ts", ".jj/repo/store/x", "toolchain.toml", "a/.gitconfig", "a/.ssh/config"]) {
      assert.equal(isProtectedPath(p), false, p);
    }
  });

  test("rust-toolchain.toml's `path` makes cargo run another program (why it is protected)", {
    timeout: 60_000,
    skip: spawnSync("rustup", ["--version"], { encoding: "utf8" }).status !== 0,
  }, async () => {
    const dir = await mkdtemp(join(tmpdir(), "toolfence-toolchain-"));
    try {
      await mkdir(join(dir, "tc", "bin"), { recursive: true });
      await writeFile(join(dir, "tc", "bin", "cargo"), `#!/bin/sh\necho RAN-FROM-TOOLCHAIN-FILE\n`, { mode: 0o755 });
      await writeFile(join(dir, "rust-toolchain.toml"), `[toolchain]\npath = "${join(dir, "tc")}"\n`);
      const run = spawnSync("cargo", ["--version"], { cwd: dir, encoding: "utf8", timeout: 30_000 });
      assert.match(run.stdout, /RAN-FROM-TOOLCHAIN-FILE/);
      assert.equal(isProtectedPath("rust-toolchain.toml"), true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("case does not matter, since some file systems ignore it", { timeout: 60_000 }, () => {
    assert.equal(isProtectedPath(".GIT/Config"), true);
    assert.equal(isProtectedPath(".NpmRc"), true);
  });

  test("ordinary files are not protected", { timeout: 60_000 }, () => {
    for (const p of ["src/main.ts", ".git/objects/ab/cdef", "README.md", "a/.bashrc", "npmrc", ".npmrc.bak", ""]) {
      assert.equal(isProtectedPath(p), false, p);
    }
  });

  test("the list is data: extra patterns protect more", { timeout: 60_000 }, () => {
    const patterns = [...DEFAULT_PROTECTED_PATHS, "Makefile"];
    assert.equal(isProtectedPath("Makefile"), false);
    assert.equal(isProtectedPath("Makefile", patterns), true);
    assert.equal(isProtectedPath(".npmrc", ["Makefile"]), false);
  });

  test("folders under which a protected path can lie", { timeout: 60_000 }, () => {
    assert.equal(mayContainProtectedPath(""), true);
    assert.equal(mayContainProtectedPath(".git"), true);
    assert.equal(mayContainProtectedPath(".git/hooks"), true);
    assert.equal(mayContainProtectedPath("src", ["**/.npmrc"]), true);
    assert.equal(mayContainProtectedPath("src", [".vscode/**"]), false);
    assert.equal(mayContainProtectedPath(".vscode", [".vscode/**"]), true);
  });
});
