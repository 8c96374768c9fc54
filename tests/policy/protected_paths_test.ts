import { describe, test } from "node:test";
import assert from "node:assert/strict";
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
