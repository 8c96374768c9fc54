import { afterEach, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import fsp from "node:fs/promises";
import net from "node:net";
import path from "node:path";
import process from "node:process";
import { bubblewrapStatus, sandboxArgv } from "../../policy/sandbox.ts";
import { tmpfsSizeArgs } from "../../policy/limits.ts";
import { Workspace } from "../../policy/workspace.ts";
import { exists, type Layout, makeLayout, rejectsWith } from "./_fixtures.ts";
import { runSandboxed } from "./_sandbox_run.ts";
import { IS_DENO } from "../_runtime.ts";

const status = await bubblewrapStatus();
const skip = status.path === undefined ? `bubblewrap is unavailable here: ${status.reason}` : false;
const sizes = status.path !== undefined && (await tmpfsSizeArgs(status.path, 1)).length > 0;

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(argv: string[]): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(argv[0], argv.slice(1), { timeout: 30_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : null;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

let L: Layout;
let ws: Workspace;
let temp: string;

async function sandboxed(script: string, allowNet = false): Promise<Ran> {
  const wrapped = await sandboxArgv(["bash", "-c", script], {
    workdir: ws.workdir,
    writable: [ws.workdir, temp],
    allowNet,
    mode: "required",
  });
  assert.equal(wrapped.sandboxed, true);
  return runSandboxed(wrapped);
}

beforeEach(async () => {
  L = await makeLayout();
  ws = new Workspace(L.workdir, { tempParent: L.tempParent });
  temp = await ws.tempDir();
});
afterEach(async () => {
  await ws.dispose();
  await L.cleanup();
});

describe("sandboxArgv under bubblewrap", { skip }, () => {
  test(
    "commands can write in the workspace and the temp dir, and start in the workdir",
    { timeout: 60_000 },
    async () => {
      const ran = await sandboxed(`pwd; echo inside > made.txt && echo temp > ${temp}/t.txt`);
      assert.equal(ran.code, 0, ran.stderr);
      assert.equal(ran.stdout.trim(), L.workdir);
      assert.equal(await fsp.readFile(path.join(L.workdir, "made.txt"), "utf8"), "inside\n");
      assert.equal(await fsp.readFile(path.join(temp, "t.txt"), "utf8"), "temp\n");
    },
  );

  test("commands cannot write outside the workspace; nothing appears there", { timeout: 60_000 }, async () => {
    await fsp.mkdir("/var/tmp", { recursive: true });
    const marker = `toolfence-sandbox-${Date.now()}`;
    const targets = [
      path.join(L.outside, "x"),
      path.join(L.secrets, "x2"),
      `/root/${marker}`,
      `/var/tmp/${marker}`,
      `/usr/${marker}`,
    ];
    const home = process.env.HOME ?? "/root";
    for (const target of targets) {
      const ran = await sandboxed(`touch ${target}`);
      // The home folder is a private writable folder inside: the write succeeds there and vanishes.
      if (!target.startsWith(`${home}/`)) assert.notEqual(ran.code, 0, `touch ${target} succeeded in the sandbox`);
      assert.equal(await exists(target), false, target);
    }
    // Through a symlink planted in the workspace, too.
    await fsp.symlink(L.outside, path.join(L.workdir, "dirlink"));
    const ran = await sandboxed("echo x > dirlink/through-link");
    assert.notEqual(ran.code, 0);
    assert.equal(await exists(path.join(L.outside, "through-link")), false);
  });

  test(
    "/tmp is private: writes vanish, and the host's /tmp is invisible except the workspace",
    { timeout: 60_000 },
    async () => {
      const marker = `/tmp/toolfence-private-${Date.now()}`;
      const ran = await sandboxed(
        `echo x > ${marker} && cat ${marker} && ls ${L.outside} 2>&1; cat ${L.outside}/secret.txt`,
      );
      assert.match(ran.stdout, /^x\n/);
      assert.equal(await exists(marker), false);
      if (L.root.startsWith("/tmp/")) {
        // The fixture lies under /tmp: its folders outside the workspace are hidden, the workspace is bound in.
        assert.doesNotMatch(ran.stdout, /secret outside/);
      }
      assert.equal((await sandboxed("cat file.txt")).stdout, "inside\n");
    },
  );

  test("no network unless allowed", { timeout: 60_000 }, async () => {
    const server = net.createServer((socket) => {
      // bash hangs up without reading; Node reports that reset on the socket, and unhandled it would end the test.
      socket.on("error", () => {});
      socket.end("hello\n");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as net.AddressInfo).port;
    const connect = `exec 3<>/dev/tcp/127.0.0.1/${port} && echo connected`;
    try {
      const outsideRun = await run(["bash", "-c", connect]);
      assert.equal(outsideRun.stdout.trim(), "connected", "the server must be reachable without the sandbox");
      const inside = await sandboxed(connect);
      assert.notEqual(inside.code, 0);
      assert.doesNotMatch(inside.stdout, /connected/);
      const allowed = await sandboxed(connect, true);
      assert.equal(allowed.stdout.trim(), "connected", allowed.stderr);
    } finally {
      server.close();
    }
  });

  test(
    "the root is read-only and every tmpfs a command may write is capped at tmpSize (no 12 GiB home or root)",
    { timeout: 60_000, skip: sizes ? false : "this bubblewrap takes no --size" },
    async () => {
      const wrapped = await sandboxArgv([
        "bash",
        "-c",
        [
          // Every writable tmpfs has a size; a read-only one (a mask) may have none.
          `awk '$(NF-2) == "tmpfs" && $6 ~ /^rw/ && $NF !~ /size=4096k/ { print "uncapped: " $5 " " $NF }' /proc/self/mountinfo`,
          'for d in / /tmp /dev/shm "$HOME"; do head -c 8M /dev/zero > "$d/fill" 2>/dev/null; echo "$d $(stat -c %s "$d/fill" 2>/dev/null || echo none)"; done',
        ].join("\n"),
      ], {
        workdir: ws.workdir,
        writable: [ws.workdir, temp],
        mode: "required",
        tmpSize: 4 * 1024 * 1024,
      });
      const ran = await runSandboxed(wrapped);
      await wrapped.release();
      const home = process.env.HOME ?? "/root";
      // Before: `/ none` only for a user who does not own bubblewrap's root, and the home folder took all 8 MiB.
      assert.equal(ran.stdout, `/ none\n/tmp 4194304\n/dev/shm 4194304\n${home} 4194304\n`, ran.stderr);
    },
  );

  test("all capabilities are dropped, even for root", { timeout: 60_000 }, async () => {
    const ran = await sandboxed("grep CapEff /proc/self/status");
    assert.match(ran.stdout, /CapEff:\s+0+\n/);
    const remount = await sandboxed("mount -o remount,rw / 2>&1");
    assert.notEqual(remount.code, 0);
  });

  test("the sandboxed process tree dies with the process that started it", { timeout: 60_000 }, async () => {
    const marker = `${900 + Math.floor(Math.random() * 99)}.${Date.now()}`;
    // This file runs as .ts under Deno and, from the npm build, as .js under Node; the parent imports the same kind.
    const extension = path.extname(new URL(import.meta.url).pathname);
    const sandboxModule = new URL(`../../policy/sandbox${extension}`, import.meta.url).href;
    const parentScript = `
      import { spawn } from "node:child_process";
      import { sandboxArgv } from ${JSON.stringify(sandboxModule)};
      const { argv } = await sandboxArgv(["bash", "-c", "sleep ${marker}; true"], {
        workdir: ${JSON.stringify(L.workdir)}, writable: [${JSON.stringify(L.workdir)}], mode: "required",
      });
      spawn(argv[0], argv.slice(1), { stdio: "ignore" });
      console.log("started");
      setInterval(() => {}, 1000);
    `;
    const evalArgs = IS_DENO ? ["eval", parentScript] : ["--input-type=module", "--eval", parentScript];
    const parent = spawn(process.execPath, evalArgs, { stdio: ["ignore", "pipe", "inherit"] });
    await new Promise<void>((resolve, reject) => {
      parent.stdout!.on("data", (chunk) => String(chunk).includes("started") && resolve());
      parent.once("exit", () => reject(new Error("the parent exited early")));
    });
    const sleeping = async () => {
      for (const pid of await fsp.readdir("/proc")) {
        if (!/^\d+$/.test(pid)) continue;
        const cmdline = await fsp.readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
        if (cmdline.startsWith("sleep\0") && cmdline.includes(marker)) return true;
      }
      return false;
    };
    let seen = false;
    for (let i = 0; i < 100 && !seen; i++) {
      seen = await sleeping();
      if (!seen) await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(seen, "the sandboxed sleep never started");
    parent.kill("SIGKILL");
    let alive = true;
    for (let i = 0; i < 100 && alive; i++) {
      await new Promise((r) => setTimeout(r, 50));
      alive = await sleeping();
    }
    assert.equal(alive, false, "the sandboxed process outlived its parent");
  });

  test("binds come after the private /tmp, parents before children; the workdir is kept when read-only", {
    timeout: 60_000,
  }, async () => {
    const nested = path.join(L.workdir, "sub");
    const { argv } = await sandboxArgv(["true"], {
      workdir: path.join(L.root, "elsewhere"),
      writable: [nested, L.workdir],
      mode: "required",
    });
    const tmpfs = argv.findIndex((a, i) => a === "--tmpfs" && argv[i + 1] === "/tmp");
    const binds = argv.flatMap((a, i) => a === "--bind" ? [argv[i + 1]] : []);
    assert.deepEqual(binds, [L.workdir, nested]);
    assert.ok(argv.indexOf("--bind") > tmpfs);
    const workdirBind = argv.findIndex((a, i) => a === "--ro-bind" && argv[i + 1] === path.join(L.root, "elsewhere"));
    assert.ok(workdirBind > tmpfs, "a read-only workdir under /tmp is bound after the tmpfs");
    // The command last, behind the shell that closes inherited descriptors.
    const command = argv.slice(argv.indexOf("--") + 1);
    assert.deepEqual([command[0], command[1], ...command.slice(-2)], ["/bin/bash", "-c", "bash", "true"]);
    assert.match(command[2], /exec \{toolfence_fd\}<&-.*exec "\$@"$/);
    assert.ok(argv.includes("--die-with-parent") && argv.includes("--new-session") && argv.includes("--unshare-all"));
    assert.ok(!argv.includes("--share-net"));
  });
});

describe("sandboxArgv modes", () => {
  test("off returns the command unchanged", { timeout: 60_000 }, async () => {
    const off = await sandboxArgv(["ls", "-la"], { workdir: "/w", writable: ["/w"], mode: "off" });
    assert.deepEqual([off.argv, off.sandboxed], [["ls", "-la"], false]);
    assert.match(off.reason ?? "", /off/);
    assert.deepEqual(await off.release(), []);
  });

  test(
    "auto sandboxes exactly when bubblewrap works; required refuses clearly when it does not",
    { timeout: 60_000 },
    async () => {
      const options = { workdir: L.workdir, writable: [L.workdir] };
      const auto = await sandboxArgv(["true"], { ...options, mode: "auto" });
      assert.equal(auto.sandboxed, status.path !== undefined);
      if (status.path === undefined) {
        const error = await rejectsWith(sandboxArgv(["true"], { ...options, mode: "required" }), "sandbox_unavailable");
        assert.match(error.message, /required but unavailable/);
      } else {
        assert.equal((await run(auto.argv)).code, 0);
      }
    },
  );

  test("relative writable paths are refused", { timeout: 60_000 }, async () => {
    await assert.rejects(sandboxArgv(["true"], { workdir: L.workdir, writable: ["rel"], mode: "auto" }), TypeError);
  });
});

describe(
  "the programs the server runs outside the sandbox",
  { skip: skip || (IS_DENO ? false : "runs deno eval") },
  () => {
    test("a bwrap or prlimit planted in a PATH folder inside the working folder is never run", {
      timeout: 60_000,
    }, async () => {
      // Before: started with cwd the workspace and its node_modules/.bin first on PATH (as `npm run` does), the
      // server took the workspace's `bwrap` (PATH came before /usr/bin): a sandboxed command could plant it, and from
      // the next start on it ran outside the sandbox on every command (it read /etc/shadow), the results saying
      // `sandboxed: true`.
      const ws = await fsp.realpath(await fsp.mkdtemp(path.join(process.env.TMPDIR ?? "/tmp", "toolfence-planted-")));
      try {
        const bin = path.join(ws, "node_modules", ".bin");
        await fsp.mkdir(bin, { recursive: true });
        for (const name of ["bwrap", "prlimit"]) {
          await fsp.writeFile(path.join(bin, name), `#!/bin/sh\necho ${name} >> ${ws}/ran\nexit 0\n`, { mode: 0o755 });
        }
        const root = path.resolve(import.meta.dirname!, "../..");
        const script = `import { bubblewrapStatus } from "${root}/policy/sandbox.ts";
        import { findPrlimit } from "${root}/policy/_limits.ts";
        console.log(JSON.stringify({ bwrap: (await bubblewrapStatus()).path ?? null, prlimit: await findPrlimit() ?? null }));`;
        const scriptFile = path.join(ws + "-probe.ts");
        await fsp.writeFile(scriptFile, script);
        // With every permission, and under `deno task serve`'s narrow read (no /usr): before 2026-12-05 the server
        // could not look at /usr/bin/bwrap there and started the bare name `bwrap`, which the runtime looked up
        // through the whole PATH (relative folders too): the workspace's ran outside the sandbox at every start.
        const flagSets = [["-A"], [
          "--no-prompt",
          `--allow-read=${ws}`,
          `--allow-write=${ws}`,
          "--allow-run",
          "--allow-env",
        ]];
        for (const flags of flagSets) {
          const out = await new Promise<string>((resolve, reject) =>
            execFile(
              process.execPath,
              ["run", "--config", path.join(root, "deno.json"), ...flags, scriptFile],
              {
                cwd: ws,
                env: { ...process.env, PATH: `node_modules/.bin:${bin}:${process.env.PATH}` },
                timeout: 50_000,
              },
              (error, stdout, stderr) => error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout),
            )
          );
          const found = JSON.parse(out.trim().split("\n").at(-1)!) as { bwrap: string | null; prlimit: string | null };
          assert.ok(found.bwrap !== null && path.isAbsolute(found.bwrap) && !found.bwrap.startsWith(ws), out);
          assert.ok(found.prlimit === null || (path.isAbsolute(found.prlimit) && !found.prlimit.startsWith(ws)), out);
          assert.equal(await exists(path.join(ws, "ran")), false, `no planted program ran (${flags.join(" ")})`);
        }
      } finally {
        await fsp.rm(ws, { recursive: true, force: true });
        await fsp.rm(ws + "-probe.ts", { force: true });
      }
    });
  },
);
