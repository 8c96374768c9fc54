// Egress of sandboxed commands through the judged proxy, with real processes:
// bash under bubblewrap in a network namespace with only its loopback, the
// relay (perl, else socat) passing connections to the proxy on the host, npm
// and curl through the standard proxy variables, every connection judged and
// recorded.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import os from "node:os";
import dns from "node:dns/promises";
import { classifyAddress } from "../../../policy/egress/addresses.ts";
import path from "node:path";
import { Session } from "../../../policy/session.ts";
import { bubblewrapStatus } from "../../../policy/sandbox.ts";
import { findForwarder } from "../../../policy/egress/forwarder.ts";
import { callbackHost } from "../../../policy/hosts.ts";
import { PolicyRules } from "../../../policy/config/rules.ts";
import { parsePolicyFile } from "../../../policy/config/load.ts";
import type { PolicyDecisionEvent } from "../../../policy/audit/audit_log.ts";
import type { BashResult } from "../../../tools/cmd/bash.ts";
import { cmdBox, denyingNetworkHost } from "./_helpers.ts";
import { MAX_CONNECTIONS_RECORDED, SESSION_PROXY_CONNECTIONS } from "../../../tools/cmd/_egress.ts";
import { SERVER_PROXY_CONNECTIONS } from "../../../policy/egress/proxy.ts";

const skip = (await bubblewrapStatus()).path === undefined
  ? "bubblewrap is unavailable here"
  : await findForwarder() === undefined
  ? "neither perl nor socat is installed"
  : false;
const box = cmdBox();
const MB = 1024 * 1024;

function registryHost(): string {
  try {
    return new URL(execFileSync("npm", ["config", "get", "registry"], { encoding: "utf8" }).trim()).hostname;
  } catch {
    return "registry.npmjs.org";
  }
}

describe("egress of sandboxed commands", { skip, timeout: 180_000 }, () => {
  let dir: string;
  let session: Session;
  let rules: PolicyRules;
  let server: http.Server;
  let port: number;
  const served: string[] = [];
  const decisions: PolicyDecisionEvent[] = [];
  const asked: string[] = [];
  const registry = registryHost();
  const payload = Buffer.alloc(MB, "x");

  before(async () => {
    server = http.createServer((req, res) => {
      served.push(req.url ?? "");
      res.writeHead(200, { "content-length": payload.length }).end(payload);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
    dir = await mkdtemp(path.join(os.tmpdir(), "toolfence-egress-test-"));
    // This machine's own name is on the list: where it resolves to loopback, it must be judged by its address.
    const file = { network: { allow: [registry, `127.0.0.1:${port}`, os.hostname()], deny: ["*.denied.test"] } };
    rules = PolicyRules.fromLayers([parsePolicyFile("p", JSON.stringify(file), "project")], dir);
    session = new Session({
      workspace: dir,
      host: denyingNetworkHost(asked),
      rules,
      onDecision: (_s, event) => decisions.push(event),
    });
  });
  after(async () => {
    await session.close();
    await new Promise((resolve) => server.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  async function bash(command: string): Promise<BashResult> {
    const result = await box.call(session, "bash", { command });
    assert.notEqual(result.output, null, `${result.errorCode}: ${result.error}`);
    const output = result.output as BashResult;
    assert.equal(output.sandboxed, true);
    return output;
  }
  const connections = (command: string) => decisions.filter((d) => d.kind === "connection" && d.command === command);

  test("npm install of a small package from the registry, through the proxy", { timeout: 150_000 }, async () => {
    const command =
      "npm install --no-audit --no-fund --loglevel=error is-number && node -p \"require('is-number')(5)\"";
    const out = await bash(command);
    assert.equal(out.exit_code, 0, out.stderr + out.stdout);
    assert.match(out.stdout, /true/);
    assert.ok((await stat(path.join(dir, "node_modules/is-number/package.json"))).isFile());
    const seen = connections(command);
    assert.ok(seen.length > 0 && seen.every((d) => d.decision === "allow"), JSON.stringify(seen));
    assert.equal(seen[0].subject, `${registry}:443`);
    assert.equal(seen[0].networkRule, registry);
    assert.ok(seen[0].address, "the address connected to is recorded");
  });

  test(
    "a domain not on the list and a denied one are refused with the reason in the result",
    { timeout: 180_000 },
    async () => {
      const command = "curl -sS https://unlisted.example.test/ ; curl -sS http://x.denied.test/page";
      const out = await bash(command);
      assert.match(out.stderr, /CONNECT tunnel failed, response 403/);
      assert.match(
        out.stdout,
        /Blocked by toolfence: The command may not connect to http:\/\/x\.denied\.test:80: the policy denies it/,
      );
      assert.equal(out.network_refused?.length, 2);
      assert.match(
        out.network_refused![0],
        /^CONNECT unlisted\.example\.test:443: .*not on the allowlist and was denied/,
      );
      assert.equal(
        asked.filter((m) => m.includes("https://unlisted.example.test:443")).length,
        1,
        "a person was asked",
      );
      const seen = connections(command);
      assert.deepEqual(seen.map((d) => d.decision), ["deny", "deny"]);
      assert.equal(seen[1].networkRule, "*.denied.test");
    },
  );

  test("a name that resolves to loopback, and private and metadata addresses, are refused before any connection", {
    timeout: 180_000,
  }, async () => {
    const command =
      `curl -sS --noproxy '' --max-time 20 http://${os.hostname()}:${port}/rebind; curl -sS --max-time 20 https://10.0.0.1/; ` +
      "curl -sS --max-time 20 http://169.254.169.254/latest/meta-data/; curl -sS --max-time 20 'http://[fd00:ec2::254]/'";
    const started = Date.now();
    const out = await bash(command);
    assert.equal(out.network_refused?.length, 4, JSON.stringify(out));
    const own = (await dns.lookup(os.hostname(), { all: true })).map((a) => a.address);
    if (own.some((a) => classifyAddress(a) !== "public")) {
      assert.match(out.network_refused![0], / \(a (loopback|private|link-local) address, [0-9a-f:.]+\)/);
    } else assert.match(out.network_refused![0], /was denied/);
    assert.match(out.network_refused![1], /^CONNECT 10\.0\.0\.1:443: .*a private address/);
    assert.match(out.network_refused![2], /169\.254\.169\.254.*a link-local address/);
    assert.match(out.network_refused![3], /fd00:ec2::254.*a private address/);
    assert.ok(Date.now() - started < 15_000, "refused at once, not after a connection attempt");
    assert.deepEqual(served.filter((p) => p === "/rebind"), [], "the loopback server saw nothing");
  });

  test("a flood of refused requests is listed up to 50 lines, then counted", { timeout: 60_000 }, async () => {
    // Before, the list held every refusal, kept by the server for as long as the command (a job: for ever) ran.
    const out = await bash(`curl -s --max-time 20 $(printf 'http://10.0.0.1/f %.0s' $(seq 70)) | grep -c Blocked`);
    assert.equal(out.stdout.trim(), "70", "each refused, each on a connection of its own");
    assert.equal(out.network_refused?.length, 51, JSON.stringify(out.network_refused));
    assert.match(out.network_refused![49], /^GET http:\/\/10\.0\.0\.1\/f: /);
    assert.equal(out.network_refused![50], "... and 20 more refused");
  });

  test("a flood of refused requests is audited one by one up to a bound, then counted, each record's command cut", {
    timeout: 120_000,
  }, async () => {
    // Before: every connection was a record carrying the whole command line, so a command of 90,000 characters that
    // made 4,000 refused connections in 26 s rotated the whole audit log (4 files of 10 MiB) and every earlier
    // record out of it.
    const count = MAX_CONNECTIONS_RECORDED.refused + 200;
    const command =
      `curl -s --max-time 60 $(printf 'http://x.denied.test/f %.0s' $(seq ${count})) | grep -c Blocked # ` +
      "x".repeat(5000);
    const out = await bash(command);
    assert.equal(out.stdout.trim(), String(count), "each refused, each on a connection of its own");
    const seen = decisions.filter((d) => d.kind === "connection" && d.command?.startsWith(command.slice(0, 100)));
    // The first ones one by one, a summary at 256, and one at the end.
    assert.equal(seen.length, MAX_CONNECTIONS_RECORDED.refused + 2, JSON.stringify(seen.slice(-3)));
    assert.ok(seen.every((d) => d.decision === "deny" && d.command!.length < 1100), "each command is cut");
    assert.match(seen.at(-1)!.reason!, new RegExp(`^${count} refused requests and tunnels of this command so far`));
    assert.match(seen.at(-2)!.reason!, /^256 refused requests/);
  });

  test("one session's commands hold at most SESSION_PROXY_CONNECTIONS proxy connections; another's still get out", {
    timeout: 180_000,
  }, async () => {
    // Before: one session's 8 background jobs, each holding its proxy's 256, held all 2,048 of the server, and every
    // other session's commands were answered 503.
    const otherDir = await mkdtemp(path.join(os.tmpdir(), "toolfence-egress-other-"));
    const other = new Session({ workspace: otherDir, host: denyingNetworkHost([]), rules });
    const hold = `python3 -c "
import socket, time
s = [socket.create_connection(('127.0.0.1', 3128)) for i in range(250)]
print('holding', flush=True); time.sleep(120)"`;
    const before = SERVER_PROXY_CONNECTIONS.open;
    try {
      for (let i = 0; i < 3; i++) {
        const started = await box.call(session, "bash_background", { command: hold });
        assert.equal(started.status, "success", started.error);
      }
      // Until the count holds still (the third job's connections past the share are answered 503 and closed).
      let last = -1;
      for (let tries = 0; tries < 200; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        const open = SERVER_PROXY_CONNECTIONS.open - before;
        if (open === last && open >= SESSION_PROXY_CONNECTIONS) break;
        last = open;
      }
      assert.equal(SERVER_PROXY_CONNECTIONS.open - before, SESSION_PROXY_CONNECTIONS);
      const out = await box.call(other, "bash", {
        command:
          `curl -sS -o /dev/null -w '%{http_code}' --noproxy '' -x http://127.0.0.1:3128 http://127.0.0.1:${port}/x`,
      });
      assert.equal((out.output as BashResult).stdout, "200", out.error);
    } finally {
      await other.close();
      await rm(otherDir, { recursive: true, force: true });
      const { jobs } = (await box.call(session, "bash_list", {})).output as { jobs: { id: string; status: string }[] };
      for (const job of jobs.filter((j) => j.status === "running")) {
        await box.call(session, "bash_stop", { id: job.id });
      }
    }
  });

  test("the sessions of one workspace (an HTTP tenant's) share one SESSION_PROXY_CONNECTIONS between them", {
    timeout: 180_000,
  }, async () => {
    // Before: the share was each session's, and an HTTP tenant's sessions each have a Workspace of their own in its
    // one folder: alice's five sessions, two jobs each holding 256, held all 2,048 of the server, and bob's curl was
    // answered "503 the server's proxies hold 2048 connections at once".
    const second = new Session({ workspace: dir, host: denyingNetworkHost([]), rules });
    const hold = `python3 -c "
import socket, time
s = [socket.create_connection(('127.0.0.1', 3128)) for i in range(250)]
print('holding', flush=True); time.sleep(120)"`;
    const before = SERVER_PROXY_CONNECTIONS.open;
    try {
      for (const owner of [session, second, second]) {
        const started = await box.call(owner, "bash_background", { command: hold });
        assert.equal(started.status, "success", started.error);
      }
      let last = -1;
      for (let tries = 0; tries < 200; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        const open = SERVER_PROXY_CONNECTIONS.open - before;
        if (open === last && open >= SESSION_PROXY_CONNECTIONS) break;
        last = open;
      }
      assert.equal(SERVER_PROXY_CONNECTIONS.open - before, SESSION_PROXY_CONNECTIONS);
    } finally {
      for (const owner of [session, second]) {
        const { jobs } = (await box.call(owner, "bash_list", {})).output as { jobs: { id: string; status: string }[] };
        for (const job of jobs.filter((j) => j.status === "running")) {
          await box.call(owner, "bash_stop", { id: job.id });
        }
      }
      await second.close();
    }
  });

  test("loopback and private addresses in every spelling, by curl and by a raw CONNECT, are refused", {
    timeout: 180_000,
  }, async () => {
    // A second loopback server, not on the list: only its exact address and port would be.
    const hits: string[] = [];
    const other = http.createServer((req, res) => void (hits.push(req.url ?? ""), res.end("leak")));
    await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
    const otherPort = (other.address() as AddressInfo).port;
    try {
      const spellings = [
        "2130706433",
        "0x7f.1",
        "017700000001",
        "0x7f000001",
        "127.1",
        "[::ffff:127.0.0.1]",
        "[::ffff:7f00:1]",
      ];
      const curls = spellings.map((h) => `curl -sS --max-time 10 http://${h}:${otherPort}/curl; echo`).join("; ");
      // A raw CONNECT, spelled as given (curl would normalise the host itself).
      const raw = [...spellings, "10.0.0.1", "192.168.1.1", "172.16.0.1", "[fd00::1]", "0", "[::]", "[::1]"]
        .map((h) =>
          `printf 'CONNECT ${h}:${otherPort} HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n' | ` +
          `socat -t 5 - TCP:127.0.0.1:3128 | head -n 1`
        ).join("; ");
      const out = await bash(`${curls}; ${raw}`);
      const statusLines = out.stdout.split("\n").filter((l) => l.startsWith("HTTP/1.1 "));
      assert.equal(statusLines.length, 14, out.stdout);
      // curl normalises most numeric hosts itself; whatever it sends is refused or fails, never served.
      assert.ok((out.network_refused?.length ?? 0) >= 14, JSON.stringify(out.network_refused));
      for (const line of statusLines) assert.match(line, /^HTTP\/1\.1 403 Blocked by toolfence/);
      assert.doesNotMatch(out.stdout, /leak/);
      assert.deepEqual(hits, [], "the unlisted loopback server saw nothing");
    } finally {
      await new Promise((resolve) => other.close(resolve));
    }
  });

  test("no raw DNS or UDP from inside: there is no route but the proxy", { timeout: 180_000 }, async () => {
    const out = await bash(
      `getent hosts ${registry}; echo getent=$?; (exec 3<>/dev/udp/8.8.8.8/53) 2>&1; echo udp=$?; ` +
        "(exec 3<>/dev/tcp/1.1.1.1/443) 2>&1; echo tcp=$?; (exec 3<>/dev/tcp/8.8.8.8/53) 2>&1; echo dnstcp=$?; curl -sS --noproxy '*' --max-time 5 https://" +
        registry +
        "/ 2>&1; echo direct=$?",
    );
    assert.match(out.stdout, /getent=2/);
    assert.match(out.stdout, /Network is unreachable[\s\S]*udp=1/);
    assert.match(out.stdout, /\btcp=1/);
    assert.match(out.stdout, /dnstcp=1/, "no DNS over TCP either");
    assert.match(out.stdout, /direct=6/, "curl without the proxy cannot resolve the name");
  });

  test(
    "curl that only reads from an allowed host runs without asking; an upload asks",
    { timeout: 180_000 },
    async () => {
      const command = `curl -sS -o meta.json https://${registry}/is-number`;
      const out = await bash(command);
      assert.equal(out.exit_code, 0, out.stderr);
      assert.match(await readFile(path.join(dir, "meta.json"), "utf8"), /"name": ?"is-number"/);
      const judged = decisions.find((d) => d.kind === "command" && d.subject === command);
      assert.equal(judged?.answeredBy, "rule", JSON.stringify(judged));
      const upload = `curl -sS -d @meta.json https://${registry}/`;
      await bash(upload);
      assert.notEqual(decisions.find((d) => d.kind === "command" && d.subject === upload)?.answeredBy, "rule");
    },
  );

  // Before, NO_PROXY sent every loopback request straight into the sandbox's empty loopback, so a server the list
  // named on the host's could not be reached by curl, wget or Python without `--noproxy ''` (curl exit 7, wget 4,
  // urllib "Connection refused"). With a loopback entry on the list, NO_PROXY is empty and the proxy judges each.
  test("a loopback server named on the list is reached by curl, wget and urllib in every spelling; others refused", {
    timeout: 180_000,
  }, async () => {
    const before = served.length;
    const clients = (url: string) =>
      [
        `curl -sS --max-time 10 -o /dev/null -w 'curl %{http_code} %{size_download}\n' ${url}`,
        `wget -q -O - ${url} | wc -c | sed 's/^/wget /'`,
        `python3 -c "import urllib.request as u; print('py', len(u.urlopen('${url}', timeout=10).read()))"`,
      ].join("; ");
    const hosts = ["127.0.0.1", "localhost", "LOCALHOST.", "[::ffff:127.0.0.1]"];
    const out = await bash(
      `echo "no_proxy=[$no_proxy]"; ` + hosts.map((h) => clients(`http://${h}:${port}/ok`)).join("; "),
    );
    assert.match(out.stdout, /^no_proxy=\[\]$/m);
    const lines = out.stdout.split("\n");
    assert.equal(lines.filter((l) => l === `curl 200 ${MB}`).length, hosts.length, out.stdout + out.stderr);
    assert.equal(lines.filter((l) => l === `wget ${MB}`).length, hosts.length, out.stdout + out.stderr);
    assert.equal(lines.filter((l) => l === `py ${MB}`).length, hosts.length, out.stdout + out.stderr);
    assert.equal(served.length - before, hosts.length * 3, JSON.stringify(served));
    assert.deepEqual(out.network_refused ?? [], []);

    // Another loopback server, not on the list, in the same spellings and [::1]: refused by the proxy, never served.
    const hits: string[] = [];
    const other = http.createServer((req, res) => void (hits.push(req.url ?? ""), res.end("leak")));
    await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
    const otherPort = (other.address() as AddressInfo).port;
    try {
      const refused = await bash(
        [...hosts, "[::1]"].map((h) => clients(`http://${h}:${otherPort}/no`)).join("; ") +
          `; ${clients(`http://[::1]:${port}/v6`)}`,
      );
      assert.doesNotMatch(refused.stdout, /leak|curl 200|py \d/, refused.stdout);
      assert.deepEqual(hits, [], "the unlisted loopback server saw nothing");
      assert.ok((refused.network_refused?.length ?? 0) >= 15, JSON.stringify(refused.network_refused));
      for (const line of refused.network_refused ?? []) assert.match(line, /not on the allowlist and was denied/);
    } finally {
      await new Promise((resolve) => other.close(resolve));
    }
  });

  test("1 MB from a loopback server named on the list, through the proxy", { timeout: 180_000 }, async () => {
    const out = await bash(
      `curl -sS --noproxy '' -o big.bin -w '%{http_code} %{size_download}' http://127.0.0.1:${port}/1mb`,
    );
    assert.equal(out.stdout, `200 ${MB}`, out.stderr);
    assert.deepEqual(await readFile(path.join(dir, "big.bin")), payload);
    // Another port of loopback is not named, and is refused.
    const other = await bash(`curl -sS --noproxy '' http://127.0.0.1:${port + 1}/`);
    assert.match(other.network_refused?.[0] ?? "", /127\.0\.0\.1:\d+ \(a loopback address/);
  });
});

// Without a loopback entry on the list, loopback stays direct: a dev server the command starts in the sandbox is
// reached on the sandbox's own loopback, and the host's loopback servers are not in view at all.
describe("loopback of a sandboxed command whose list names none", { skip, timeout: 120_000 }, () => {
  test("NO_PROXY keeps loopback direct: the command's own server answers, the host's is not reached", {
    timeout: 120_000,
  }, async () => {
    const hits: string[] = [];
    const host = http.createServer((req, res) => void (hits.push(req.url ?? ""), res.end("host")));
    await new Promise<void>((resolve) => host.listen(0, "127.0.0.1", resolve));
    const hostPort = (host.address() as AddressInfo).port;
    const dir = await mkdtemp(path.join(os.tmpdir(), "toolfence-egress-test-"));
    const file = { network: { allow: ["*.example.test"] } };
    const rules = PolicyRules.fromLayers([parsePolicyFile("p", JSON.stringify(file), "project")], dir);
    const session = new Session({ workspace: dir, host: denyingNetworkHost([]), rules });
    try {
      const result = await box.call(session, "bash", {
        command: `echo inside > page.txt; echo "no_proxy=[$no_proxy]"; ` +
          `python3 -m http.server --bind 127.0.0.1 18080 >/dev/null 2>&1 & s=$!; ` +
          `for i in $(seq 100); do curl -s -o /dev/null http://localhost:18080/ && break; sleep 0.1; done; ` +
          `curl -sS http://localhost:18080/page.txt; curl -sS --max-time 5 http://127.0.0.1:${hostPort}/; ` +
          `echo host=$?; kill $s`,
      });
      const out = result.output as BashResult;
      assert.equal(out.sandboxed, true);
      assert.match(out.stdout, /^no_proxy=\[localhost,127\.0\.0\.1,::1\]$/m);
      assert.match(out.stdout, /^inside$/m, out.stderr);
      assert.match(out.stdout, /^host=7$/m, "the host's loopback is not in the sandbox's namespace");
      assert.deepEqual(hits, []);
    } finally {
      await session.close();
      await new Promise((resolve) => host.close(resolve));
      await rm(dir, { recursive: true, force: true });
    }
  });
});

// The MCP client's yes under answers.elicitation once allows one action: the command it was asked for, every connection
// of it, and no later command. Before, the judge kept it for the session: one yes, and every later command of the
// session reached the destination without a question.
describe("the MCP client's yes to a destination", { skip, timeout: 120_000 }, () => {
  for (const answers of ["once", "grant"] as const) {
    test(`under answers.elicitation ${answers} it holds for ${answers === "once" ? "its command" : "the session"}`, {
      timeout: 120_000,
    }, async () => {
      const hits: string[] = [];
      const servers = [
        http.createServer((_req, res) => res.end("listed")),
        http.createServer((req, res) => {
          hits.push(req.url ?? "");
          res.end("asked");
        }),
      ];
      await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve))));
      const [listed, unlisted] = servers.map((s) => (s.address() as AddressInfo).port);
      const dir = await mkdtemp(path.join(os.tmpdir(), "toolfence-egress-test-"));
      // One loopback port on the list sends loopback through the proxy: the other port is asked about.
      const file = { network: { allow: [`127.0.0.1:${listed}`] }, answers: { elicitation: answers } };
      const rules = PolicyRules.fromLayers([parsePolicyFile("p", JSON.stringify(file), "project")], dir);
      const asked: string[] = [];
      // A host that passes the client's answers on, as the MCP server's elicitation host does.
      const host = callbackHost({
        choose: (request) => {
          if (request.title === "Network destination") asked.push(request.message);
          return {
            choice: request.title === "Network destination"
              ? "allow" as typeof request.defaultChoice
              : request.defaultChoice,
            source: "client",
          };
        },
      });
      const session = new Session({ workspace: dir, host, rules });
      const curl = `curl -sS --max-time 10 http://127.0.0.1:${unlisted}/`;
      try {
        for (const command of [`${curl}a; echo; ${curl}b`, `${curl}c`]) {
          const out = (await box.call(session, "bash", { command })).output as BashResult;
          assert.match(out.stdout, /^asked$/m, `${out.stdout}${out.stderr}`);
        }
        assert.deepEqual(hits, ["/a", "/b", "/c"]);
        assert.equal(asked.length, answers === "once" ? 2 : 1, asked.join("\n"));
      } finally {
        await session.close();
        await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
        await rm(dir, { recursive: true, force: true });
      }
    });
  }
});
