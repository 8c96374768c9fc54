// Fault injection: the operating system refuses. A read-only folder, a
// read-only file, an unreadable file and an unreadable folder, used through the
// file tools by a child process for which the file modes really apply (root
// ignores them, so as root the child runs without CAP_DAC_OVERRIDE and
// CAP_DAC_READ_SEARCH). Every refusal must be a clear tool error that names
// the path, and nothing may change on disk.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import process from "node:process";
import { scriptArgv } from "./_runtime.ts";

let root: string;
before(async () => {
  root = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-perm-")));
  await fsp.mkdir(path.join(root, "rodir"));
  await fsp.writeFile(path.join(root, "rodir", "f.txt"), "original\n");
  await fsp.chmod(path.join(root, "rodir"), 0o555);
  await fsp.writeFile(path.join(root, "ro.txt"), "read-only\n", { mode: 0o444 });
  await fsp.writeFile(path.join(root, "secret.txt"), "secret\n", { mode: 0o000 });
  await fsp.mkdir(path.join(root, "locked"));
  await fsp.writeFile(path.join(root, "locked", "inner.txt"), "inner\n");
  await fsp.chmod(path.join(root, "locked"), 0o000);
});
after(async () => {
  for (const dir of ["rodir", "locked"]) await fsp.chmod(path.join(root, dir), 0o755).catch(() => {});
  await fsp.rm(root, { recursive: true, force: true });
});

function withoutDacOverride(argv: string[]): string[] | string {
  if (process.getuid?.() !== 0) return argv;
  try {
    execFileSync("setpriv", ["--version"], { stdio: "ignore" });
  } catch {
    return "running as root without setpriv: file modes cannot be enforced for a child";
  }
  return ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--", ...argv];
}

function runProbe(argv: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout!.on("data", (chunk) => out += chunk);
    child.on("error", reject);
    child.on("close", (code) => code === 0 ? resolve(out) : reject(new Error(`probe exited ${code}: ${out}`)));
  });
}

describe("permission errors from the operating system", () => {
  test(
    "read-only and unreadable files and folders give clear errors and change nothing",
    { timeout: 60_000 },
    async (t) => {
      const argv = withoutDacOverride(scriptArgv("_permission_probe", [root]));
      if (typeof argv === "string") return t.skip(argv);
      const { enforced, results } = JSON.parse(await runProbe(argv));
      assert.equal(enforced, "EACCES", "the child must be subject to file modes, or this test proves nothing");
      const refused = (name: string, code: string, mentions: string) => {
        const result = results[name];
        assert.equal(result.status, "error", `${name}: ${JSON.stringify(result)}`);
        assert.equal(result.errorCode, code, `${name}: ${JSON.stringify(result)}`);
        assert.ok(result.error.includes(mentions), `${name}: the message must name ${mentions}: ${result.error}`);
      };
      refused("overwrite in read-only folder", "os_permission_denied", "rodir/f.txt");
      refused("create in read-only folder", "os_permission_denied", "rodir/new.txt");
      refused("create folder in read-only folder", "os_permission_denied", "rodir/sub");
      refused("delete from read-only folder", "os_permission_denied", "rodir/f.txt");
      refused("read unreadable file", "os_permission_denied", "secret.txt");
      refused("list unreadable folder", "os_permission_denied", "locked");
      for (const name of ["read file in unreadable folder", "write file in unreadable folder"]) {
        const result = results[name];
        assert.equal(result.status, "error", `${name}: ${JSON.stringify(result)}`);
        assert.ok(["os_permission_denied", "path_unresolvable"].includes(result.errorCode), JSON.stringify(result));
        assert.ok(result.error.includes("locked/inner.txt"), result.error);
      }
      // A read-only file in a writable folder: replace-by-rename needs only the
      // folder's permission, so whatever the tool does it must say so plainly.
      const readOnlyFile = results["overwrite read-only file"];
      console.log(
        `os permissions: 8 refusals checked as an unprivileged writer; read-only file: ${JSON.stringify(readOnlyFile)}`,
      );
      // Nothing changed on disk.
      await fsp.chmod(path.join(root, "locked"), 0o755);
      assert.equal(await fsp.readFile(path.join(root, "rodir", "f.txt"), "utf8"), "original\n");
      assert.deepEqual((await fsp.readdir(path.join(root, "rodir"))).sort(), ["f.txt"]);
      assert.equal(await fsp.readFile(path.join(root, "secret.txt"), "utf8"), "secret\n");
      assert.equal(await fsp.readFile(path.join(root, "locked", "inner.txt"), "utf8"), "inner\n");
      const roFile = await fsp.readFile(path.join(root, "ro.txt"), "utf8");
      assert.ok(
        readOnlyFile.status === "success" ? roFile === "changed\n" : roFile === "read-only\n",
        `read-only file: ${readOnlyFile.status} but content ${JSON.stringify(roFile)}`,
      );
    },
  );
});
