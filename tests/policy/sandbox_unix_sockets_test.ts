// Host unix sockets and a sandboxed command: a command in the sandbox
// cannot connect to a unix socket of the host outside its read view — one
// planted in the host's /tmp, /run, /var/run and /dev/shm, an abstract one
// (bound to the host's network namespace), and another command's egress
// proxy socket — while a socket inside its workspace (the control) answers.
// Each server counts the connections it accepts: none may arrive.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, realpath, rm } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { bubblewrapStatus, sandboxArgv } from "../../policy/sandbox.ts";
import { findSocat, SANDBOX_PROXY_SOCKET } from "../../policy/egress/forwarder.ts";
import { startEgressProxy } from "../../policy/egress/proxy.ts";

const hasBwrap = (await bubblewrapStatus()).path !== undefined;
const socat = await findSocat();

interface Planted {
  name: string;
  address: string;
  accepted: number;
  server: net.Server;
  sockets: Set<net.Socket>;
}

async function plant(name: string, address: string): Promise<Planted | undefined> {
  const planted: Planted = { name, address, accepted: 0, server: net.createServer(), sockets: new Set() };
  planted.server.on("connection", (socket) => {
    planted.accepted++;
    planted.sockets.add(socket);
    socket.end("host secret\n");
  });
  const listening = await new Promise<boolean>((resolve) => {
    planted.server.once("error", () => resolve(false));
    planted.server.listen(address, () => resolve(true));
  });
  return listening ? planted : undefined;
}

function run(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(argv[0], argv.slice(1), { timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === "number" ? error.code : -1) : 0, stdout, stderr });
    });
  });
}

// One shell line that tries every socket and prints `<name> connected` for each that answers.
function probeScript(targets: { name: string; socat: string }[]): string {
  return targets.map((t) =>
    `if echo hi | ${socat} -t 2 - ${t.socat} 2>/dev/null | grep -q 'host secret'; then echo "${t.name} connected"; ` +
    `else echo "${t.name} refused"; fi`
  ).join("\n");
}

describe("host unix sockets from inside the sandbox", { timeout: 120_000 }, () => {
  test(
    "sockets outside the read view, abstract sockets and another command's proxy are out of reach",
    { timeout: 90_000, skip: !hasBwrap || socat === undefined },
    async () => {
      const dir = await realpath(await mkdtemp(join(tmpdir(), "toolfence-unix-")));
      const workspace = join(dir, "workspace");
      const tag = `toolfence-test-${process.pid}-${Date.now()}`;
      const planted: Planted[] = [];
      const proxy = await startEgressProxy({
        listen: { path: join(dir, "other-command-proxy.sock") },
        judge: () => Promise.reject(new Error("not in this test")),
      });
      try {
        await mkdir(workspace);
        const candidates: [string, string][] = [
          ["host /tmp", join(dir, "host.sock")],
          ["/run", `/run/${tag}.sock`],
          ["/var/run", `/var/run/${tag}-v.sock`],
          ["/dev/shm", `/dev/shm/${tag}.sock`],
          ["abstract", `\0${tag}`],
          ["workspace (control)", join(workspace, "ok.sock")],
        ];
        for (const [name, address] of candidates) {
          const p = await plant(name, address);
          if (p) planted.push(p);
        }
        const targets = planted.map((p) => ({
          name: p.name,
          socat: p.address.startsWith("\0") ? `ABSTRACT-CONNECT:${p.address.slice(1)}` : `UNIX-CONNECT:${p.address}`,
        }));
        targets.push({ name: "another command's proxy", socat: `UNIX-CONNECT:${proxy.path}` });
        targets.push({ name: "the proxy's place inside", socat: `UNIX-CONNECT:${SANDBOX_PROXY_SOCKET}` });
        const command = await sandboxArgv(["/bin/sh", "-c", probeScript(targets)], {
          workdir: workspace,
          writable: [workspace],
          workspace,
          mode: "required",
        });
        let out;
        try {
          out = await run(command.argv);
        } finally {
          await command.release();
        }
        assert.equal(out.code, 0, out.stderr);
        const lines = out.stdout.trim().split("\n");
        // The control shows the probe can connect at all.
        assert.ok(lines.includes("workspace (control) connected"), out.stdout);
        for (const target of targets.filter((t) => t.name !== "workspace (control)")) {
          assert.ok(lines.includes(`${target.name} refused`), `${target.name}: ${out.stdout}`);
        }
        for (const p of planted.filter((p) => p.name !== "workspace (control)")) {
          assert.equal(p.accepted, 0, `${p.name} accepted a connection from inside`);
        }
        assert.ok(planted.length >= 3, `too few sockets could be planted: ${planted.map((p) => p.name)}`);
      } finally {
        await proxy.close();
        for (const p of planted) {
          for (const socket of p.sockets) socket.destroy();
          await new Promise((resolve) => p.server.close(resolve));
        }
        await rm(dir, { recursive: true, force: true });
      }
    },
  );
});
