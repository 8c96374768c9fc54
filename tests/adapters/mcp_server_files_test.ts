// A server keeps its own files out of its tools' reach: under `serve --http`
// a tenant's command reads neither the token file (the other tenants'
// entries) nor the audit of every call, though both lie under /etc, which the
// sandbox's read view shows; a stdio server's agent can neither read nor
// rewrite the audit log in its own workspace. Real servers (main.ts), real
// clients, real bubblewrap.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { chmod, mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import process from "node:process";
import { dirname, join } from "node:path";
import { bubblewrapStatus } from "../../policy/sandbox.ts";
import { type Replica, startReplica, stopReplica } from "./_fleet.ts";
import { connect, startServer, textOf, writeTokens } from "./_http_harness.ts";
import { TokenFile } from "../../adapters/mcp/http.ts";
import { callOutput, startRawServer } from "./_raw_server.ts";
import { DENO_PROCESS_ONLY, IS_DENO } from "../_runtime.ts";
import { etcWritable } from "../_etc.ts";

const ALICE = "alice-token-0123456789";
const BOB = "bob-token-0123456789";
const hasBwrap = (await bubblewrapStatus()).path !== undefined;

const canPlant = await etcWritable();

// What one bash call prints, run by a stdio server on `workspace` under exactly the flags `main.ts flags` prints
// (no read of /etc, /proc or a policy file's `sandbox.read` folders), with the sandbox required.
async function bashUnderNarrowFlags(workspace: string, command: string): Promise<string> {
  const server = await startRawServer(workspace, { groups: "cmd", args: ["--auto-confirm", "--sandbox", "required"] });
  try {
    const reply = await server.request("tools/call", { name: "bash", arguments: { command } }, 60_000);
    return JSON.stringify(callOutput(reply));
  } finally {
    await server.close();
  }
}

describe("the server's own files under the sandbox", {
  timeout: 120_000,
  skip: (!IS_DENO && "runs main.ts under Deno") || (!hasBwrap && "needs bubblewrap") ||
    (!canPlant && "/etc is not writable"),
}, () => {
  let dir = "";
  let etc = "";
  let tokens = "";
  let audit = "";
  let replica: Replica | undefined;
  let alice: Awaited<ReturnType<typeof connect>> | undefined;

  before(async () => {
    etc = await mkdtemp("/etc/toolfence-server-files-");
    tokens = join(etc, "tokens.json");
    audit = join(etc, "audit.jsonl");
    dir = await mkdtemp(join(tmpdir(), "toolfence-server-files-"));
    await mkdir(join(dir, "tenants"));
    await mkdir(join(dir, "tmp"));
    await writeTokens(tokens, [{ token: ALICE, tenant: "alice" }, { token: BOB, tenant: "bob" }]);
    await writeFile(join(etc, "public.txt"), "public\n");
    replica = await startReplica([
      "--token-file",
      tokens,
      "--tenant-root",
      join(dir, "tenants"),
      "--workspace",
      join(dir, "tenants"),
      "--temp-dir",
      join(dir, "tmp"),
      "--sandbox",
      "required",
      "--auto-confirm",
      "--audit",
      audit,
    ]);
    alice = await connect(replica.url, ALICE);
  });

  after(async () => {
    await alice?.close();
    if (replica) await stopReplica(replica);
    await rm(dir, { recursive: true, force: true });
    if (etc !== "") await rm(etc, { recursive: true, force: true });
  });

  test("a tenant's command reads neither the token file nor the audit; the folder's other files stay", {
    timeout: 60_000,
  }, async () => {
    const tokenText = await readFile(tokens, "utf8");
    const hashes = [...tokenText.matchAll(/"sha256":"([0-9a-f]+)"/g)].map((m) => m[1]);
    assert.equal(hashes.length, 2);
    const result = await alice!.callTool({
      name: "bash",
      arguments: { command: `cat ${tokens} ${audit} ${audit}.1 2>/dev/null; cat ${etc}/public.txt; ls ${etc}` },
    });
    const text = textOf(result);
    for (const hash of hashes) assert.ok(!text.includes(hash), `a token hash was readable: ${text}`);
    assert.doesNotMatch(text, /"tenant":"bob"|bob/, text);
    assert.match(text, /public/);
    // The audit is written all the same.
    assert.match(await readFile(audit, "utf8"), /bash/);
  });
});

describe("private and denied files of /etc under the narrow flags", {
  timeout: 120_000,
  skip: DENO_PROCESS_ONLY || (!hasBwrap && "needs bubblewrap") || (!canPlant && "/etc is not writable"),
}, () => {
  test("a command reads none of them, though the server cannot list /etc", { timeout: 90_000 }, async () => {
    // `main.ts flags` gives the server no read of /etc. The masks it made by name found nothing to mask but
    // /etc/shadow, and the walk that covers what an absolute deny glob matches skipped every folder of /etc as one
    // nobody may read: a command read a key planted in /etc/ssl/private, /etc/gshadow, and each denied file below.
    // Both are now found by find(1) in a child process, whatever the server may read.
    const etc = await mkdtemp("/etc/toolfence-private-");
    const workspace = await mkdtemp(join(tmpdir(), "toolfence-private-etc-"));
    const secret = "SECRET-planted-by-toolfence-test";
    await chmod(etc, 0o755);
    const plant = async (name: string, mode = 0o644) => {
      await mkdir(join(etc, dirname(name)), { recursive: true });
      await writeFile(join(etc, name), secret, { mode });
    };
    // Private by their modes: a file others may not read, a folder others may not enter, one they may not list.
    await plant("key.pem", 0o600);
    await plant("group.key", 0o640);
    await plant("private/inside.txt");
    await chmod(join(etc, "private"), 0o700);
    await plant("listable/inside.txt");
    await chmod(join(etc, "listable"), 0o751);
    // Denied by the policy: a file, a folder, a glob's match, and a link matching it (covered where it leads).
    await plant("app.conf");
    await plant("dir/inside.conf");
    await plant("a.secret");
    await plant("target.txt");
    await symlink(join(etc, "target.txt"), join(etc, "link.secret"));
    await writeFile(join(etc, "public.conf"), "public setting\n", { mode: 0o644 });
    await writeFile(
      join(workspace, "toolfence.json"),
      JSON.stringify({ paths: { deny: [join(etc, "app.conf"), join(etc, "dir"), join(etc, "*.secret")] } }),
    );
    try {
      const text = await bashUnderNarrowFlags(
        workspace,
        `X=${etc}; cat $X/key.pem $X/group.key $X/private/inside.txt $X/listable/inside.txt ` +
          "$X/app.conf $X/dir/inside.conf $X/a.secret $X/target.txt; ls $X/private $X/listable; " +
          "cat $X/public.conf /etc/gshadow; echo done",
      );
      assert.match(text, /public setting/, text);
      assert.match(text, /done/, text);
      assert.doesNotMatch(text, /SECRET-planted/, text);
      assert.doesNotMatch(text, /inside\.txt\\n/, `a private folder was listed: ${text}`);
      assert.doesNotMatch(text, /root:[*!]/, `/etc/gshadow was read: ${text}`);
    } finally {
      await rm(workspace, { recursive: true, force: true });
      await rm(etc, { recursive: true, force: true });
    }
  });
});

describe("the audit log of a stdio server in its own workspace", {
  timeout: 120_000,
  skip: DENO_PROCESS_ONLY || (!hasBwrap && "needs bubblewrap"),
}, () => {
  test("the agent it records can neither read nor rewrite it", { timeout: 90_000 }, async () => {
    const workspace = await mkdtemp(join(tmpdir(), "toolfence-audit-own-"));
    const audit = join(workspace, "audit.jsonl");
    const server = await startRawServer(workspace, { groups: "fs,cmd", args: ["--audit", audit, "--auto-confirm"] });
    try {
      const call = async (name: string, args: Record<string, unknown>) =>
        JSON.stringify(callOutput(await server.request("tools/call", { name, arguments: args }, 30_000)));
      await call("write_file", { path: "a.txt", content: "a\n" });
      assert.match(await call("read_file", { path: "audit.jsonl" }), /denied|not/i);
      // Named, the analysis refuses; spelled at run time, the sandbox masks it read-only.
      assert.match(await call("bash", { command: "cat audit.jsonl" }), /denied/i);
      const hidden = await call("bash", {
        command: 'f=$(printf audit.json%s l); cat "$f"; echo forged >> "$f"; echo done',
      });
      assert.match(hidden, /done/);
      const text = await readFile(audit, "utf8");
      assert.doesNotMatch(hidden, /"type":"call"/, "the audit was readable");
      // The command itself is recorded, with the word in it: no line of the log is the forged one.
      assert.doesNotMatch(text, /^forged$/m);
      assert.match(text, /write_file/);
    } finally {
      await server.close();
      await rm(workspace, { recursive: true, force: true });
    }
  });
});

describe("the server's own files named through a symlink", { timeout: 120_000 }, () => {
  test("a token file in the workspace, both given by a link's path, is denied by its real path too", {
    timeout: 60_000,
  }, async () => {
    // The rule named the token file at the path it was given (/…/link/tokens.json) while the tools judge the real
    // path (/…/real/tokens.json): read_file "tokens.json" gave every tenant's entry back.
    const dir = await realpath(await mkdtemp(join(tmpdir(), "toolfence-server-files-link-")));
    await mkdir(join(dir, "real"));
    await symlink(join(dir, "real"), join(dir, "link"));
    const tokens = join(dir, "link", "tokens.json");
    await writeTokens(tokens, [{ token: ALICE, tenant: "alice" }, { token: BOB, tenant: "bob" }]);
    await writeFile(join(dir, "link", "ok.txt"), "ok\n");
    const harness = await startServer([], {
      workspace: join(dir, "link"),
      tenantRoot: undefined,
      tokens: await TokenFile.open(tokens),
    });
    const alice = await connect(harness.server.url, ALICE);
    try {
      const hashes = [...(await readFile(tokens, "utf8")).matchAll(/"sha256":"([0-9a-f]+)"/g)].map((m) => m[1]);
      assert.equal(hashes.length, 2);
      const calls = [
        ["read_file", { path: "tokens.json" }],
        ["read_file", { path: join(dir, "real", "tokens.json") }],
        ["grep", { pattern: "tenant", path: "." }],
        ["list_dir", { path: "." }],
        ["glob", { pattern: "*" }],
      ] as const;
      for (const [name, args] of calls) {
        const text = textOf(await alice.callTool({ name, arguments: args }));
        for (const hash of hashes) {
          assert.ok(!hash || !text.includes(hash), `${name}: a token hash was readable: ${text}`);
        }
        assert.doesNotMatch(text, /"tenant"|bob/, `${name}: ${text}`);
        // A listing does not name it either; a read names only what was asked for, refused.
        if (name === "read_file") assert.match(text, /denied by the policy/, text);
        else assert.doesNotMatch(text, /tokens\.json/, `${name}: ${text}`);
      }
      assert.match(textOf(await alice.callTool({ name: "read_file", arguments: { path: "ok.txt" } })), /ok/);
    } finally {
      await alice.close();
      await harness.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("credential folders in a policy file's sandbox.read folder under the narrow flags", {
  timeout: 120_000,
  skip: DENO_PROCESS_ONLY || (!hasBwrap && "needs bubblewrap") || (!canPlant && "/etc is not writable"),
}, () => {
  test("a command reads none of them, though the server cannot read the folder", { timeout: 90_000 }, async () => {
    // `main.ts flags` gives the server no read of a `sandbox.read` folder, nor of /etc/passwd. The masks of the
    // credential folders in it (`MASKED_FOLDERS`: /var/lib/postgresql, ...) and of the homes /etc/passwd names were
    // looked up by the server: each lookup failed with NotCapable and was skipped, and a command read
    // /var/lib/postgresql/x, which the same server under -A masks. A child process now looks at what the server may not.
    const folder = "/var/lib/postgresql";
    const made = await mkdir(folder, { recursive: true });
    const planted = join(folder, `toolfence-planted-${process.pid}.txt`);
    const workspace = await mkdtemp(join(tmpdir(), "toolfence-sandbox-read-"));
    await writeFile(planted, "SECRET-planted-by-toolfence-test", { mode: 0o644 });
    await writeFile(join(workspace, "toolfence.json"), JSON.stringify({ sandbox: { read: ["/var/lib"] } }));
    try {
      const text = await bashUnderNarrowFlags(
        workspace,
        `cat ${planted}; ls /var/lib >/dev/null && echo listed; echo done`,
      );
      assert.match(text, /listed\\ndone/, text);
      assert.doesNotMatch(text, /SECRET-planted/, text);
    } finally {
      await rm(workspace, { recursive: true, force: true });
      await rm(made ?? planted, { recursive: true, force: true });
    }
  });
});

describe("the kernel's secrets in /proc under the narrow flags", {
  timeout: 120_000,
  skip: DENO_PROCESS_ONLY || (!hasBwrap && "needs bubblewrap") ||
    (process.getuid?.() !== 0 && "only a server run as root reads them"),
}, () => {
  test("a command of a server run as root reads none of them", { timeout: 90_000 }, async () => {
    // `main.ts flags` gives the server no read of /proc: the covers of /proc/timer_list, /proc/keys, ... were made
    // only for the entries the server saw, and under those flags a command read them (under -A: covered).
    const workspace = await mkdtemp(join(tmpdir(), "toolfence-proc-"));
    try {
      const text = await bashUnderNarrowFlags(
        workspace,
        "for f in /proc/timer_list /proc/keys /proc/key-users; do [ -e $f ] || continue; " +
          'echo "$f $(head -c 100 $f 2>/dev/null | wc -c)"; done; echo done',
      );
      assert.match(text, /done/, text);
      assert.doesNotMatch(text, /\/proc\/\S+ [1-9]/, text);
    } finally {
      await rm(workspace, { recursive: true, force: true });
    }
  });
});

describe("an ssh host key others may read, under the narrow flags", {
  timeout: 120_000,
  skip: DENO_PROCESS_ONLY || (!hasBwrap && "needs bubblewrap") || (!canPlant && "/etc is not writable"),
}, () => {
  test("is masked by its name as under -A", { timeout: 90_000 }, async () => {
    // Host keys are masked by name (ssh_host_*_key), whatever their mode. The server listed /etc/ssh itself: under
    // `main.ts flags` it may not, found no key, and a command read one of mode 0644 that -A masked.
    const made = await mkdir("/etc/ssh", { recursive: true });
    const key = `/etc/ssh/ssh_host_toolfence${process.pid}_key`;
    const workspace = await mkdtemp(join(tmpdir(), "toolfence-host-key-"));
    await writeFile(key, "SECRET-planted-by-toolfence-test", { mode: 0o644 });
    await chmod(key, 0o644);
    try {
      const text = await bashUnderNarrowFlags(workspace, `cat ${key}; echo done`);
      assert.match(text, /done/, text);
      assert.doesNotMatch(text, /SECRET-planted/, text);
    } finally {
      await rm(workspace, { recursive: true, force: true });
      await rm(made ?? key, { recursive: true, force: true });
    }
  });
});
