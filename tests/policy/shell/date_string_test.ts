// A date string opens a file: GNU's date parser (date -d, touch -d, find -newermt, tar --newer) takes a leading
// `TZ="NAME"` as a zone, which glibc reads from NAME (an absolute path, or one below /usr/share/zoneinfo, `..` and
// all). `date -d 'TZ="/outside/zone" …'` ran without asking and printed the time in the outside file's zone.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { copyFile, mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkCommand } from "../../../policy/shell/check_command.ts";
import { DEFAULT_COMMAND_ALLOWLIST } from "../../../policy/shell/allowlist.ts";

const ZONE = "/usr/share/zoneinfo/Asia/Tokyo";
const SANDBOXES = [{ available: true }, { available: false, reason: "test: no sandbox" }] as const;

let base = "";
let workspace = "";
let outside = "";

before(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "toolfence-date-")));
  workspace = join(base, "ws");
  outside = join(base, "outside");
  await mkdir(workspace);
  await mkdir(outside);
  if (existsSync(ZONE)) await copyFile(ZONE, join(outside, "zone"));
  await writeFile(join(workspace, "a.txt"), "a\n");
});

after(async () => {
  await rm(base, { recursive: true, force: true });
});

const check = (line: string, sandbox: (typeof SANDBOXES)[number], extra: string[] = []) =>
  checkCommand(line, { allowlist: [...DEFAULT_COMMAND_ALLOWLIST, ...extra], workspaceRoot: workspace, sandbox });

describe('a date string\'s TZ="FILE" is a file read', () => {
  test("date -d with a zone file outside prints that zone's time under real bash", {
    timeout: 30_000,
    skip: !existsSync(ZONE),
  }, () => {
    const run = spawnSync("bash", ["-c", `date -d 'TZ="${outside}/zone" 2020-01-01 00:00' +%H`], {
      cwd: workspace,
      encoding: "utf8",
      env: { PATH: "/usr/bin:/bin", TZ: "UTC" },
      timeout: 60_000,
    });
    // Midnight in Tokyo is 15:00 UTC: the outside file was read.
    assert.equal(run.stdout.trim(), "15");
  });

  test(
    "every program and spelling of such a date asks, with the sandbox and without",
    { timeout: 60_000 },
    async () => {
      const zone = `${outside}/zone`;
      const lines = [
        `date -d 'TZ="${zone}" 2020-01-01'`,
        `date --date='TZ="${zone}"' +%s`,
        `date -d ' TZ=":${zone}" now'`,
        `date -udTZ=\\"${zone}\\"`,
        `date -d now -d 'TZ="${zone}"'`,
        `date -d 'TZ="../../../../../../../..${zone}" now'`,
        `find . -newermt 'TZ="${zone}" 2020-01-01'`,
        `find . -newerBt 'TZ="${zone}" 2020-01-01'`,
        `tar -tf a.tar -N 'TZ="${zone}" 2020'`,
        `tar -tf a.tar --newer-mtime='TZ="${zone}" 2020'`,
        `tar -tf a.tar --after 'TZ="${zone}" 2020'`,
        `tar -tf a.tar -N ${zone}`,
        `tar -tf a.tar --mtime='TZ="${zone}" 2020'`,
        `tar -tf a.tar --mtime=${zone}`,
        `touch -d 'TZ="${zone}" 2020' a.txt`,
        `touch --date='TZ="${zone}" 2020' a.txt`,
        // The dates of -f come from a file or a stream the checker cannot see.
        "date -f a.txt",
        "date -f -",
        `echo 'TZ="${zone}" now' | date -f -`,
      ];
      for (const line of lines) {
        for (const sandbox of SANDBOXES) {
          const checked = await check(line, sandbox, ["tar", "touch"]);
          assert.equal(checked.verdict, "ask", `${line} was allowed (sandbox ${sandbox.available})`);
        }
      }
    },
  );

  test("dates without a zone file, or with a zone of the system's, still run", { timeout: 60_000 }, async () => {
    const lines = [
      "date",
      "date +%s",
      "date -u +%Y-%m-%dT%H:%M:%SZ",
      "date -Iseconds",
      "date --iso-8601=seconds",
      "date -R",
      "date -d yesterday +%F",
      "date -d @0",
      `date -d 'TZ="Europe/Paris" 2020-01-01 12:00'`,
      `date -d 'TZ=":Asia/Tokyo" now'`,
      `date -d 'TZ="UTC0" now'`,
      `date -d 'TZ="${workspace}/zone" now'`,
      `find . -newermt '2020-01-01'`,
      `find . -newermt 'TZ="America/New_York" 2020-01-01'`,
      `touch -d 2020-01-01 a.txt`,
      `tar -tf a.tar --newer=2020-01-01`,
    ];
    for (const line of lines) {
      const checked = await check(line, SANDBOXES[1], ["tar", "touch"]);
      assert.equal(checked.verdict, "allow", `${line}: ${checked.reasons.join(" | ")}`);
    }
  });
});
