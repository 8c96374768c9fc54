// A denied path that is a unix socket or a FIFO, in the workspace: the sandbox hides it as it hides a denied file.
// Until 2026-12-06 its walk covered files and folders only: with `**/*.sock` and `**/pipe.secret` denied, the sandbox
// required and every question answered yes, a bash command that spelled the name at run time (so that the analysis
// could not see it) connected to a host server's `agent.sock` in the workspace and printed its SOCKET-SECRET, and
// `cat` of a FIFO a host process fed printed FIFO-SECRET; so did another name (a hard link) of the FIFO.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { link, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ToolBox } from "../../../toolbox.ts";
import { Session } from "../../../policy/session.ts";
import { parsePolicyFile } from "../../../policy/config/load.ts";
import { PolicyRules } from "../../../policy/config/rules.ts";
import { bubblewrapStatus } from "../../../policy/sandbox.ts";

const skip = (await bubblewrapStatus()).path === undefined ? "needs bubblewrap" : false;
const box = new ToolBox().withDefaults("fs", "cmd");

let dir: string;
let rules: PolicyRules;
let server: net.Server;
let writer: ChildProcess;
let connections = 0;

before(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), "toolfence-deny-special-")));
  server = net.createServer((socket) => {
    connections++;
    socket.end("SOCKET-SECRET-5150\n");
  });
  await new Promise<void>((resolve) => server.listen(join(dir, "agent.sock"), resolve));
  execFileSync("mkfifo", [join(dir, "pipe.secret")]);
  // Another name of the FIFO, made before the session as a hard link is.
  await link(join(dir, "pipe.secret"), join(dir, "pipe-alias"));
  // A host process that writes the FIFO whenever someone opens it to read.
  writer = spawn("/bin/sh", ["-c", 'while :; do echo FIFO-SECRET-6160 > "$1"; done', "sh", join(dir, "pipe.secret")], {
    stdio: "ignore",
  });
  await writeFile(join(dir, "notes.txt"), "visible\n");
  const text = '{ "paths": { "deny": ["**/*.sock", "**/pipe.secret"] } }';
  rules = PolicyRules.fromLayers([parsePolicyFile(join(dir, "toolfence.json"), text, "project")], dir);
});

after(async () => {
  writer?.kill("SIGKILL");
  await new Promise<void>((resolve) => server ? server.close(() => resolve()) : resolve());
  await rm(dir, { recursive: true, force: true });
});

describe("a denied socket or FIFO of the workspace", { skip }, () => {
  test("a sandboxed command can neither connect to the socket nor read the FIFO, by any name", {
    timeout: 90_000,
  }, async () => {
    const session = new Session({ workspace: dir, rules, autoConfirm: true, sandbox: "required" });
    try {
      const connect =
        `import socket; s = socket.socket(socket.AF_UNIX); s.connect('agent' + '.sock'); print(s.recv(99))`;
      const result = await box.call(session, "bash", {
        command: `python3 -c "${connect}" 2>&1; p=pipe; timeout 3 cat $p.secret 2>&1; ` +
          `timeout 3 cat $p-alias 2>&1; cat notes.txt`,
      });
      const text = JSON.stringify(result);
      const shown = text.slice(0, 3000);
      assert.equal(result.status, "success", shown);
      assert.match(text, /"sandboxed":true/, shown);
      assert.match(text, /visible/, shown);
      assert.ok(!/SOCKET-SECRET|FIFO-SECRET/.test(text), shown);
      assert.equal(connections, 0);
      for (const path of ["agent.sock", "pipe.secret"]) {
        const read = await box.call(session, "read_file", { path });
        assert.equal(read.errorCode, "permission_denied", JSON.stringify(read));
      }
    } finally {
      await session.close();
    }
  });
});
