// The relay inside a sandbox's network namespace, each kind this machine has
// (the resident Perl relay, socat), under real bubblewrap: many connections at
// once, each 1 MB intact, through the proxy's unix socket; the command keeps
// its stdout and its exit status; a destination the proxy refuses gets the
// proxy's 403 through the relay. And the perl the server runs (once, to probe
// the constants) is never one a PATH leads to, nor one a PERL5LIB feeds.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { chmod, mkdir, mkdtemp, readdir, realpath, rm, writeFile } from "node:fs/promises";
import process from "node:process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bubblewrapStatus, sandboxArgv } from "../../../policy/sandbox.ts";
import { findForwarder, findSocat, type Forwarder } from "../../../policy/egress/forwarder.ts";
import { startEgressProxy } from "../../../policy/egress/proxy.ts";

const hasBwrap = (await bubblewrapStatus()).path !== undefined;
const chosen = await findForwarder();
const socat = await findSocat();
const forwarders: Forwarder[] = [
  ...(chosen ? [chosen] : []),
  ...(socat && chosen?.kind !== "socat" ? [{ kind: "socat" as const, path: socat }] : []),
];
const MB = 1024 * 1024;
const CONNECTIONS = 6;

function run(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(argv[0], argv.slice(1), { timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === "number" ? error.code : -1) : 0, stdout, stderr });
    });
  });
}

describe("the relay inside the sandbox", { timeout: 150_000 }, () => {
  for (const kind of ["perl", "socat"] as const) {
    const forwarder = forwarders.find((f) => f.kind === kind);
    test(`${kind}: ${CONNECTIONS} connections at once, the command's output and exit status kept`, {
      timeout: 70_000,
      skip: !hasBwrap ? "bubblewrap is unavailable here" : forwarder ? false : `${kind} is not installed`,
    }, async () => {
      const payload = Buffer.alloc(MB, "r");
      const server = http.createServer((_req, res) => res.writeHead(200, { "content-length": MB }).end(payload));
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      const port = (server.address() as AddressInfo).port;
      const dir = await realpath(await mkdtemp(join(tmpdir(), "toolfence-relay-")));
      const workspace = join(dir, "workspace");
      await mkdir(workspace);
      const judged: string[] = [];
      const proxy = await startEgressProxy({
        listen: { path: join(dir, "proxy.sock") },
        judge: (_scheme, host, asked) => {
          judged.push(`${host}:${asked}`);
          return asked === String(port)
            ? Promise.resolve({ addresses: ["127.0.0.1"] })
            : Promise.reject(new Error("not on the list"));
        },
      });
      try {
        const url = `http://127.0.0.1:${port}/file`;
        const script = [
          `for i in $(seq ${CONNECTIONS}); do`,
          `  curl -sS --noproxy '' -x http://127.0.0.1:3128 -o /dev/null -w '%{http_code} %{size_download}\\n' ${url} &`,
          "done",
          "wait",
          `curl -sS --noproxy '' -x http://127.0.0.1:3128 -o /dev/null -w '%{http_code}\\n' http://127.0.0.1:1/`,
          "exit 7",
        ].join("\n");
        const command = await sandboxArgv(["/bin/sh", "-c", script], {
          workdir: workspace,
          writable: [workspace],
          workspace,
          mode: "required",
          network: { proxy: { socket: proxy.path!, port: 3128, forwarder: forwarder! } },
        });
        let out;
        try {
          out = await run(command.argv);
        } finally {
          await command.release();
        }
        assert.equal(out.code, 7, out.stderr);
        const lines = out.stdout.trim().split("\n");
        assert.deepEqual(lines.slice(0, CONNECTIONS), Array(CONNECTIONS).fill(`200 ${MB}`), out.stdout + out.stderr);
        assert.equal(lines[CONNECTIONS], "403", out.stdout);
        assert.equal(judged.filter((j) => j === `127.0.0.1:${port}`).length, CONNECTIONS);
        assert.ok(judged.includes("127.0.0.1:1"), judged.join(", "));
      } finally {
        await proxy.close();
        await new Promise((resolve) => server.close(resolve));
        await rm(dir, { recursive: true, force: true });
      }
    });
  }
});

test("the server never runs a perl or a Perl module found through PATH or PERL5LIB", {
  timeout: 60_000,
  skip: !("Deno" in globalThis) ? "starts a fresh deno process" : chosen?.kind !== "perl" ? "no system perl" : false,
}, async () => {
  const dir = await realpath(await mkdtemp(join(tmpdir(), "toolfence-relay-path-")));
  try {
    // A planted perl and a planted Socket.pm: either leaves a mark when run or loaded.
    const planted = join(dir, "perl");
    await writeFile(planted, `#!/bin/sh\ntouch ${join(dir, "perl-ran")}\nexit 1\n`);
    await chmod(planted, 0o755);
    await writeFile(join(dir, "Socket.pm"), `package Socket; open(my $f, ">", "${join(dir, "module-loaded")}"); 1;\n`);
    const forwarder = new URL("../../../policy/egress/forwarder.ts", import.meta.url).href;
    const out = execFileSync(process.execPath, [
      "eval",
      "--config",
      new URL("../../../deno.json", import.meta.url).pathname,
      `const { findForwarder } = await import(${JSON.stringify(forwarder)}); ` +
      `console.log(JSON.stringify(await findForwarder()));`,
    ], { cwd: dir, env: { ...process.env, PATH: `${dir}:${process.env.PATH}`, PERL5LIB: dir }, encoding: "utf8" });
    const found = JSON.parse(out.trim().split("\n").at(-1)!);
    assert.equal(found.kind, "perl");
    assert.notEqual(found.path, planted);
    assert.match(found.constants, /^\d+( \d+)+$/);
    assert.deepEqual((await readdir(dir)).sort(), ["Socket.pm", "perl"]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("under the narrow read of `deno task serve`, the relay is a system program, never the workspace's socat", {
  timeout: 60_000,
  skip: !("Deno" in globalThis) ? "starts a fresh deno process" : chosen === undefined ? "no relay here" : false,
}, async () => {
  // Before: the server could not look at /usr/bin/perl under those flags, so perl was never found, and socat was
  // looked for on PATH first: the one the workspace's node_modules/.bin held (`npm run` puts it first) became the
  // relay, started beside every sandboxed command with egress (an allowlisted `ls` too), a program no rule judged.
  const dir = await realpath(await mkdtemp(join(tmpdir(), "toolfence-relay-narrow-")));
  try {
    const bin = join(dir, "node_modules", ".bin");
    await mkdir(bin, { recursive: true });
    const planted = join(bin, "socat");
    await writeFile(planted, `#!/bin/sh\ntouch ${join(dir, "socat-ran")}\nexit 0\n`);
    await chmod(planted, 0o755);
    const forwarder = new URL("../../../policy/egress/forwarder.ts", import.meta.url).href;
    const script = join(dir, "probe.ts");
    await writeFile(
      script,
      `const { findForwarder, findSocat } = await import(${JSON.stringify(forwarder)});\n` +
        `console.log(JSON.stringify({ relay: await findForwarder(), socat: await findSocat() ?? null }));\n`,
    );
    const config = new URL("../../../deno.json", import.meta.url).pathname;
    const out = execFileSync(process.execPath, [
      "run",
      "--config",
      config,
      "--no-prompt",
      `--allow-read=${dir}`,
      `--allow-write=${dir}`,
      "--allow-run",
      "--allow-env",
      script,
    ], { cwd: dir, env: { ...process.env, PATH: `${bin}:${process.env.PATH}` }, encoding: "utf8", timeout: 50_000 });
    const found = JSON.parse(out.trim().split("\n").at(-1)!) as { relay: Forwarder; socat: string | null };
    assert.ok(!found.relay.path.startsWith(dir), out);
    assert.ok(found.socat === null || !found.socat.startsWith(dir), out);
    assert.deepEqual((await readdir(dir)).sort(), ["node_modules", "probe.ts"], "the planted socat never ran");
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
