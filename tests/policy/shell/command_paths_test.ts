// Paths in command lines are judged like the file tools judge them: every way
// bash and the programs have of naming a file outside the workspace asks,
// with the sandbox and without it; a sample is confirmed to really read the
// planted file under real bash; denied paths deny.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { existsSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { checkCommand } from "../../../policy/shell/check_command.ts";
import { DEFAULT_COMMAND_ALLOWLIST } from "../../../policy/shell/allowlist.ts";
import { authorizeCommand, decideCommand } from "../../../policy/shell/authorize_command.ts";
import { PolicyRules } from "../../../policy/config/rules.ts";
import { PolicyState } from "../../../policy/state.ts";
import { autoHost } from "../../../policy/hosts.ts";
import { installed } from "../../tools/cmd/_helpers.ts";

const PLANTED = "PLANTED-SECRET-7c1f";
const SANDBOXES = [{ available: true }, { available: false, reason: "test: no sandbox" }] as const;

// A line decided with the sandbox off that asks, and only a person may answer (its reason matching `reason`).
async function personAsked(line: string, rules: PolicyRules, reason?: RegExp) {
  const decided = await decideCommand(line, { rules, workspaceRoot: workspace, sandbox: "off" });
  assert.equal(decided.decision, "ask", `${line}: ${decided.reason}`);
  assert.equal(decided.prompt?.requirePerson, true, `${line}: ${decided.reason}`);
  if (reason !== undefined) assert.match(decided.reason, reason, line);
  return decided;
}

let base = "";
let workspace = "";
let outside = "";

before(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "toolfence-paths-")));
  workspace = join(base, "ws");
  outside = join(base, "outside");
  await mkdir(join(workspace, "src"), { recursive: true });
  await mkdir(outside);
  await writeFile(join(outside, "secret.txt"), `${PLANTED}\n`);
  await writeFile(join(workspace, "f.txt"), "alpha beta\ngamma delta\n");
  await writeFile(join(workspace, "a"), "a\n");
  await writeFile(join(workspace, "package.json"), '{"name":"demo"}\n');
  await writeFile(join(workspace, ".env"), "TOKEN=1\n");
  await mkdir(join(workspace, "ro"));
  await writeFile(join(workspace, "ro", "f"), "x\n");
  await symlink(outside, join(workspace, "link"));
  await symlink(join(outside, "secret.txt"), join(workspace, "linkfile"));
});

after(async () => {
  await rm(base, { recursive: true, force: true });
});

/** Spellings of the planted file (or another file outside), each reaching outside the workspace. */
function spellings(): string[] {
  return [
    `${outside}/secret.txt`,
    "/etc/passwd",
    "~/secret.txt",
    "~",
    "~root/.bashrc",
    "~+/../outside/secret.txt",
    "~-/secret.txt",
    "$HOME/secret.txt",
    "${HOME}/secret.txt",
    '"$HOME"/secret.txt',
    "$PWD/../outside/secret.txt",
    "$OLDPWD/secret.txt",
    "$X",
    "$(echo /etc/passwd)",
    "../outside/secret.txt",
    "./../outside/secret.txt",
    "src/../../outside/secret.txt",
    "/proc/self/root/etc/passwd",
    "/proc/1/environ",
    "/proc/self/environ",
    "/proc/self/cwd/../outside/secret.txt",
    "/dev/fd/3",
    "/e*/passwd",
    `${outside}/secr*`,
    "{/etc,x}/passwd",
    "/etc/{passwd,group}",
    "../*/secret.txt",
    ".*/outside/secret.txt",
    "link/secret.txt",
    "linkfile",
    // Patterns whose folder lies inside but that match a link leading out.
    "*/secret.txt",
    "l?nk/*",
    "linkf*",
  ];
}

/** Programs that read their operand, with where the path goes. */
const READERS = [
  "cat P",
  "head -n 3 P",
  "tail P",
  "wc -l P",
  "sort P",
  "nl P",
  "grep -h x P",
  "diff a P",
  "cmp a P",
  "od -c P",
  "xxd P",
  "cut -c1-40 P",
  "awk '{print}' P",
  "sed -n p P",
  "jq . P",
  "tac P",
  "uniq P",
  "ls P",
  "stat P",
  "file P",
  "rg x P",
  "cat < P",
  "wc -l < P",
  "tr a b < P",
];

/** Option values and other places a path hides, each naming one path spelling P. */
const OPTION_FORMS = [
  "grep -f P a",
  "grep --file=P a",
  "grep -fP a",
  "sort --files0-from=P",
  "wc --files0-from=P",
  "rg --ignore-file P x .",
  "rg --ignore-file=P x .",
  "sed -f P a",
  "awk -f P a",
  "jq --rawfile v P -n .",
  "jq --slurpfile v P -n .",
  "git -C P status",
  "git --git-dir=P log",
  "git diff --no-index a P",
  "tar -tf P",
  "cp P a",
  "date -r P",
  // file reads every magic file of a `:` list, and prints their lines in its warnings.
  "file -m a:P a",
  "file --magic-file=a:P a",
  "find P -name x",
  "du -s P",
  "echo $(< P)",
  "cat a 0< P",
  "echo x > P",
  "echo x 2> P",
  "cat a >> P",
  "head -c 10 -- P",
  "diff -r a P",
  "sort -m a P",
  "cd P && cat secret.txt",
];

function corpus(): string[] {
  const lines = new Set<string>();
  const all = spellings();
  for (const reader of READERS) for (const spelling of all) lines.add(reader.replace("P", spelling));
  for (const form of OPTION_FORMS) {
    for (
      const spelling of [`${outside}/secret.txt`, "~/secret.txt", "../outside/secret.txt", "$HOME/x", "link/secret.txt"]
    ) {
      lines.add(form.replace("P", spelling));
    }
  }
  return [...lines];
}

describe("paths in command lines", { timeout: 300_000 }, () => {
  test("every line that reaches outside asks, with the sandbox and without it", { timeout: 300_000 }, async () => {
    const lines = corpus();
    assert.ok(lines.length >= 150, `the corpus has ${lines.length} lines`);
    const allowed: string[] = [];
    for (const line of lines) {
      for (const sandbox of SANDBOXES) {
        const check = await checkCommand(line, { sandbox, workspaceRoot: workspace });
        if (check.verdict === "allow") allowed.push(`${line} (sandbox ${sandbox.available})`);
      }
    }
    assert.deepEqual(allowed, []);
  });

  test("the same lines ask with the workspace taken from the current folder", { timeout: 300_000 }, async () => {
    const saved = process.cwd();
    process.chdir(workspace);
    try {
      for (const line of corpus().slice(0, 120)) {
        const check = await checkCommand(line, { sandbox: { available: false } });
        assert.notEqual(check.verdict, "allow", line);
      }
    } finally {
      process.chdir(saved);
    }
  });

  test("the reason names the path and the rule", { timeout: 300_000 }, async () => {
    const check = await checkCommand("cat ~/.ssh/id_rsa", { sandbox: { available: false }, workspaceRoot: workspace });
    assert.equal(check.verdict, "ask");
    assert.match(check.reasons[0], /`~\/\.ssh\/id_rsa`.*home folder/);
    const absolute = await checkCommand(`sort --files0-from=${outside}/secret.txt`, { workspaceRoot: workspace });
    assert.match(absolute.reasons.join(" "), /--files0-from.*outside the workspace.*as for the file tools/);
    const link = await checkCommand("cat link/secret.txt", { workspaceRoot: workspace });
    assert.match(link.reasons.join(" "), new RegExp(`leads through a link to ${outside}/secret.txt`));
  });

  test("a program that follows the links it meets asks when a folder it walks holds one leading out", {
    timeout: 300_000,
  }, async () => {
    for (
      const line of [
        "grep -R PLANTED .",
        "grep -R PLANTED",
        "grep -nR PLANTED src .",
        "rg -L PLANTED",
        "rg --follow PLANTED .",
        "grep --dereference-rec PLANTED .",
        // diff -r compares what the links it meets lead to: a file of the same name elsewhere shows the content.
        "diff -r . src",
        "diff -ru src .",
        // These list what lies behind the links they meet: names, sizes and dates of the files outside.
        "find -L .",
        "find -L",
        "find . -follow -name '*.txt'",
        // find's `--` ends only the options before the starting points: its expression follows.
        "find -- . -follow",
        "find -P -- . -follow -ls",
        "find -H -- . -name x -o -follow",
        "find -- -follow",
        "find -O3 -- . -follow",
        "find -D tree -- . -follow",
        "find -- ./ '-follow'",
        "find -- . \\( -name x -o -follow \\)",
        "find -L -- .",
        "ls -RL",
        "ls -lRL .",
        "ls --dereference -R .",
        "du -L .",
        "du -aL",
        "tree -l",
        "tree -al .",
      ]
    ) {
      for (const sandbox of SANDBOXES) {
        const check = await checkCommand(line, { sandbox, workspaceRoot: workspace });
        assert.equal(check.verdict, "ask", `${line} (sandbox ${sandbox.available})`);
        assert.match(check.reasons.join(" "), /holds the link link.*which the command follows/, line);
      }
    }
    // Without following, the walk opens no link it was not given; nor does a walk of a folder without one.
    for (
      const line of ["grep -r PLANTED .", "rg PLANTED", "grep -R PLANTED src", "find .", "ls -R", "du -a .", "tree"]
    ) {
      assert.equal((await checkCommand(line, { workspaceRoot: workspace })).verdict, "allow", line);
    }
    const result = spawnSync("bash", ["-c", "grep -R PLANTED ."], { cwd: workspace, encoding: "utf8" });
    assert.match(result.stdout, new RegExp(PLANTED), "grep -R did not reach the planted file");
    for (const line of ["find -L .", "find -- . -follow"]) {
      const listed = spawnSync("bash", ["-c", line], { cwd: workspace, encoding: "utf8" });
      assert.match(listed.stdout, /link\/secret\.txt/, `${line} did not list the file behind the link`);
    }
    // After `--` a word is an operand to the others: `grep -r -- -R .` searches for `-R`.
    for (const line of ["grep -r -- -R .", "ls -R -- -L", "du -- -L"]) {
      assert.equal((await checkCommand(line, { workspaceRoot: workspace })).verdict, "allow", line);
    }
  });

  test("an archiver or compressor that follows the links it meets stores what lies outside: a person decides", {
    timeout: 300_000,
  }, async () => {
    // Before, with the sandbox off and an automatic answer, `tar -chf x.tar .` and `zip -r x.zip .` stored the planted
    // file in the workspace through `link`, and `gzip -rc .` printed it: the lines named nothing outside.
    const rules = PolicyRules.empty(workspace);
    for (
      const line of [
        "tar -chf x.tar .",
        "tar chf x.tar .",
        "tar -cf x.tar --dereference .",
        "tar -c --deref -f x.tar .",
        "bsdtar -cLf x.tar .",
        "zip -qr x.zip .",
        "zip -r x.zip src .",
        "zip --recurse-paths x.zip .",
        // -R walks the folder it runs in for the names its patterns match, whatever it is given.
        "zip -R x.zip '*.txt'",
        "gzip -rc . > all.gz",
        "gzip --recursive --stdout .",
        "zstd -rc .",
      ]
    ) {
      const decided = await personAsked(line, rules);
      assert.match(decided.check?.reasons.join(" ") ?? "", /holds the link link.*which the command follows/, line);
    }
    // Without following, or walking a folder without a link, the automatic answer stays.
    for (const line of ["tar -cf x.tar .", "tar -chf x.tar src", "zip -qr x.zip src", "zip x.zip f.txt"]) {
      const decided = await decideCommand(line, { rules, workspaceRoot: workspace, sandbox: "off" });
      assert.notEqual(decided.prompt?.requirePerson, true, `${line}: ${decided.reason}`);
    }
    const scratch = await mkdtemp(join(base, "arch-"));
    try {
      await symlink(outside, join(scratch, "link"));
      for (const [line, show] of [["tar -chf x.tar .", "tar -xOf x.tar"], ["zip -qr x.zip .", "unzip -p x.zip"]]) {
        if (!installed(line.split(" ")[0])) continue;
        const shown = spawnSync("bash", ["-c", `${line} && ${show}`], { cwd: scratch, encoding: "utf8" });
        assert.match(shown.stdout, new RegExp(PLANTED), `${line} did not store the planted file`);
      }
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  });

  test("diff without -r compares what the links directly in the folders it is given lead to", {
    timeout: 120_000,
  }, async () => {
    // `linkfile -> outside/secret.txt`; a file of the same name in another folder makes diff open the link.
    await mkdir(join(workspace, "same"));
    await writeFile(join(workspace, "same", "linkfile"), "other\n");
    try {
      const run = spawnSync("bash", ["-c", "diff . same"], { cwd: workspace, encoding: "utf8" });
      assert.match(run.stdout, new RegExp(PLANTED), "diff . same did not show the planted file");
      for (
        const line of [
          "diff . same",
          "diff same .",
          "diff -q same .",
          "diff same/linkfile .",
          "diff . same/linkfile",
          "diff --from-file=same .",
          "diff --to-file=. same/linkfile",
        ]
      ) {
        for (const sandbox of SANDBOXES) {
          const check = await checkCommand(line, { sandbox, workspaceRoot: workspace });
          assert.equal(check.verdict, "ask", `${line} (sandbox ${sandbox.available})`);
          assert.match(check.reasons.join(" "), /holds the link .*which the command follows/, line);
        }
      }
      assert.equal((await checkCommand("diff same same", { workspaceRoot: workspace })).verdict, "allow");
    } finally {
      await rm(join(workspace, "same"), { recursive: true, force: true });
    }
  });

  test("a pattern that may expand into the option that makes a program follow links counts as that option", {
    timeout: 120_000,
  }, async () => {
    // In `gl`: a file named `-R` and a folder holding a link out; `*` gives grep `-R` and the folder.
    const folder = join(workspace, "gl");
    await mkdir(join(folder, "d"), { recursive: true });
    await writeFile(join(folder, "-R"), "x\n");
    await symlink(outside, join(folder, "d", "in"));
    try {
      const run = spawnSync("bash", ["-c", "grep PLANTED *"], { cwd: folder, encoding: "utf8" });
      assert.match(run.stdout, new RegExp(PLANTED), "grep PLANTED * did not follow d/in");
      for (const line of ["grep PLANTED *", "grep -r PLANTED *", "egrep -n PLANTED ?R d", "fgrep -c PLANTED *"]) {
        for (const sandbox of SANDBOXES) {
          const check = await checkCommand(line, { sandbox, workspaceRoot: workspace, cwd: folder });
          assert.equal(check.verdict, "ask", `${line} (sandbox ${sandbox.available})`);
          assert.match(check.reasons.join(" "), /holds the link .*which the command follows/, line);
        }
      }
      // After `--`, or when no match can start with `-`, the words are no options.
      for (const line of ["grep -r PLANTED -- *", "grep PLANTED d*", "ls -- *"]) {
        assert.equal((await checkCommand(line, { workspaceRoot: workspace, cwd: folder })).verdict, "allow", line);
      }
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  test("a pattern that may expand into diff's --to-file names a folder the check never sees: it asks", {
    timeout: 120_000,
  }, async () => {
    // `*` at the workspace root gives diff `--to-file=..`, `-r` and `x`: it compares x/outside with ../outside.
    const made = [join(workspace, "--to-file=.."), join(workspace, "-r"), join(workspace, "x")];
    await writeFile(made[0], "");
    await writeFile(made[1], "");
    await mkdir(join(workspace, "x", "outside"), { recursive: true });
    await writeFile(join(workspace, "x", "outside", "secret.txt"), "other\n");
    try {
      const run = spawnSync("bash", ["-c", "diff *"], { cwd: workspace, encoding: "utf8" });
      assert.match(run.stdout, new RegExp(PLANTED), "diff * did not compare with the folder outside");
      for (const line of ["diff *", "diff -q *", "diff ?-* x"]) {
        for (const sandbox of SANDBOXES) {
          const check = await checkCommand(line, { sandbox, workspaceRoot: workspace });
          assert.equal(check.verdict, "ask", `${line} (sandbox ${sandbox.available})`);
          assert.match(check.reasons.join(" "), /could expand into an option of diff/, line);
        }
      }
      for (const line of ["diff -- *", "diff x/*", "diff f*"]) {
        assert.doesNotMatch(
          (await checkCommand(line, { workspaceRoot: workspace })).reasons.join(" "),
          /option of diff/,
        );
      }
    } finally {
      for (const file of made) await rm(file, { recursive: true, force: true });
    }
  });

  test("a program that follows links follows a link inside the workspace on, to the links of the folder it leads to", {
    timeout: 120_000,
  }, async () => {
    // `chain/to -> ../hop` stays inside; `hop/out -> outside` does not: grep -R chain reads outside through both.
    const chain = join(workspace, "chain");
    const hop = join(workspace, "hop");
    await mkdir(chain);
    await mkdir(hop);
    await symlink("../hop", join(chain, "to"));
    await symlink(outside, join(hop, "out"));
    try {
      const run = spawnSync("bash", ["-c", "grep -R PLANTED chain"], { cwd: workspace, encoding: "utf8" });
      assert.match(run.stdout, new RegExp(PLANTED), "grep -R chain did not follow chain/to/out");
      for (
        const line of ["grep -R PLANTED chain", "rg -L PLANTED chain", "find -L chain", "ls -RL chain", "du -La chain"]
      ) {
        for (const sandbox of SANDBOXES) {
          const check = await checkCommand(line, { sandbox, workspaceRoot: workspace });
          assert.equal(check.verdict, "ask", `${line} (sandbox ${sandbox.available})`);
          assert.match(check.reasons.join(" "), /holds the link chain\/to\/out, which the command follows/, line);
        }
      }
      // Without following, the walk does not leave chain; a link back up is followed once.
      await symlink("..", join(chain, "up"));
      assert.equal((await checkCommand("grep -r PLANTED chain", { workspaceRoot: workspace })).verdict, "allow");
      assert.equal((await checkCommand("grep -R PLANTED chain", { workspaceRoot: workspace })).verdict, "ask");
    } finally {
      await rm(chain, { recursive: true, force: true });
      await rm(hop, { recursive: true, force: true });
    }
  });

  test("a pattern goes on through a link inside the workspace: the links it meets beyond are judged", {
    timeout: 120_000,
  }, async () => {
    // `gchain/to -> ../ghop` stays inside; `ghop/out -> outside` does not: `gchain/*/out/secret.txt` reads outside.
    const chain = join(workspace, "gchain");
    const hop = join(workspace, "ghop");
    await mkdir(chain);
    await mkdir(hop);
    await symlink("../ghop", join(chain, "to"));
    await symlink(outside, join(hop, "out"));
    try {
      const run = spawnSync("bash", ["-c", "cat gchain/*/out/secret.txt"], { cwd: workspace, encoding: "utf8" });
      assert.match(run.stdout, new RegExp(PLANTED), "the pattern did not reach the planted file");
      for (
        const line of [
          "cat gchain/*/out/secret.txt",
          "cat gchain/*/*/secret.txt",
          "grep x gchain/?o/*/*",
          "ls gchain/*/*",
        ]
      ) {
        for (const sandbox of SANDBOXES) {
          const check = await checkCommand(line, { sandbox, workspaceRoot: workspace });
          assert.equal(check.verdict, "ask", `${line} (sandbox ${sandbox.available})`);
          assert.match(check.reasons.join(" "), /may match the link gchain\/to\/out/, line);
        }
      }
      assert.equal((await checkCommand("ls gchain/*", { workspaceRoot: workspace })).verdict, "allow");
    } finally {
      await rm(chain, { recursive: true, force: true });
      await rm(hop, { recursive: true, force: true });
    }
  });

  test("a brace word that may expand into options leaves the folder the program runs in walked", {
    timeout: 120_000,
  }, async () => {
    // In `bl`: a link out. `grep -{R,n} PLANTED` is `grep -R -n PLANTED`, which walks `.`; the brace word was taken
    // for the pattern, and PLANTED for the folder walked (a missing one), so the line ran without the sandbox and
    // printed the file behind the link; `ls -{L,R}` listed it.
    const folder = join(workspace, "bl");
    await mkdir(folder, { recursive: true });
    await symlink(outside, join(folder, "in"));
    try {
      const run = spawnSync("bash", ["-c", "grep -{R,n} PLANTED"], { cwd: folder, encoding: "utf8" });
      assert.match(run.stdout, new RegExp(PLANTED), "grep -{R,n} PLANTED did not follow in");
      const listed = spawnSync("bash", ["-c", "ls -{L,R}"], { cwd: folder, encoding: "utf8" });
      assert.match(listed.stdout, /secret\.txt/, "ls -{L,R} did not list in");
      const lines = [
        "grep -{R,n} PLANTED",
        "grep -{R,} PLANTED",
        "egrep -{n,R} PLANTED",
        "grep {-R,-n} PLANTED",
        "ls -{L,R}",
        "ls -{L,R,l}",
        "ls -L{R,} -l",
        "ls -{LR,}l",
      ];
      for (const line of lines) {
        for (const sandbox of SANDBOXES) {
          const check = await checkCommand(line, { sandbox, workspaceRoot: workspace, cwd: folder });
          assert.equal(check.verdict, "ask", `${line} (sandbox ${sandbox.available})`);
          assert.match(check.reasons.join(" "), /holds the link .*which the command follows/, line);
        }
      }
      // Where no link leads out, they run as before.
      for (const line of lines) {
        const cwd = join(workspace, "src");
        assert.equal((await checkCommand(line, { workspaceRoot: workspace, cwd })).verdict, "allow", line);
      }
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  test("a pattern or brace word that becomes an option word has its value judged", { timeout: 120_000 }, async () => {
    // In `og`: `lf` leads to the planted file, and a file is named `-flf`. `hexdump ?flf` is `hexdump -flf`, which reads
    // its format from lf and prints each line as a bad format; `hexdump -f{lf,}` and `cat ?-file=lf` name lf in an
    // option the same way. The pattern was judged as the file `-flf` it matches, and the line ran without the sandbox.
    const folder = join(workspace, "og");
    await mkdir(folder, { recursive: true });
    await symlink(join(outside, "secret.txt"), join(folder, "lf"));
    await writeFile(join(folder, "-flf"), "");
    await writeFile(join(folder, "--file=lf"), "");
    try {
      if (spawnSync("hexdump", ["--version"]).status === 0) {
        const run = spawnSync("bash", ["-c", "hexdump ?flf"], { cwd: folder, encoding: "utf8", timeout: 60_000 });
        assert.match(run.stderr, new RegExp(PLANTED), "hexdump ?flf did not print the file behind lf");
      }
      const lines = ["hexdump ?flf", "hexdump -?lf", "hexdump {-flf,}", "hexdump -f{lf,}", "head ??file=lf", "od *flf"];
      for (const line of lines) {
        for (const sandbox of SANDBOXES) {
          const check = await checkCommand(line, { sandbox, workspaceRoot: workspace, cwd: folder });
          assert.equal(check.verdict, "ask", `${line} (sandbox ${sandbox.available})`);
          assert.match(check.reasons.join(" "), /lf.*leads through a link to/, line);
        }
      }
      const allowlist = [...DEFAULT_COMMAND_ALLOWLIST, "cp"];
      const copy = await checkCommand("cp ?flf a", { allowlist, workspaceRoot: workspace, cwd: folder });
      assert.equal(copy.verdict, "ask", "cp ?flf a");
      // A pattern matching no option word, or in a folder without one, is judged as before.
      for (const [line, cwd] of [["hexdump *.txt", folder], ["hexdump ?flf", join(workspace, "src")]]) {
        const check = await checkCommand(line, { workspaceRoot: workspace, cwd });
        assert.equal(check.verdict, "allow", `${line}: ${check.reasons.join(" | ")}`);
      }
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  test("an option's value is no folder given: the program that follows links walks the one it runs in", {
    timeout: 120_000,
  }, async () => {
    // In `ov`: a link out. `tree -l -L 2` and `ls -RL -I x` walk `.`; `2` and `x`, the values of options the check did
    // not read (tree and ls had no shape), were taken for the folders given, a missing one, so the lines ran without
    // the sandbox and listed the files outside; `grep -R --max-c 1 PLANTED` (GNU getopt takes a start of an option's
    // name) printed the file behind the link.
    const folder = join(workspace, "ov");
    await mkdir(folder, { recursive: true });
    await symlink(outside, join(folder, "in"));
    try {
      for (const [line, shown] of [["tree -l -L 2", /secret\.txt/], ["ls -RL -I x", /secret\.txt/]] as const) {
        const listed = spawnSync("bash", ["-c", line], { cwd: folder, encoding: "utf8", timeout: 60_000 });
        assert.match(listed.stdout, shown, `${line} did not list in`);
      }
      const run = spawnSync("bash", ["-c", "grep -R --max-c 1 PLANTED"], { cwd: folder, encoding: "utf8" });
      assert.match(run.stdout, new RegExp(PLANTED), "grep -R --max-c 1 PLANTED did not follow in");
      const lines = [
        "tree -l -L 2",
        "tree -l --filelimit 3",
        "tree -Ll 2",
        "tree -l -I x",
        "ls -RL -I x",
        "ls -RL -w 80",
        "ls -RL --sort size",
        "ls -RL --sor size",
        "ls -LR --time-style iso",
        "du -L -d 2",
        "du -L --max-depth 2",
        "du -L -B 1",
        "du -L --exclude x",
        "grep -R --max-c 1 PLANTED",
        "grep -R --exclude-d x PLANTED",
        "rg -L --max-c 1 PLANTED",
      ];
      for (const line of lines) {
        for (const sandbox of SANDBOXES) {
          const check = await checkCommand(line, { sandbox, workspaceRoot: workspace, cwd: folder });
          assert.equal(check.verdict, "ask", `${line} (sandbox ${sandbox.available})`);
          assert.match(check.reasons.join(" "), /holds the link .*which the command follows/, line);
        }
      }
      // An option that takes no value leaves the folder after it given (`--color`'s value is attached when it has one).
      for (const line of ["ls -RL --color src", "ls -lRL src", "du -sL -d 1 src", "grep -R --color PLANTED src"]) {
        const check = await checkCommand(line, { workspaceRoot: workspace, cwd: folder });
        assert.equal(check.verdict, "allow", `${line}: ${check.reasons.join(" | ")}`);
      }
      // Where no link leads out, they run as before.
      for (const line of lines) {
        const cwd = join(workspace, "src");
        assert.equal((await checkCommand(line, { workspaceRoot: workspace, cwd })).verdict, "allow", line);
      }
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  test("a program that follows links walks the folders a pattern matches: the links inside them are judged", {
    timeout: 300_000,
  }, async () => {
    // `deep/in -> outside`: `*` matches the folder `deep`, not a link, and `grep -R` follows `deep/in`.
    await mkdir(join(workspace, "deep"));
    await symlink(outside, join(workspace, "deep", "in"));
    try {
      const lines = [
        "grep -R PLANTED *",
        "grep -R PLANTED d*",
        "grep -R PLANTED {d,q}*",
        "grep -R PLANTED src d*",
        "ls -LR d*",
        "diff -r d* src",
      ];
      for (const sandbox of SANDBOXES) {
        for (const line of lines) {
          const check = await checkCommand(line, { sandbox, workspaceRoot: workspace });
          assert.equal(check.verdict, "ask", `${line} (sandbox ${sandbox.available})`);
          assert.match(check.reasons.join(" "), /holds the link .*which the command follows/, line);
        }
      }
      const run = spawnSync("bash", ["-c", "grep -R PLANTED d*"], { cwd: workspace, encoding: "utf8" });
      assert.match(run.stdout, new RegExp(PLANTED), "grep -R follows the link inside the matched folder");
      // Without following, or where the matched folders hold no link, it runs.
      for (const line of ["grep -r PLANTED d*", "grep -R PLANTED src/*", "ls -R d*"]) {
        const check = await checkCommand(line, { sandbox: { available: false }, workspaceRoot: workspace });
        assert.equal(check.verdict, "allow", `${line}: ${check.reasons.join(" | ")}`);
      }
    } finally {
      await rm(join(workspace, "deep"), { recursive: true });
    }
  });

  test("a sample of the lines really reads the planted file under bash", { timeout: 300_000 }, () => {
    const sample = [
      "cat ~/secret.txt",
      "cat ${HOME}/secret.txt",
      "cat ~+/../outside/secret.txt",
      "cat ~-/secret.txt",
      "head $PWD/../outside/secret.txt",
      "cat ../outside/secret.txt",
      "cat /proc/self/cwd/../outside/secret.txt",
      "sort link/secret.txt",
      "cat linkfile",
      `cat ${outside}/secr*`,
      "cat ../*/secret.txt",
      `cat {${outside},x}/secret.txt`,
      "wc --files0-from=../outside/secret.txt",
      "wc -l < ~/secret.txt; cat < ~/secret.txt",
      "grep -h -f ../outside/secret.txt ../outside/secret.txt",
      "awk '{print}' link/secret.txt",
      "sed -n p ~/secret.txt",
      "echo $(< ../outside/secret.txt)",
    ];
    for (const line of sample) {
      const run = spawnSync("bash", ["-c", line], {
        cwd: workspace,
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: outside, OLDPWD: outside },
        encoding: "utf8",
        timeout: 60_000,
      });
      assert.ok(`${run.stdout}${run.stderr}`.includes(PLANTED), `${line} did not read the planted file: ${run.stderr}`);
    }
  });

  test("a list of files from a stream or a file asks, and the programs really open what it names", {
    timeout: 300_000,
  }, async () => {
    const secret = "../outside/secret.txt";
    // Each line's output shows that the program opened the listed file (its content, size, type or checksum).
    const lines: [string, RegExp][] = [
      [`printf '${secret}\\0' | sort --files0-from=-`, new RegExp(PLANTED)],
      [`sort --files0-from <(printf '${secret}\\0')`, new RegExp(PLANTED)],
      [`printf '${secret}\\0' | wc -c --files0=-`, /^20 \.\.\/outside\/secret\.txt$/m],
      [`printf '${secret}\\0' | du --files0-from -`, /\.\.\/outside\/secret\.txt$/m],
      [`printf '${secret}' | file -f -`, /secret\.txt: +ASCII text/],
      [`printf '${secret}\\0' | find -files0-from - -type f`, /^\.\.\/outside\/secret\.txt$/m],
      [`printf '00000000000000000000000000000000  ${secret}\\n' | md5sum -c -`, /secret\.txt: FAILED$/m],
      [`printf '${secret}\\0' > list0 && sort --files0-from=list0`, new RegExp(PLANTED)],
      [`printf '${secret}\\n' | tar -cf - -T - | tar -xOf -`, new RegExp(PLANTED)],
      [`printf '${secret}\\n' | tar cTf - - | tar -xOf -`, new RegExp(PLANTED)],
    ];
    const allowlist = [...DEFAULT_COMMAND_ALLOWLIST, "md5sum"];
    for (const [line, opened] of lines) {
      const check = await checkCommand(line, { sandbox: { available: false }, workspaceRoot: workspace, allowlist });
      assert.equal(check.verdict, "ask", `${line} was allowed`);
      // The files a list names are paths only the run knows: without the sandbox only a person may let them be opened
      // (before, an automatic answer printed the file outside).
      const decided = await decideCommand(line, { workspaceRoot: workspace, sandbox: "off" });
      assert.equal(decided.prompt?.requirePerson, true, `${line}: ${decided.reason}`);
      const run = spawnSync("bash", ["-c", line], { cwd: workspace, encoding: "utf8", timeout: 60_000 });
      assert.match(run.stdout, opened, `${line}: ${run.stdout} ${run.stderr}`);
    }
    // Archivers and compressors a policy file's allow rule lets run take such lists too: `zip -@` stores the files
    // standard input names, `xz --files` and `zstd --filelist` compress them (and without `-c`, remove them).
    await writeFile(join(workspace, "names.txt"), `${secret}\n`);
    const archivers: [string, string][] = [
      [`printf '${secret}\\n' | zip -q0 - -@`, ""],
      [`printf '${secret}\\n' | zip -q0 - --names-stdin`, ""],
      [`printf '${secret}\\n' | xz -c --files`, " | xz -dc"],
      ["xz -c --files=names.txt", " | xz -dc"],
      ["zstd -c --filelist names.txt", " | zstd -dc"],
    ];
    const withArchivers = [...DEFAULT_COMMAND_ALLOWLIST, "zip", "xz", "zstd", "cpio", "bsdtar"];
    for (const [line, reader] of archivers) {
      const check = await checkCommand(line, {
        sandbox: { available: false },
        workspaceRoot: workspace,
        allowlist: withArchivers,
      });
      assert.equal(check.verdict, "ask", `${line} was allowed`);
      assert.match(check.reasons.join(" "), /list names/, line);
      const program = line.split("|").at(-1)!.trim().split(" ")[0];
      if (!installed(program)) continue;
      const run = spawnSync("bash", ["-c", `${line}${reader}`], {
        cwd: workspace,
        encoding: "latin1",
        timeout: 60_000,
      });
      assert.match(run.stdout, new RegExp(PLANTED), `${line}: ${run.stderr}`);
    }
    // cpio's copy-out and copy-pass modes read the names from standard input; bsdtar's -T, -I and its compressor.
    for (
      const line of [
        `printf '${secret}\\n' | cpio -o`,
        `printf '${secret}\\n' | cpio --create -H newc`,
        `printf '${secret}\\n' | cpio -pd sub`,
        `printf '${secret}\\n' | bsdtar -cf - -T -`,
        "bsdtar -cf - -I names.txt",
        "bsdtar -tf a.tar --use-compress-program=./x.sh",
      ]
    ) {
      const check = await checkCommand(line, {
        sandbox: { available: false },
        workspaceRoot: workspace,
        allowlist: withArchivers,
      });
      assert.equal(check.verdict, "ask", `${line} was allowed`);
    }
    // zip's freshen, sync and update without names take the list from the archive: a stored name
    // `../outside/secret.txt` (zip stores what it is given) is read again and stored by `zip -f` and `zip -u`.
    for (const line of ["zip -q -f names.zip", "zip -qu names.zip", "zip --freshen names.zip a", "zip -FS names.zip"]) {
      const check = await checkCommand(line, {
        sandbox: { available: false },
        workspaceRoot: workspace,
        allowlist: withArchivers,
      });
      assert.equal(check.verdict, "ask", `${line} was allowed`);
      assert.match(check.reasons.join(" "), /the archive names/, line);
    }
    if (installed("zip") && installed("unzip")) {
      // An archive of an older `../outside/fresh.txt`: what the file outside holds now is stored again.
      await writeFile(join(outside, "fresh.txt"), "old\n");
      const made = spawnSync("bash", [
        "-c",
        "touch -d 2000-01-01 ../outside/fresh.txt && zip -q names.zip ../outside/fresh.txt",
      ], {
        cwd: workspace,
        encoding: "utf8",
      });
      assert.equal(made.status, 0, made.stderr);
      await writeFile(join(outside, "fresh.txt"), `${PLANTED}\n`);
      const run = spawnSync("bash", ["-c", "zip -q -f names.zip && unzip -p names.zip"], {
        cwd: workspace,
        encoding: "latin1",
        timeout: 60_000,
      });
      assert.match(run.stdout, new RegExp(PLANTED), String(run.stderr));
      await rm(join(outside, "fresh.txt"));
      await rm(join(workspace, "names.zip"), { force: true });
    }
    // Their plain uses still run.
    for (
      const line of ["xz -c f.txt", "xz --filters=lzma2 -c f.txt", "zstd -c f.txt", "cpio -t < a", "zip -qu x.zip a"]
    ) {
      const check = await checkCommand(line, {
        sandbox: { available: false },
        workspaceRoot: workspace,
        allowlist: withArchivers,
      });
      assert.equal(check.verdict, "allow", `${line}: ${check.reasons.join(" | ")}`);
    }
    // A list named by a denied file is denied, not only asked about.
    const rules = PolicyRules.fromLayers([{ name: "project", config: { paths: { deny: ["**/.env"] } } }], workspace);
    for (const line of ["wc --files0-from .env", "file -f .env", "find -files0-from .env"]) {
      const decided = await decideCommand(line, { rules, workspaceRoot: workspace, sandbox: "off" });
      assert.equal(decided.decision, "deny", `${line}: ${decided.reason}`);
    }
  });

  test("a command with a redirection to a file is judged by its program's rule too: its script's files and programs", {
    timeout: 300_000,
  }, async () => {
    // Before, a redirection's problem was reported and the program's flag rule never read: with the sandbox off and an
    // automatic answer, `sed 's/a/b/w ../outside/made' f.txt > out.txt` wrote the file outside, and find's -exec,
    // sed's e, awk's system and ripgrep's --pre ran what they were given.
    const rules = PolicyRules.empty(workspace);
    for (
      const line of [
        "sed 's/a/b/w ../outside/made' f.txt > out.txt",
        "sed -n '1e cat /etc/hostname' f.txt >> out.txt",
        "awk 'BEGIN { print 1 > \"../outside/made\" }' 2> err.txt",
        "awk 'BEGIN { system(\"sh x.sh\") }' &> out.txt",
        "find . -maxdepth 0 -exec sh x.sh \\; > out.txt",
        "rg --pre ./x.sh alpha > out.txt",
        "printf '../outside/secret.txt\\0' | sort --files0-from=- > out.txt",
        "out=1 sed 's/a/b/w ../outside/made' f.txt",
      ]
    ) {
      await personAsked(line, rules);
    }
    const made = join(outside, "made");
    spawnSync("bash", ["-c", "sed 's/a/b/w ../outside/made' f.txt > out.txt"], { cwd: workspace, timeout: 60_000 });
    try {
      assert.match(await readFile(made, "utf8"), /blpha/, "sed did not write the file outside");
    } finally {
      await rm(made, { force: true });
      await rm(join(workspace, "out.txt"), { force: true });
    }
  });

  test("a default assignment in an expansion is an assignment: `${CDPATH:=..}` moves the cd after it", {
    timeout: 300_000,
  }, async () => {
    // Before, with the sandbox off and an automatic answer, `: ${CDPATH:=..}; cd outside && cat secret.txt` printed the
    // planted file: cd's folder was judged as `./outside`, without the CDPATH the line itself had set.
    const rules = PolicyRules.empty(workspace);
    for (
      const line of [
        ": ${CDPATH:=..}; cd outside && cat secret.txt",
        "echo ${CDPATH=..} > /dev/null; cd outside; cat secret.txt",
        'echo "${CDPATH:=$PWD/..}"; cd outside; head secret.txt',
        ": ${PATH:=.}; ls",
      ]
    ) {
      await personAsked(line, rules);
    }
    const run = spawnSync("bash", ["-c", ": ${CDPATH:=..}; cd outside && cat secret.txt"], {
      cwd: workspace,
      encoding: "utf8",
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      timeout: 60_000,
    });
    assert.match(run.stdout, new RegExp(PLANTED), run.stderr);
    // A variable of the line's own, lower case, is the line's business as `x=1` is.
    const own = await decideCommand('echo "${x:=a}"', { rules, workspaceRoot: workspace, sandbox: "off" });
    assert.notEqual(own.prompt?.requirePerson, true, own.reason);
  });

  test("a builtin that reads into a variable assigns it: `read PATH < p.txt` runs the workspace's programs", {
    timeout: 300_000,
  }, async () => {
    // Before, with the sandbox off and an automatic answer, `read PATH < p.txt; ls` ran an `ls` the workspace held.
    const scratch = await realpath(await mkdtemp(join(base, "read-")));
    try {
      await writeFile(join(scratch, "ls"), `#!/bin/sh\necho ${PLANTED}\n`, { mode: 0o755 });
      await writeFile(join(scratch, "p.txt"), ".\n");
      const rules = PolicyRules.empty(scratch);
      for (
        const line of [
          "read PATH < p.txt; ls",
          "read -r -p x CDPATH < p.txt; cd outside",
          "read -ra PATH < p.txt; ls",
          "IFS= read -r -d '' -a PATH < p.txt; ls",
          "mapfile -t PATH < p.txt; ls",
          "readarray -n 1 PATH < p.txt; ls",
          "getopts a PATH; ls",
          'read "$name" < p.txt; ls',
        ]
      ) {
        const decided = await decideCommand(line, { rules, workspaceRoot: scratch, sandbox: "off" });
        assert.equal(decided.prompt?.requirePerson, true, `${line}: ${decided.reason}`);
      }
      const run = spawnSync("bash", ["-c", "read PATH < p.txt; ls"], { cwd: scratch, encoding: "utf8" });
      assert.match(run.stdout, new RegExp(PLANTED), run.stderr);
      // A variable of the line's own is the line's business.
      const own = await decideCommand("read -r x < p.txt; echo $x", { rules, workspaceRoot: scratch, sandbox: "off" });
      assert.notEqual(own.prompt?.requirePerson, true, own.reason);
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  });

  test(
    "a loop's variable is an assignment: `for PATH in .` runs the workspace's programs",
    { timeout: 300_000 },
    async () => {
      // Before, with the sandbox off and an automatic answer, `for PATH in .; do ls; done` ran an `ls` the workspace held.
      const scratch = await realpath(await mkdtemp(join(base, "loop-")));
      try {
        await writeFile(join(scratch, "ls"), `#!/bin/sh\necho ${PLANTED}\n`, { mode: 0o755 });
        const rules = PolicyRules.empty(scratch);
        for (
          const line of [
            "for PATH in .; do ls; done",
            "select PATH in .; do ls; break; done < /dev/null",
            "for CDPATH in ..; do cd outside; done",
            "for HOME in ..; do ls; done",
          ]
        ) {
          const decided = await decideCommand(line, { rules, workspaceRoot: scratch, sandbox: "off" });
          assert.equal(decided.prompt?.requirePerson, true, `${line}: ${decided.reason}`);
        }
        const run = spawnSync("bash", ["-c", "for PATH in .; do ls; done"], { cwd: scratch, encoding: "utf8" });
        assert.match(run.stdout, new RegExp(PLANTED), run.stderr);
        const own = await decideCommand("for i in 1 2; do echo $i; done", {
          rules,
          workspaceRoot: scratch,
          sandbox: "off",
        });
        assert.notEqual(own.prompt?.requirePerson, true, own.reason);
      } finally {
        await rm(scratch, { recursive: true, force: true });
      }
    },
  );

  test("paths inside the workspace and harmless devices run", { timeout: 300_000 }, async () => {
    for (
      const line of [
        "cat f.txt",
        "cat f.txt | head -n 1 || cat a",
        "wc -l < f.txt",
        "sort f.txt > /dev/null",
        "cat /dev/null",
        "head -c 4 /dev/urandom",
        "cat src/*.ts",
        `cat ${workspace}/f.txt`,
        "diff <(sort a) <(sort f.txt)",
        "grep -rn /api/ src",
        "cut -d / -f1 f.txt",
        "cd src && ls",
      ]
    ) {
      const check = await checkCommand(line, { sandbox: { available: false }, workspaceRoot: workspace });
      assert.equal(check.verdict, "allow", `${line}: ${check.reasons.join(" | ")}`);
    }
  });

  test("a glob reads its folder whatever the program does with the words (echo, printf, option values)", {
    timeout: 300_000,
  }, async () => {
    // The fuzzer's line (100,000-line pass, seed 20261204): echo never opens a file, but bash lists /srv/outside.
    const asking = [
      "echo \\tjq . /srv/outside/*",
      `echo ${outside}/*`,
      `printf '%s\\n' ${outside}/s*`,
      `echo "${outside}"/*`,
      `echo \\${outside}/*`,
      "echo ../*",
      "echo ../outside/*",
      "echo */../../*",
      "echo .*/*",
      'echo .*/"a"*',
      "echo ~/*",
      `echo {${outside},src}/*`,
      `echo ${outside}/*/x`,
      "echo ${x:-../*}",
      'echo "$d"/*',
      "grep -e ../* f.txt",
      "true /e*/passwd",
    ];
    for (const line of asking) {
      for (const sandbox of SANDBOXES) {
        const check = await checkCommand(line, { sandbox, workspaceRoot: workspace });
        assert.equal(check.verdict, "ask", `${line} lists a folder outside unasked`);
      }
    }
    const folder = await checkCommand(`echo ${outside}/*`, { workspaceRoot: workspace });
    assert.ok(
      folder.reasons.some((reason) => reason.includes(`reads the folder ${outside}, which lies outside the workspace`)),
      folder.reasons.join(" | "),
    );
    // Bash really lists the folder for each kind of word.
    for (const line of [`echo ${outside}/*`, `echo "${outside}"/*`, "echo ../outside/*", "echo ${x:-../outside/*}"]) {
      const run = spawnSync("bash", ["-c", line], { cwd: workspace, encoding: "utf8", timeout: 60_000 });
      assert.match(run.stdout, /secret\.txt/, `${line}: ${run.stderr}`);
    }
    for (
      const line of [
        "echo *",
        "echo src/*.ts *.json",
        'echo "src"/*.ts',
        "echo .*",
        "printf '%s\\n' {src,ro}/*",
        "echo '../*' \"/etc/*\" \\/etc/\\*",
        'echo "${x:-../*}"',
        "echo $(ls)",
        "echo $HOME",
      ]
    ) {
      const check = await checkCommand(line, { sandbox: { available: false }, workspaceRoot: workspace });
      assert.equal(check.verdict, "allow", `${line}: ${check.reasons.join(" | ")}`);
    }
    // A folder a policy file hides is not listed either.
    const rules = PolicyRules.fromLayers([{ name: "project", config: { paths: { deny: ["ro/**"] } } }], workspace);
    const hidden = await checkCommand("echo ro/*", { workspaceRoot: workspace, rules });
    assert.equal(hidden.verdict, "deny", hidden.reasons.join(" | "));
  });

  test("an option after the operands counts: GNU programs permute their arguments", { timeout: 300_000 }, async () => {
    // `{-rf,a}` expands to `-rf a`: grep's -f takes `a` as the pattern file, so the first operand is a file read
    // (100,000-line pass, seed 20261204).
    for (
      const line of [
        `grep ${outside}/secret.txt {-rf,a}`,
        `grep ${outside}/secret.txt {-vf,a}`,
        `grep ${outside}/secret.txt a {-f,a}`,
        `grep ${outside}/secret.txt a $X`,
        `grep ${outside}/secret.txt a -f a`,
        `grep ${outside}/secret.txt a --unknown-option`,
        `grep ${outside}/secret.txt *`,
        `rg ${outside}/secret.txt {-f,a}`,
        `sed ${outside}/secret.txt {-f,a}`,
        `grep ${outside}/secret.txt {1..-3}`,
      ]
    ) {
      const check = await checkCommand(line, { sandbox: { available: false }, workspaceRoot: workspace });
      assert.equal(check.verdict, "ask", `${line}: the first operand went unjudged`);
      assert.ok(check.reasons.some((reason) => reason.includes(`${outside}/secret.txt`)), check.reasons.join(" | "));
    }
    const run = spawnSync("bash", ["-c", `grep ${outside}/secret.txt {-vf,a}`], {
      cwd: workspace,
      encoding: "utf8",
      timeout: 60_000,
    });
    assert.match(run.stdout, new RegExp(PLANTED), run.stderr);
    // `--include=../*` is a pattern in a folder named `--include=..`, inside.
    assert.equal((await checkCommand("grep --include=../* x f.txt", { workspaceRoot: workspace })).verdict, "allow");
    // Brace alternatives that cannot be options leave the pattern a pattern.
    for (const line of ["grep /api/ {f.txt,a}", "grep -n /api/ src/{a,b}.ts", "grep /api/ f.txt -n"]) {
      const check = await checkCommand(line, { sandbox: { available: false }, workspaceRoot: workspace });
      assert.equal(check.verdict, "allow", `${line}: ${check.reasons.join(" | ")}`);
    }
  });

  test("an option-looking word after an operand is judged as a file too", { timeout: 300_000 }, async () => {
    // xxd, the BSD tools and GNU's under POSIXLY_CORRECT stop reading options at the first operand: `cat a -x`
    // reads `./-x`. Before any operand the word is an option (`cat -linked` is refused by GNU cat and BSD cat).
    const link = join(workspace, "-linked");
    await symlink(join(outside, "secret.txt"), link);
    try {
      for (
        const line of ["cat a -linked", "head -n 1 a -linked", "xxd --- -linked", "xxd a -linked", "sort a -linked"]
      ) {
        const check = await checkCommand(line, { sandbox: { available: false }, workspaceRoot: workspace });
        assert.equal(check.verdict, "ask", `${line} was allowed`);
        assert.match(check.reasons.join(" | "), /`-linked`.*leads through a link/, line);
      }
      const run = spawnSync("bash", ["-c", "POSIXLY_CORRECT=1 cat a -linked"], {
        cwd: workspace,
        encoding: "utf8",
        timeout: 60_000,
      });
      assert.match(run.stdout, new RegExp(PLANTED), run.stderr);
      for (const line of ["cat -n a", "ls -la", "grep -rn x -- a", "sed -n -es/../x/ a"]) {
        const check = await checkCommand(line, { sandbox: { available: false }, workspaceRoot: workspace });
        assert.equal(check.verdict, "allow", `${line}: ${check.reasons.join(" | ")}`);
      }
    } finally {
      await rm(link);
    }
    // xxd's output file is judged as a write: a read-only or denied one is denied.
    const rules = PolicyRules.fromLayers([{
      name: "project",
      config: { paths: { deny: ["**/.env"], readOnly: ["ro/**"] } },
    }], workspace);
    for (const line of ["xxd a ro/f", "xxd a .env", "xxd -- a .env"]) {
      const decided = await decideCommand(line, { rules, workspaceRoot: workspace, sandbox: "off" });
      assert.equal(decided.decision, "deny", `${line}: ${decided.reason}`);
    }
  });

  test("a value attached to a short option is the whole rest of its word, `=` included: `date -fk=y` reads `k=y`", {
    timeout: 300_000,
  }, async () => {
    // getopt gives `-f` the rest of its word; `=` separates nothing with one dash. Judging only what follows the `=`
    // (`y`, inside) let a link `k=y` a repository holds lead the read out: date and hexdump print the lines they
    // cannot parse.
    const links = ["k=y", "k=", "a=b=c"];
    for (const name of links) await symlink(join(outside, "secret.txt"), join(workspace, name));
    await symlink(outside, join(workspace, "t=d"));
    try {
      const lines: string[] = [];
      for (const name of links) {
        for (
          const form of ["date -fNAME", "date -ufNAME", "date -rNAME", "hexdump -fNAME a", "du -XNAME .", "sort -mNAME"]
        ) {
          lines.push(form.replace("NAME", name));
        }
      }
      // Every rest of the word, `=` included, for the unknown option of a program read by its shape, and a folder.
      lines.push("date -d now -fk=y", "grep -x -Xk=y a", "sort -Tt=d a", "sort -uTt=d a");
      // Quoted, in pieces: the same word to bash.
      lines.push("date -f'k=y'", 'date "-fk=y"', 'date -f"k"=y', "date -fk\\=y", "date -u -f'k'=\"y\"");
      for (const line of lines) {
        for (const sandbox of SANDBOXES) {
          const check = await checkCommand(line, { sandbox, workspaceRoot: workspace });
          assert.equal(check.verdict, "ask", `${line} was allowed (sandbox ${sandbox.available})`);
          assert.match(check.reasons.join(" | "), /leads through a link/, line);
        }
      }
      for (const line of ["date -fk=y", "hexdump -fk=y a"]) {
        const run = spawnSync("bash", ["-c", line], { cwd: workspace, encoding: "utf8", timeout: 60_000 });
        assert.match(run.stdout + run.stderr, new RegExp(PLANTED), `${line} did not read the planted file`);
      }
      // Go's `-name=x` and clap's `-f=x` read what follows the `=`: still judged.
      for (const line of ["date -f=../outside/secret.txt", `du -X=${outside}/secret.txt .`]) {
        const check = await checkCommand(line, { sandbox: { available: false }, workspaceRoot: workspace });
        assert.equal(check.verdict, "ask", `${line} was allowed`);
      }
      // Ordinary `=` in option values still runs.
      for (
        const line of ["cut -d= -f1 f.txt", "sort -t= -k2 f.txt", "awk -F= '{print $1}' f.txt", "du -d1 .", "date -d=1"]
      ) {
        const check = await checkCommand(line, { sandbox: { available: false }, workspaceRoot: workspace });
        assert.equal(check.verdict, "allow", `${line}: ${check.reasons.join(" | ")}`);
      }
    } finally {
      for (const name of [...links, "t=d"]) await rm(join(workspace, name));
    }
  });

  test("ripgrep's ignore files are judged where it walks and above: a link `.ignore` leading out prints its lines", {
    timeout: 300_000,
  }, async () => {
    // rg opens .ignore, .rgignore and .gitignore by name in every folder it walks and in the folders above the ones
    // it is given, following links, and prints each line it cannot read as a glob.
    const folder = join(workspace, "ig");
    await mkdir(join(folder, "sub", "deep"), { recursive: true });
    await writeFile(join(folder, "sub", "deep", "f.txt"), "hello\n");
    await writeFile(join(outside, "creds"), `token={${PLANTED}\n`);
    try {
      for (
        const [link, lines] of [
          ["ig/.ignore", [
            "rg hello",
            "rg hello ig",
            "rg -n hello .",
            "rg --files",
            "rg -uu hello ig",
            "rg hello ig/sub",
          ]],
          ["ig/sub/deep/.rgignore", ["rg hello", "rg hello ig", "rg --files ig/sub", "rg -i hello -- ig"]],
          ["ig/sub/.gitignore", ["rg hello ig/sub/deep", "rg hello ig/sub/deep/f.txt", "rg -e hello ig/sub/deep"]],
        ] as const
      ) {
        await symlink(join(outside, "creds"), join(workspace, link));
        try {
          for (const line of lines) {
            for (const sandbox of SANDBOXES) {
              const check = await checkCommand(line, { sandbox, workspaceRoot: workspace });
              assert.equal(check.verdict, "ask", `${line} was allowed with ${link} (sandbox ${sandbox.available})`);
              assert.match(check.reasons.join(" | "), /has the file .*reads .*leads through a link/, line);
            }
          }
          // stdin not a pipe: rg given no path searches a piped stdin instead of the folder (node's spawnSync pipes it).
          const run = spawnSync("bash", ["-c", lines[0]], {
            cwd: workspace,
            encoding: "utf8",
            timeout: 60_000,
            stdio: ["ignore", "pipe", "pipe"],
          });
          assert.match(run.stderr, new RegExp(PLANTED), `${lines[0]} did not print the line behind ${link}`);
        } finally {
          await rm(join(workspace, link));
        }
      }
      // A tree bigger than the checker walks for links a program follows (a repository's node_modules) is looked
      // through for the names: plain rg still runs, and a link deep inside still asks.
      const big = join(folder, "big");
      await mkdir(big);
      for (let batch = 0; batch < 12; batch++) {
        const files = join(big, `b${batch}`);
        await mkdir(files);
        await Promise.all(Array.from({ length: 1_000 }, (_, i) => writeFile(join(files, `f${i}`), "")));
      }
      const plain = await checkCommand("rg hello ig", { sandbox: { available: false }, workspaceRoot: workspace });
      assert.equal(plain.verdict, "allow", plain.reasons.join(" | "));
      await symlink(join(outside, "creds"), join(big, "b7", ".ignore"));
      const deep = await checkCommand("rg hello ig", { sandbox: { available: false }, workspaceRoot: workspace });
      assert.equal(deep.verdict, "ask", "rg hello ig was allowed with ig/big/b7/.ignore");
      await rm(big, { recursive: true });
      // Ignore files that are files, and links inside, are read as they are.
      await writeFile(join(folder, ".ignore"), "*.log\n");
      await symlink("../.ignore", join(folder, "sub", ".rgignore"));
      for (const line of ["rg hello ig", "rg --files ig/sub/deep", "grep -r hello ig"]) {
        const check = await checkCommand(line, { sandbox: { available: false }, workspaceRoot: workspace });
        assert.equal(check.verdict, "allow", `${line}: ${check.reasons.join(" | ")}`);
      }
    } finally {
      await rm(folder, { recursive: true, force: true });
      await rm(join(outside, "creds"), { force: true });
    }
  });

  test(
    "ripgrep's git exclude file is judged: `.git/info/exclude`, and the one a `.git` file's gitdir and commondir name",
    {
      timeout: 300_000,
    },
    async () => {
      // In each folder it walks and above that holds `.git`, rg reads `.git/info/exclude` (following links) or, when
      // `.git` is a file, `<commondir>/info/exclude` of the `gitdir:` it names, and prints the lines it cannot read as
      // globs: a `.git` file of the workspace reaches any folder's info/exclude with no link at all.
      const folder = join(workspace, "gx");
      const gitOut = join(outside, "gitout");
      await mkdir(join(gitOut, "info"), { recursive: true });
      await writeFile(join(gitOut, "info", "exclude"), `token={${PLANTED}\n`);
      const setups: [string, () => Promise<void>][] = [
        [".git/info/exclude a link out", async () => {
          await mkdir(join(folder, ".git", "info"), { recursive: true });
          await symlink(join(gitOut, "info", "exclude"), join(folder, ".git", "info", "exclude"));
        }],
        [".git/info a link out", async () => {
          await mkdir(join(folder, ".git"), { recursive: true });
          await symlink(join(gitOut, "info"), join(folder, ".git", "info"));
        }],
        [".git a link out", () => symlink(gitOut, join(folder, ".git"))],
        [".git file, commondir absolute outside", async () => {
          await mkdir(join(folder, "g"), { recursive: true });
          await writeFile(join(folder, ".git"), `gitdir: ${join(folder, "g")}\n`);
          await writeFile(join(folder, "g", "commondir"), `${gitOut}\n`);
        }],
        [".git file, relative gitdir and commondir, exclude a link", async () => {
          await mkdir(join(folder, "g"), { recursive: true });
          await mkdir(join(folder, "cd", "info"), { recursive: true });
          await writeFile(join(folder, ".git"), "gitdir: ./g\n");
          await writeFile(join(folder, "g", "commondir"), "../cd\n");
          await symlink(join(gitOut, "info", "exclude"), join(folder, "cd", "info", "exclude"));
        }],
      ];
      try {
        for (const [setup, make] of setups) {
          await mkdir(join(folder, "sub"), { recursive: true });
          await writeFile(join(folder, "sub", "f.txt"), "hello\n");
          await make();
          try {
            for (const line of ["rg hello", "rg hello gx", "rg --files gx", "rg hello gx/sub", "rg -uu hello gx"]) {
              for (const sandbox of SANDBOXES) {
                const check = await checkCommand(line, { sandbox, workspaceRoot: workspace });
                assert.equal(check.verdict, "ask", `${line} was allowed with ${setup} (sandbox ${sandbox.available})`);
                assert.match(check.reasons.join(" | "), /has the file .*which the command reads/, line);
              }
            }
            if (installed("rg")) {
              const run = spawnSync("rg", ["hello"], {
                cwd: folder,
                encoding: "utf8",
                timeout: 60_000,
                stdio: ["ignore", "pipe", "pipe"],
              });
              assert.match(run.stderr, new RegExp(PLANTED), `rg hello did not print the exclude line with ${setup}`);
            }
          } finally {
            await rm(folder, { recursive: true, force: true });
          }
        }
        // A repository's own exclude file, and a worktree's `.git` file, are read as they are.
        await mkdir(join(folder, "sub"), { recursive: true });
        await writeFile(join(folder, "sub", "f.txt"), "hello\n");
        const git = (...args: string[]) =>
          spawnSync("git", ["-C", folder, "-c", "user.name=t", "-c", "user.email=t@t", ...args], { timeout: 60_000 });
        git("init", "-q");
        await writeFile(join(folder, ".git", "info", "exclude"), "*.log\n");
        git("commit", "-q", "--allow-empty", "-m", "i");
        git("worktree", "add", "-q", "wt");
        assert.ok(existsSync(join(folder, "wt", ".git")), "the worktree was not made");
        for (const line of ["rg hello gx", "rg hello gx/sub", "rg --files gx/wt"]) {
          const check = await checkCommand(line, { sandbox: { available: false }, workspaceRoot: workspace });
          assert.equal(check.verdict, "allow", `${line}: ${check.reasons.join(" | ")}`);
        }
      } finally {
        await rm(folder, { recursive: true, force: true });
        await rm(gitOut, { recursive: true, force: true });
      }
    },
  );

  test("tree's .info files are judged where it walks: a link leading out prints its indented lines", {
    timeout: 300_000,
  }, async () => {
    // tree --info prints, under each file of a folder, the indented lines that follow a line naming it in the
    // folder's .info: an ssh config's `Host x` / `<tab>IdentityFile ...` shows beside a file named `Host x`.
    const folder = join(workspace, "tr");
    await mkdir(join(folder, "sub"), { recursive: true });
    await writeFile(join(folder, "sub", "Host gh"), "");
    await writeFile(join(outside, "sshconfig"), `Host gh\n\tIdentityFile ${PLANTED}\n`);
    try {
      for (const link of ["tr/sub/.info", "tr/.info", "tr/sub/.gitignore"]) {
        await symlink(join(outside, "sshconfig"), join(workspace, link));
        try {
          for (const line of ["tree --info tr", "tree -a --info --noreport tr", "tree tr", "tree --gitignore tr/"]) {
            for (const sandbox of SANDBOXES) {
              const check = await checkCommand(line, { sandbox, workspaceRoot: workspace });
              assert.equal(check.verdict, "ask", `${line} was allowed with ${link} (sandbox ${sandbox.available})`);
              assert.match(check.reasons.join(" | "), /has the file .*reads .*leads through a link/, line);
            }
          }
        } finally {
          await rm(join(workspace, link));
        }
      }
      await symlink(join(outside, "sshconfig"), join(workspace, "tr/sub/.info"));
      const installed = spawnSync("tree", ["--version"], { encoding: "utf8" }).status === 0;
      if (installed) {
        const run = spawnSync("tree", ["--info", "tr"], { cwd: workspace, encoding: "utf8", timeout: 60_000 });
        assert.match(run.stdout, new RegExp(PLANTED), "tree --info did not print the line behind the link");
      }
      await rm(join(workspace, "tr/sub/.info"));
      // Its own .info files are read as they are; a folder above the one it is given is not read.
      await writeFile(join(folder, "sub", ".info"), "Host gh\n\tthe host\n");
      await symlink(join(outside, "sshconfig"), join(workspace, "tr/.info"));
      const check = await checkCommand("tree --info tr/sub", {
        sandbox: { available: false },
        workspaceRoot: workspace,
      });
      assert.equal(check.verdict, "allow", check.reasons.join(" | "));
    } finally {
      await rm(folder, { recursive: true, force: true });
      await rm(join(outside, "sshconfig"), { force: true });
    }
  });

  test("a line that starts in a subfolder (cwd) is judged from there, not from the root", {
    timeout: 300_000,
  }, async () => {
    // `src/out -> outside`: from `src`, `out/secret.txt` is the planted file; from the root, a missing file inside.
    await symlink(outside, join(workspace, "src", "out"));
    try {
      for (const sandbox of SANDBOXES) {
        for (const line of ["cat out/secret.txt", "cat */secret.txt", "grep -R x .", "rg -L x", "cd out && cat *"]) {
          const check = await checkCommand(line, { sandbox, workspaceRoot: workspace, cwd: join(workspace, "src") });
          assert.equal(check.verdict, "ask", `${line} was allowed from src`);
          assert.ok(check.reasons.some((reason) => reason.includes(outside)), check.reasons.join(" | "));
        }
        const inside = await checkCommand("cat ../f.txt", {
          sandbox,
          workspaceRoot: workspace,
          cwd: join(workspace, "src"),
        });
        assert.equal(inside.verdict, "ask", "`..` steps out of the folder, as from the root");
      }
      const rules = PolicyRules.fromLayers(
        [{ name: "project", config: { paths: { deny: ["src/*.pem"] } } }],
        workspace,
      );
      const denied = await decideCommand("cat key.pem", {
        rules,
        workspaceRoot: workspace,
        cwd: join(workspace, "src"),
        sandbox: "off",
      });
      assert.equal(denied.decision, "deny", denied.reason);
    } finally {
      await rm(join(workspace, "src", "out"));
    }
  });

  test("a brace sequence is judged term by term: a link between its ends is reached", {
    timeout: 300_000,
  }, async () => {
    // bash makes every term; `o` lies between `n` and `p`, `02` between `01` and `03`.
    const links = ["o", "2", "02", "k"];
    for (const name of links) await symlink(outside, join(workspace, name));
    try {
      const lines = [
        "cat {n..p}/secret.txt",
        "cat {a..z}/secret.txt",
        "cat {m..q..2}/secret.txt",
        "cat {z..a..-1}/secret.txt",
        "cat {1..3}/secret.txt",
        "cat {3..1}/secret.txt",
        "cat {01..03}/secret.txt",
        "cat {0..4..2}/secret.txt",
        "ls {j..l}",
      ];
      for (const sandbox of SANDBOXES) {
        for (const line of lines) {
          const check = await checkCommand(line, { sandbox, workspaceRoot: workspace });
          assert.equal(check.verdict, "ask", `${line} was allowed`);
          assert.ok(check.reasons.some((reason) => reason.includes(outside)), check.reasons.join(" | "));
        }
      }
      const run = spawnSync("bash", ["-c", "cat {n..p}/secret.txt"], { cwd: workspace, encoding: "utf8" });
      assert.match(run.stdout, new RegExp(PLANTED), "bash reads the term between the ends");
      // Too many terms to follow asks; a sequence that names nothing outside still runs.
      assert.equal((await checkCommand("cat {1..1000}/x", { workspaceRoot: workspace })).verdict, "ask");
      for (const line of ["echo {1..100}", "cat f{a..c}.txt", "grep x src/{a..c}.ts"]) {
        const check = await checkCommand(line, { sandbox: { available: false }, workspaceRoot: workspace });
        assert.equal(check.verdict, "allow", `${line}: ${check.reasons.join(" | ")}`);
      }
    } finally {
      for (const name of links) await rm(join(workspace, name));
    }
  });

  test("a `cd` in a loop may run any number of times: the folders below it are not known", {
    timeout: 300_000,
  }, async () => {
    // `d/d/d/l -> outside`: each round of the loop goes one `d` deeper, past the one level a lone `cd d` reaches.
    await mkdir(join(workspace, "d", "d", "d"), { recursive: true });
    await symlink(outside, join(workspace, "d", "d", "d", "l"));
    try {
      const lines = [
        "while cd d 2>/dev/null; do true; done; cat l/secret.txt",
        "until ! cd d 2>/dev/null; do true; done; cat l/secret.txt",
        "while true; do cd d || break; done; cat l/secret.txt",
        "while cd d 2>/dev/null; do true; done && grep -r x l/",
      ];
      for (const sandbox of SANDBOXES) {
        for (const line of lines) {
          const check = await checkCommand(line, { sandbox, workspaceRoot: workspace });
          assert.equal(check.verdict, "ask", `${line} was allowed`);
        }
      }
      const run = spawnSync("bash", ["-c", lines[0]], { cwd: workspace, encoding: "utf8", timeout: 60_000 });
      assert.match(run.stdout, new RegExp(PLANTED), "bash reaches the link three folders down");
      // Once, or to an absolute folder inside, the folders are known as before.
      for (const line of ["cd d && cat x", `while false; do cd ${workspace}/src; done; ls`, "cd d; cd d; ls"]) {
        const check = await checkCommand(line, { sandbox: { available: false }, workspaceRoot: workspace });
        assert.equal(check.verdict, "allow", `${line}: ${check.reasons.join(" | ")}`);
      }
    } finally {
      await rm(join(workspace, "d"), { recursive: true });
    }
  });

  test("a dangling link is judged by where it leads: a program that writes through it creates the file there", {
    timeout: 300_000,
  }, async () => {
    // `dangling -> outside/new` (missing): it was judged as a missing file inside, so with an allow rule for touch,
    // `touch dangling` created outside/new without asking.
    await symlink(join(outside, "new"), join(workspace, "dangling"));
    await mkdir(join(workspace, "chain"));
    await symlink("../dangling", join(workspace, "chain", "hop"));
    await symlink("missing-inside", join(workspace, "chain", "stays"));
    const rules = PolicyRules.fromLayers([{ name: "project", config: { commands: { allow: ["touch"] } } }], workspace);
    try {
      for (const line of ["touch dangling", "touch chain/hop", "cat dangling", "sed -n p chain/hop"]) {
        for (const sandbox of SANDBOXES) {
          const check = await checkCommand(line, {
            allowlist: [...DEFAULT_COMMAND_ALLOWLIST, "touch"],
            sandbox,
            workspaceRoot: workspace,
          });
          assert.equal(check.verdict, "ask", `${line} was allowed`);
          assert.ok(check.reasons.some((reason) => reason.includes(join(outside, "new"))), check.reasons.join(" | "));
        }
        const decided = await decideCommand(line, { rules, workspaceRoot: workspace, sandbox: "off" });
        assert.notEqual(decided.decision, "allow", `${line}: ${decided.reason}`);
      }
      // A dangling link that stays inside is judged inside.
      const inside = await decideCommand("touch chain/stays", { rules, workspaceRoot: workspace, sandbox: "off" });
      assert.equal(inside.decision, "allow", inside.reason);
      spawnSync("bash", ["-c", "touch dangling"], { cwd: workspace, timeout: 60_000 });
      assert.equal(await realpath(join(workspace, "dangling")), join(outside, "new"), "touch created the target");
    } finally {
      await rm(join(workspace, "dangling"));
      await rm(join(workspace, "chain"), { recursive: true });
      await rm(join(outside, "new"), { force: true });
    }
  });

  test("a link the line moves, copies or makes is judged from where it will lie", { timeout: 300_000 }, async () => {
    // `carry/l -> ../outside/secret.txt` leads to the missing `carry/../outside`... inside, from where it lies; moved
    // to the root it leads to the planted file, and `cat l` after it read the file (an allow rule for mv, no sandbox).
    await mkdir(join(workspace, "carry", "deep"), { recursive: true });
    await symlink("../outside/secret.txt", join(workspace, "carry", "l"));
    await symlink("../../outside/secret.txt", join(workspace, "carry", "deep", "l"));
    await symlink("../a", join(workspace, "carry", "fine"));
    const rules = PolicyRules.fromLayers(
      [{ name: "project", config: { commands: { allow: ["mv", "cp", "ln"] } } }],
      workspace,
    );
    try {
      const lines = [
        "mv carry/l l && cat l",
        "mv carry/l . && cat l",
        "mv -t . carry/l && cat l",
        "cp -P carry/l l && cat l",
        "cp -a carry/l l",
        "mv carry/deep moved",
        "cp -r carry/deep moved",
        "ln -s ../../outside/secret.txt carry/new",
        "cd carry && ln -s ../../outside/secret.txt new",
      ];
      for (const sandbox of ["off", "required"] as const) {
        for (const line of lines) {
          const decided = await decideCommand(line, { rules, workspaceRoot: workspace, sandbox });
          assert.notEqual(decided.decision, "allow", `${line} (${sandbox}) was allowed`);
        }
      }
      const run = spawnSync("bash", ["-c", "cp -P carry/l l && cat l; rm -f l"], { cwd: workspace, encoding: "utf8" });
      assert.match(run.stdout, new RegExp(PLANTED), "the moved link leads to the planted file");
      // Links that still lead inside from their new place, and copies that follow links, run.
      for (const line of ["mv carry/fine carry/fine2", "cp carry/fine copy", "ln -s a b", "mv carry elsewhere/"]) {
        const decided = await decideCommand(line, { rules, workspaceRoot: workspace, sandbox: "off" });
        if (line !== "mv carry elsewhere/") assert.equal(decided.decision, "allow", `${line}: ${decided.reason}`);
      }
    } finally {
      await rm(join(workspace, "carry"), { recursive: true });
    }
  });

  test("the session temp dir counts as inside", { timeout: 300_000 }, async () => {
    const check = await checkCommand(`cat ${outside}/secret.txt`, {
      sandbox: { available: false },
      workspaceRoot: workspace,
      tempDir: outside,
    });
    assert.equal(check.verdict, "allow", check.reasons.join(" | "));
  });

  test("a path a policy file denies is denied, a read-only one denies writes", { timeout: 300_000 }, async () => {
    const rules = PolicyRules.fromLayers([{
      name: "project",
      config: { paths: { deny: ["**/.env"], readOnly: ["ro/**"] } },
    }], workspace);
    const decide = (line: string) => decideCommand(line, { rules, workspaceRoot: workspace, sandbox: "off" });
    for (
      const line of [
        "cat .env",
        "wc -l < .env",
        "grep -f .env a",
        "sort --files0-from=.env",
        "rm .env",
        "cat ./src/../.env",
      ]
    ) {
      const decided = await decide(line);
      if (line.includes("..")) assert.notEqual(decided.decision, "allow", line);
      else assert.equal(decided.decision, "deny", `${line}: ${decided.reason}`);
    }
    assert.match((await decide("cat .env")).reason, /"\.env" names a path denied by the rule "\*\*\/\.env"/);
    assert.equal((await decide("echo x > ro/f")).decision, "deny");
    // Reading a read-only file is no write; it asks here only because the policy hides paths and there is no sandbox.
    assert.match((await decide("cat ro/f")).reason, /OS sandbox that hides them/);
  });

  test("a program an allow rule lets write cannot change a read-only path, named, in a folder or below one", {
    timeout: 300_000,
  }, async () => {
    // `cp` and friends were judged as reading their operands: `cp e ro/f` overwrote the read-only file, with the
    // sandbox and without it (the sandbox does not bind read-only paths read-only).
    await mkdir(join(workspace, "ro", "sub"), { recursive: true });
    await mkdir(join(workspace, "from", "ro"), { recursive: true });
    await writeFile(join(workspace, "from", "ro", "f"), "evil\n");
    const rules = PolicyRules.fromLayers([{
      name: "project",
      config: {
        commands: { allow: ["cp", "mv", "ln", "rm", "touch", "install", "chmod"] },
        paths: { readOnly: ["ro/**"] },
      },
    }], workspace);
    try {
      for (const sandbox of ["off", "required"] as const) {
        const decide = (line: string) => decideCommand(line, { rules, workspaceRoot: workspace, sandbox });
        for (
          const line of [
            "cp a ro/f",
            "cp a ro",
            "cp a ro/",
            "cp -t ro a",
            "cp -tro a",
            "cp --target-directory=ro a",
            "cp --target ro a",
            "cp -r from/ro .",
            "cp -a from/ro/ ./",
            "cp -rT from .",
            "cp -r from/. .",
            "mv a ro/f",
            "mv ro gone",
            "mv -t ro a",
            "ln -sf /x ro/f",
            "ln -s a ro",
            "install a ro/f",
            "touch ro/f",
            "rm ro/f",
            "rm -r ro",
            "rm -rf -- ro",
            "chmod -R 777 ro",
            "cd ro && touch f",
          ]
        ) {
          const decided = await decide(line);
          assert.equal(decided.decision, "deny", `${line} (${sandbox}): ${decided.reason}`);
          assert.match(decided.reason, /the line writes, read-only by the rule "ro\/\*\*"/, line);
        }
        for (
          const line of ["cp ro/f copy", "cp -r ro elsewhere", "cp a b", "mkdir -p new/dir", "rm a.bak", "ln -s ro l"]
        ) {
          const decided = await decide(line);
          assert.notEqual(decided.decision, "deny", `${line} (${sandbox}): ${decided.reason}`);
        }
      }
    } finally {
      await rm(join(workspace, "from"), { recursive: true });
      await rm(join(workspace, "ro", "sub"), { recursive: true });
    }
  });

  test("without the sandbox, a protected path a line writes needs a person, whoever allowed the program", {
    timeout: 300_000,
  }, async () => {
    // An allow rule for `cp` let `cp e .git/hooks/pre-commit` write a git hook (and `.npmrc`) with the sandbox off,
    // where nothing keeps protected paths read-only; the file tools ask a person for the same write.
    await mkdir(join(workspace, ".git", "hooks"), { recursive: true });
    const rules = PolicyRules.fromLayers(
      [{ name: "project", config: { commands: { allow: ["cp", "mv", "ln"] } } }],
      workspace,
    );
    try {
      for (
        const line of [
          "cp a .git/hooks/pre-commit",
          "cp a .git/hooks",
          "cp -t .git/hooks a",
          "cp a .npmrc",
          "cp a src/.npmrc",
          "mv a .git/config",
          "ln -sf a .git/hooks/pre-push",
          "cd src && cp ../a .npmrc",
          "sed -n 'w .npmrc' a",
        ]
      ) {
        const decided = await personAsked(line, rules);
        if (!line.includes("..")) assert.match(decided.reason, /writes the protected path/, line);
        const run = await authorizeCommand({
          state: new PolicyState(),
          asker: autoHost(),
          sandbox: "off",
          rules,
          workspaceRoot: workspace,
        }, line)
          .then(() => "ran", () => "refused");
        assert.equal(run, "refused", `${line} ran on an automatic answer`);
      }
      // Reading one, or writing elsewhere, is as before; in the sandbox, protected paths are read-only.
      for (const line of ["cp .npmrc copy", "cp a b", "cat .git/hooks/x"]) {
        const decided = await decideCommand(line, { rules, workspaceRoot: workspace, sandbox: "off" });
        assert.equal(decided.decision, "allow", `${line}: ${decided.reason}`);
      }
      const sandboxed = await checkCommand("cp a .npmrc", {
        allowlist: [...DEFAULT_COMMAND_ALLOWLIST, "cp"],
        sandbox: { available: true },
        workspaceRoot: workspace,
      });
      assert.equal(sandboxed.verdict, "allow", sandboxed.reasons.join(" | "));
      assert.equal(sandboxed.paths.find((found) => found.protected !== undefined)?.protected, ".npmrc");
    } finally {
      await rm(join(workspace, ".git"), { recursive: true });
    }
  });

  test("a folder copied or moved whole is judged by what it puts in the destination, new files too", {
    timeout: 300_000,
  }, async () => {
    // Only what was already in the destination was judged: with an allow rule for cp and the sandbox off,
    // `cp -rT kit .` put kit's `.npmrc` and `.git/hooks/pre-commit` in the workspace without a person's yes, and
    // `cp -r kit/. .` wrote `kept/new` past the read-only rule "kept/**" (no `kept` folder was there to judge).
    await mkdir(join(workspace, "kit", ".git", "hooks"), { recursive: true });
    await mkdir(join(workspace, "kit", "kept"), { recursive: true });
    await writeFile(join(workspace, "kit", ".npmrc"), "registry=http://evil.example/\n");
    await writeFile(join(workspace, "kit", ".git", "hooks", "pre-commit"), "#!/bin/sh\n");
    await writeFile(join(workspace, "kit", "kept", "new"), "evil\n");
    const allow = { commands: { allow: ["cp", "mv"] } };
    const rules = PolicyRules.fromLayers([{ name: "project", config: allow }], workspace);
    const readOnly = PolicyRules.fromLayers(
      [{ name: "project", config: { ...allow, paths: { readOnly: ["kept/**"] } } }],
      workspace,
    );
    try {
      for (const line of ["cp -rT kit .", "cp -r kit/. .", "cp -a kit/ copy", "cp -r kit copy", "mv kit moved"]) {
        await personAsked(line, rules, /writes the protected path/);
      }
      for (const line of ["cp -r kit/. .", "cp -rT kit ."]) {
        const decided = await decideCommand(line, { rules: readOnly, workspaceRoot: workspace, sandbox: "off" });
        assert.equal(decided.decision, "deny", `${line}: ${decided.reason}`);
        assert.match(decided.reason, /read-only by the rule "kept\/\*\*"/, line);
      }
      // A folder without such files copies as before.
      const plain = await decideCommand("cp -r kit/kept copy", { rules, workspaceRoot: workspace, sandbox: "off" });
      assert.equal(plain.decision, "allow", plain.reason);
      // What the line would have done.
      spawnSync("bash", ["-c", "cp -rT kit ."], { cwd: workspace, timeout: 60_000 });
      assert.equal(await readFile(join(workspace, ".npmrc"), "utf8"), "registry=http://evil.example/\n");
    } finally {
      for (const made of ["kit", "kept", ".git", ".npmrc", "copy"]) {
        await rm(join(workspace, made), { recursive: true, force: true });
      }
    }
  });

  test("a file named by an option or a key=value word, and files only the run names, are judged as written", {
    timeout: 300_000,
  }, async () => {
    // With allow rules for these programs and the sandbox off, each line ran without a question and wrote
    // `.npmrc` or a git hook (`dd if=a of=.npmrc`, `tar -xf kit.tar`, `split -n 3 -a 1 a .npmr` writes `.npmrc`,
    // `csplit -f .git/hooks/pre- a 1`), or the read-only `kept/f`: the targets were judged as read, or not at all.
    await mkdir(join(workspace, "kit", ".git", "hooks"), { recursive: true });
    await writeFile(join(workspace, "kit", ".npmrc"), "registry=http://evil.example/\n");
    await writeFile(join(workspace, "kit", ".git", "hooks", "pre-commit"), "#!/bin/sh\n");
    const packed = spawnSync("tar", ["-cf", "kit.tar", "-C", "kit", "."], { cwd: workspace, timeout: 60_000 });
    assert.equal(packed.status, 0, String(packed.stderr));
    await mkdir(join(workspace, "sub"));
    await mkdir(join(workspace, ".git", "hooks"), { recursive: true });
    const programs = [
      ...["dd", "shuf", "sort", "patch", "unzip", "tar", "split", "csplit", "zip", "gzip"],
      ...["iconv", "openssl", "mktemp", "gpg", "sqlite3"],
    ];
    const allow = { commands: { allow: programs } };
    const rules = PolicyRules.fromLayers([{ name: "project", config: allow }], workspace);
    const readOnly = PolicyRules.fromLayers(
      [{ name: "project", config: { ...allow, paths: { readOnly: ["kept/**"] } } }],
      workspace,
    );
    try {
      for (
        const line of [
          "dd if=a of=.npmrc",
          "dd if=a of=.git/hooks/pre-commit",
          "shuf -o .npmrc a",
          "sort -o .npmrc a",
          "sort a --output=.npmrc",
          "patch -p0 -i n.diff",
          "patch -p0 < n.diff",
          "patch -o .npmrc a n.diff",
          "unzip -q kit.zip",
          "unzip kit.zip -d sub",
          "tar -xf kit.tar",
          "tar xf kit.tar -C sub",
          "split -n 3 -a 1 a .npmr",
          "split -l1 a .git/hooks/pre-",
          "csplit -f .git/hooks/pre- a 1",
          "zip -q .npmrc a",
          "gzip -S rc .npm",
          "iconv -f utf8 -t utf8 -o .npmrc a",
          "openssl enc -base64 -in a -out .npmrc",
          "mktemp .git/hooks/pre-commitXXX",
          "mktemp -p .git/hooks",
          "gpg --batch -o .npmrc --dearmor a",
        ]
      ) {
        await personAsked(line, rules, /writes the protected path/);
      }
      for (
        const line of [
          "dd if=a of=kept/f",
          "sort -o kept/f a",
          "shuf --output kept/f a",
          "zip -q kept/f a",
          "patch kept/f n.diff",
          "iconv -f utf8 -t utf8 a -o kept/f",
          "openssl enc -in a -out kept/f",
          "gpg --output=kept/f --dearmor a",
        ]
      ) {
        const decided = await decideCommand(line, { rules: readOnly, workspaceRoot: workspace, sandbox: "off" });
        assert.equal(decided.decision, "deny", `${line}: ${decided.reason}`);
        assert.match(decided.reason, /read-only by the rule "kept\/\*\*"/, line);
      }
      // Where the names are only known when it runs, a read-only rule that may match there asks, with the sandbox too.
      for (const line of ["unzip -q kit.zip", "tar -xf kit.tar", "split a kept/x", "patch -p0 < n.diff"]) {
        const check = await checkCommand(line, {
          allowlist: [...DEFAULT_COMMAND_ALLOWLIST, ...programs],
          sandbox: { available: true },
          workspaceRoot: workspace,
          rules: readOnly,
        });
        assert.notEqual(check.verdict, "allow", line);
      }
      // sqlite3 runs shell commands (`.shell`, `.system`) and writes files (`.output F`) from its own language.
      // What they write is only known when it runs: without the sandbox, a person decides.
      const sqlite = await checkCommand('sqlite3 x.db ".shell touch PWN"', { workspaceRoot: workspace });
      assert.ok(sqlite.reasons.some((reason) => /sqlite3.*can run shell commands/.test(reason)), sqlite.reasons[0]);
      await personAsked('sqlite3 x.db ".shell touch PWN"', rules);
      // dd reads the file of `if=`.
      const outsideRead = await decideCommand("dd if=../outside/secret.txt of=copy", {
        rules,
        workspaceRoot: workspace,
        sandbox: "off",
      });
      assert.equal(outsideRead.decision, "ask", outsideRead.reason);
      // In the sandbox, which keeps protected paths read-only, they run; so does what writes nothing.
      for (const line of ["unzip -q kit.zip", "dd if=a of=b", "split a", "gzip -c a", "tar -tf kit.tar"]) {
        const check = await checkCommand(line, {
          allowlist: [...DEFAULT_COMMAND_ALLOWLIST, ...programs],
          sandbox: { available: true },
          workspaceRoot: workspace,
        });
        assert.equal(check.verdict, "allow", `${line}: ${check.reasons.join(" | ")}`);
      }
      // What the lines would have done.
      spawnSync("bash", ["-c", "dd if=a of=.npmrc && tar -xf kit.tar -C sub && csplit -s -f .git/hooks/pre- a 1"], {
        cwd: workspace,
        timeout: 60_000,
      });
      assert.equal(await readFile(join(workspace, ".npmrc"), "utf8"), "a\n");
      assert.equal(await readFile(join(workspace, "sub", ".npmrc"), "utf8"), "registry=http://evil.example/\n");
      assert.ok(existsSync(join(workspace, ".git", "hooks", "pre-00")), "csplit wrote a file in .git/hooks");
      const made = spawnSync("mktemp", ["-p", ".git/hooks"], { cwd: workspace, encoding: "utf8", timeout: 60_000 });
      assert.ok(made.stdout.startsWith(".git/hooks/"), `mktemp made ${made.stdout}`);
    } finally {
      for (const made of ["kit", "kit.tar", "sub", ".git", ".npmrc", "b"]) {
        await rm(join(workspace, made), { recursive: true, force: true });
      }
    }
  });

  test("rsync's and cpio's destinations, and cp --parents' whole source paths, are judged as written", {
    timeout: 300_000,
  }, async () => {
    // With allow rules and the sandbox off, `rsync -a kit/ .` and `cpio -i < kit.cpio` wrote kit's .npmrc in the
    // workspace without a question, `rsync -e 'sh -c "touch PWN"' a x:y` ran touch, and `cp --parents kit/f sub`
    // wrote sub/kit/f past the read-only rule "sub/kit/**" (judged as sub/f).
    await mkdir(join(workspace, "kit"), { recursive: true });
    await mkdir(join(workspace, "sub"), { recursive: true });
    await writeFile(join(workspace, "kit", "f"), "evil\n");
    const allow = { commands: { allow: ["cp", "rsync", "cpio"] } };
    const rules = PolicyRules.fromLayers([{ name: "project", config: allow }], workspace);
    const readOnly = PolicyRules.fromLayers(
      [{ name: "project", config: { ...allow, paths: { readOnly: ["sub/kit/**"] } } }],
      workspace,
    );
    try {
      for (
        const line of ["rsync -a kit/ .", "rsync -r kit/ dst", "cpio -i < kit.cpio", "cpio -idm -D sub < kit.cpio"]
      ) {
        await personAsked(line, rules);
      }
      for (const line of ["cp --parents kit/f sub", "cp --par kit/f sub/", "rsync -a kit sub"]) {
        const decided = await decideCommand(line, { rules: readOnly, workspaceRoot: workspace, sandbox: "off" });
        assert.notEqual(decided.decision, "allow", `${line}: ${decided.reason}`);
      }
      assert.equal(
        (await decideCommand("cp --parents kit/f sub", { rules: readOnly, workspaceRoot: workspace, sandbox: "off" }))
          .decision,
        "deny",
      );
      const allowlist = [...DEFAULT_COMMAND_ALLOWLIST, "rsync", "cpio"];
      for (
        const line of [`rsync -e 'sh -c "touch PWN"' a x:y`, "rsync --rsync-path=sh a b", "cpio -t --rsh-command=sh"]
      ) {
        const check = await checkCommand(line, { allowlist, sandbox: { available: true }, workspaceRoot: workspace });
        assert.equal(check.verdict, "ask", line);
        assert.ok(check.reasons.some((reason) => reason.includes("run a program")), check.reasons.join(" | "));
      }
      // What the line would have done.
      spawnSync("cp", ["--parents", "kit/f", "sub"], { cwd: workspace, timeout: 60_000 });
      assert.equal(await readFile(join(workspace, "sub", "kit", "f"), "utf8"), "evil\n");
    } finally {
      for (const made of ["kit", "sub"]) await rm(join(workspace, made), { recursive: true, force: true });
    }
  });

  test("a file only a flag rule knew a program writes is judged as written: uniq's, tar's, rsync's, tree's, git's", {
    timeout: 300_000,
  }, async () => {
    // With allow rules and the sandbox off, `uniq a .npmrc` (its second operand is its output), `tar -cf .npmrc a`
    // (the archive of create mode) and `tree -o .npmrc` wrote .npmrc on the risk assessor's word, no person asked:
    // only their flag rules knew of the write. `rsync -b --backup-dir=../kept sync/ dst/` (relative to the
    // destination: `kept`), `--partial-dir`, `--temp-dir`, and `git diff --output=kept/f` wrote past the read-only
    // rule "kept/**": judged as reads, or not at all.
    await mkdir(join(workspace, "sync"));
    await mkdir(join(workspace, "dst"));
    await writeFile(join(workspace, "sync", "f"), "new\n");
    await writeFile(join(workspace, "dst", "f"), "old, kept in the backup\n");
    const allow = { commands: { allow: ["uniq", "tar", "rsync", "tree", "git"] } };
    const rules = PolicyRules.fromLayers([{ name: "project", config: allow }], workspace);
    const readOnly = PolicyRules.fromLayers(
      [{ name: "project", config: { ...allow, paths: { readOnly: ["kept/**"] } } }],
      workspace,
    );
    try {
      for (
        const line of [
          "uniq a .npmrc",
          "uniq -f 1 -- a .npmrc",
          "tar -cf .npmrc a",
          "tar cf .npmrc a",
          "tar --file=.npmrc --create a",
          "tar -f .npmrc -r a",
          "tree -o .npmrc",
          "tree -L 1 --output=.npmrc src",
        ]
      ) {
        await personAsked(line, rules, /writes the protected path \.npmrc/);
      }
      for (
        const line of [
          "uniq a kept/f",
          "tar -cf kept/f a",
          "tree -o kept/f",
          "git diff --output=kept/f",
          "git format-patch --output-directory kept HEAD~1",
          "rsync -a -b --backup-dir=../kept sync/ dst/",
          `rsync -a --partial-dir=${workspace}/kept sync/ dst/`,
          "rsync -a --temp-dir ../kept sync/ dst/",
          "rsync -a -T ../kept sync/ dst/",
        ]
      ) {
        const decided = await decideCommand(line, { rules: readOnly, workspaceRoot: workspace, sandbox: "off" });
        assert.equal(decided.decision, "deny", `${line}: ${decided.reason}`);
        assert.match(decided.reason, /the line writes, read-only by the rule "kept\/\*\*"/, line);
      }
      // Reading, and writing elsewhere, is as before.
      for (const line of ["uniq a", "tar -tf a.tar", "tree -L 1 src"]) {
        const decided = await decideCommand(line, { rules: readOnly, workspaceRoot: workspace, sandbox: "off" });
        assert.equal(decided.decision, "allow", `${line}: ${decided.reason}`);
      }
      // What the lines would have done (rsync's where it is installed: the judgement above needs no rsync).
      const demonstrated = installed("rsync") ? ["uniq a .npmrc", "rsync -a -b --backup-dir=../kept sync/ dst/"] : [
        "uniq a .npmrc",
      ];
      for (const line of demonstrated) {
        const ran = spawnSync("bash", ["-c", line], { cwd: workspace, timeout: 60_000 });
        assert.equal(ran.status, 0, String(ran.stderr));
      }
      assert.equal(await readFile(join(workspace, ".npmrc"), "utf8"), "a\n");
      if (demonstrated.length > 1) {
        assert.equal(await readFile(join(workspace, "kept", "f"), "utf8"), "old, kept in the backup\n");
      }
      const packed = spawnSync("bash", ["-c", "tar -cf .npmrc a"], { cwd: workspace, timeout: 60_000 });
      assert.equal(packed.status, 0, String(packed.stderr));
      assert.notEqual(await readFile(join(workspace, ".npmrc"), "utf8"), "a\n");
    } finally {
      for (const made of ["sync", "dst", "kept", ".npmrc"]) {
        await rm(join(workspace, made), { recursive: true, force: true });
      }
    }
  });

  test("what find -delete removes and the file a changing git config writes are judged as written", {
    timeout: 300_000,
  }, async () => {
    // With allow rules and the sandbox off, `find .git/hooks -name pre-commit -delete` removed a git hook and
    // `git config core.hooksPath evil` rewrote .git/config on the risk assessor's word (only the flag rules knew of
    // the writes), and `find kept -delete` emptied the read-only kept/.
    await mkdir(join(workspace, "kept"));
    await writeFile(join(workspace, "kept", "f"), "kept\n");
    const allow = { commands: { allow: ["find", "git"] } };
    const rules = PolicyRules.fromLayers([{ name: "project", config: allow }], workspace);
    const readOnly = PolicyRules.fromLayers(
      [{ name: "project", config: { ...allow, paths: { readOnly: ["kept/**"] } } }],
      workspace,
    );
    try {
      for (
        const line of [
          "find .git/hooks -name pre-commit -delete",
          "find . -name pre-commit -delete",
          "git config core.hooksPath evil",
          "git config set core.hooksPath evil",
        ]
      ) {
        await personAsked(line, rules, /writes the protected path/);
      }
      for (const line of ["find kept -delete", "find kept -name f -delete"]) {
        const decided = await decideCommand(line, { rules: readOnly, workspaceRoot: workspace, sandbox: "off" });
        assert.equal(decided.decision, "deny", `${line}: ${decided.reason}`);
      }
      // Reading the configuration, or finding without deleting, is as before: not denied (git asks here only because
      // it needs the sandbox, which is off).
      for (const line of ["git config core.editor", "find kept -name f"]) {
        const decided = await decideCommand(line, { rules: readOnly, workspaceRoot: workspace, sandbox: "off" });
        assert.equal(decided.decision, line.startsWith("git") ? "ask" : "allow", `${line}: ${decided.reason}`);
        assert.doesNotMatch(JSON.stringify(decided.check?.paths ?? []), /"decision":"deny"/, line);
      }
      // What the line would have done.
      spawnSync("bash", ["-c", "find kept -delete"], { cwd: workspace, timeout: 60_000 });
      assert.equal(existsSync(join(workspace, "kept")), false);
    } finally {
      await rm(join(workspace, "kept"), { recursive: true, force: true });
    }
  });

  test("the files and folders a test runner's or a downloader's options name for it to write are judged as written", {
    timeout: 300_000,
  }, async () => {
    // With the sandbox on (which does not keep read-only paths read-only), `deno test --junit-path=kept/f` wrote
    // the read-only `kept/f`, and `go test -coverprofile=`, `pytest --junitxml=`, `cargo test --target-dir` likewise
    // ran: their flag rules only checked that the value lies in the workspace, and the path rules judged it as read.
    await mkdir(join(workspace, "kept"));
    await writeFile(join(workspace, "kept", "f"), "kept\n");
    const readOnly = PolicyRules.fromLayers(
      [{ name: "project", config: { paths: { readOnly: ["kept/**"] } } }],
      workspace,
    );
    try {
      for (
        const line of [
          "deno test --junit-path=kept/f",
          "deno test --junit-path kept/f",
          "deno test --coverage=kept",
          "deno test --lock=kept/f",
          "go test -coverprofile=kept/f ./...",
          "go test -c -o kept/f ./...",
          "pytest --junitxml=kept/f",
          "python -m pytest --log-file kept/f",
          "cargo test --target-dir kept",
          "cargo test -- --logfile kept/f",
        ]
      ) {
        const check = await checkCommand(line, {
          rules: readOnly,
          sandbox: { available: true },
          workspaceRoot: workspace,
        });
        assert.equal(check.verdict, "deny", `${line}: ${check.reasons.join(" | ")}`);
        assert.ok(
          check.paths.some((found) =>
            found.access === "write" && found.reason?.includes('read-only by the rule "kept/**"')
          ),
          line,
        );
      }
      // The folder curl and wget save downloads in, behind the egress proxy: `wget -P kept URL` wrote kept/file.
      const network = { allow: ["a.example.com"], deny: [] };
      for (
        const line of [
          "curl --output-dir kept -O https://a.example.com/f",
          "wget -P kept https://a.example.com/f",
          "wget --directory-prefix=kept https://a.example.com/f",
        ]
      ) {
        const check = await checkCommand(line, {
          rules: readOnly,
          sandbox: { available: true },
          workspaceRoot: workspace,
          network,
        });
        assert.equal(check.verdict, "deny", `${line}: ${check.reasons.join(" | ")}`);
      }
      // Elsewhere, as before.
      for (const line of ["deno test --junit-path=report.xml", "cargo test --target-dir target"]) {
        const check = await checkCommand(line, {
          rules: readOnly,
          sandbox: { available: true },
          workspaceRoot: workspace,
        });
        assert.equal(check.verdict, "allow", `${line}: ${check.reasons.join(" | ")}`);
      }
    } finally {
      await rm(join(workspace, "kept"), { recursive: true, force: true });
    }
  });

  test(
    "a program the analysis does not know may write what it names: protected paths need a person, read-only ones ask",
    {
      timeout: 300_000,
    },
    async () => {
      // With allow rules for them and the sandbox off, the operands of programs the analysis does not know were judged
      // as reads: `sponge .npmrc < a` (moreutils: soaks up its input, then writes the file it names) would rewrite
      // .npmrc with no question, and any such program a read-only file the same way.
      await mkdir(join(workspace, "ro"), { recursive: true });
      await writeFile(join(workspace, "ro", "f"), "kept\n");
      await writeFile(join(workspace, ".npmrc"), "registry=https://registry.npmjs.org/\n");
      const programs = ["sponge", "fmt", "strings", "base64", "expand"];
      const rules = PolicyRules.fromLayers(
        [{ name: "project", config: { commands: { allow: programs }, paths: { readOnly: ["ro/**"] } } }],
        workspace,
      );
      try {
        for (const line of ["sponge .npmrc < a", "fmt .npmrc", "expand -t 2 .npmrc"]) {
          await personAsked(line, rules, /writes the protected path \.npmrc/);
        }
        for (const line of ["fmt ro/f", "strings ro/f", "base64 -w 0 ro/f"]) {
          const decided = await decideCommand(line, { rules, workspaceRoot: workspace, sandbox: "off" });
          assert.equal(decided.decision, "ask", `${line}: ${decided.reason}`);
          assert.match(decided.reason, /is not a program whose use of its arguments is known: it may write it/, line);
        }
        // What they name elsewhere runs as allowed; the programs the analysis knows are judged as before.
        for (const line of ["fmt a", "strings a", "cat .npmrc", "cat ro/f"]) {
          const decided = await decideCommand(line, { rules, workspaceRoot: workspace, sandbox: "off" });
          assert.equal(decided.decision, "allow", `${line}: ${decided.reason}`);
        }
      } finally {
        for (const made of ["ro", ".npmrc"]) await rm(join(workspace, made), { recursive: true, force: true });
      }
    },
  );

  test("a write the line cannot name may be a protected path: without the sandbox a person decides", {
    timeout: 300_000,
  }, async () => {
    // With the sandbox off these asked only the risk assessor, though each wrote .npmrc when run: the analysis
    // could not follow the target (a variable, `..`, an awk program's redirection or `system`, sed's `e` or a sed
    // script file).
    const rules = PolicyRules.fromLayers([{ name: "project", config: { commands: { allow: ["tee"] } } }], workspace);
    await mkdir(join(workspace, "sub"), { recursive: true });
    const lines = [
      'F=.npmrc; echo x > "$F"',
      "tee sub/../.npmrc < a",
      `awk '{print > ".npmrc"}' a`,
      `awk 'BEGIN { system("touch .npmrc") }'`,
      "sed 'e touch .npmrc' a",
      "sed -n -f s.sed a",
    ];
    await writeFile(join(workspace, "s.sed"), "w .npmrc\n");
    try {
      for (const line of lines) {
        await personAsked(line, rules, /a path only known when it runs .*which may be a protected one/);
        // The sandbox keeps protected paths read-only: there the line is judged as before, by the analysis.
        const sandboxed = await decideCommand(line, { rules, workspaceRoot: workspace, sandbox: "auto" });
        assert.notEqual(sandboxed.prompt?.requirePerson, true, `${line}: ${sandboxed.reason}`);
      }
      // What the lines would have done.
      for (const line of lines) {
        await rm(join(workspace, ".npmrc"), { force: true });
        spawnSync("bash", ["-c", line], { cwd: workspace, timeout: 60_000 });
        assert.ok(existsSync(join(workspace, ".npmrc")), `${line} wrote .npmrc`);
      }
    } finally {
      for (const made of [".npmrc", "sub", "s.sed"]) await rm(join(workspace, made), { recursive: true, force: true });
    }
  });

  test("a link made to a protected or read-only path is judged as a write of it: later writes go through it", {
    timeout: 300_000,
  }, async () => {
    // With an allow rule for ln and cp and the sandbox off, `ln -s .git/hooks h; cp a h/pre-commit` wrote a git hook
    // and `ln .npmrc n && cp a n` rewrote .npmrc (a hard link is the file under another name): the link's target was
    // judged as read only, and the write through it as a new file `h/pre-commit` or `n`.
    await mkdir(join(workspace, ".git", "hooks"), { recursive: true });
    await writeFile(join(workspace, ".npmrc"), "registry=https://registry.npmjs.org/\n");
    await mkdir(join(workspace, "kept"));
    await writeFile(join(workspace, "kept", "f"), "kept\n");
    const allow = { commands: { allow: ["ln", "cp", "link"] } };
    const rules = PolicyRules.fromLayers([{ name: "project", config: allow }], workspace);
    const readOnly = PolicyRules.fromLayers(
      [{ name: "project", config: { ...allow, paths: { readOnly: ["kept/**"] } } }],
      workspace,
    );
    try {
      for (
        const line of [
          "ln -s .git/hooks h; cp a h/pre-commit",
          "ln -s .npmrc n",
          "ln -s ../.git/hooks src/h",
          "ln .npmrc n && cp a n",
          "link .npmrc n",
          "cp -l .npmrc n",
          "cp --link .npmrc n",
        ]
      ) {
        await personAsked(line, rules, /writes the protected path/);
      }
      for (const line of ["ln -s kept/f n", "ln kept/f n", "cp -l kept/f n"]) {
        const decided = await decideCommand(line, { rules: readOnly, workspaceRoot: workspace, sandbox: "off" });
        assert.notEqual(decided.decision, "allow", `${line}: ${decided.reason}`);
      }
      // Links to other files are made as before.
      for (const line of ["ln -s a b", "ln a b", "cp -l a b"]) {
        const decided = await decideCommand(line, { rules, workspaceRoot: workspace, sandbox: "off" });
        assert.equal(decided.decision, "allow", `${line}: ${decided.reason}`);
      }
      // What the lines would have done.
      spawnSync("bash", ["-c", "ln -s .git/hooks h; cp a h/pre-commit; ln .npmrc n && cp a n"], {
        cwd: workspace,
        timeout: 60_000,
      });
      assert.ok(existsSync(join(workspace, ".git", "hooks", "pre-commit")), "cp wrote a git hook through the link");
      assert.equal(await readFile(join(workspace, ".npmrc"), "utf8"), "a\n");
    } finally {
      for (const made of [".git", ".npmrc", "kept", "h", "n", "b"]) {
        await rm(join(workspace, made), { recursive: true, force: true });
      }
    }
  });

  test("an option or program that makes a command run another writes what only the run knows: a person decides", {
    timeout: 300_000,
  }, async () => {
    // With allow rules for these programs and the sandbox off, each line asked only the risk assessor, though each
    // writes .npmrc when run: find -exec, xargs, tar -I and zip -TT run a command whose writes the analysis never saw.
    const programs = ["find", "xargs", "tar", "zip", "sort", "rg", "less", "man", "parallel", "cpio", "echo"];
    const rules = PolicyRules.fromLayers([{ name: "project", config: { commands: { allow: programs } } }], workspace);
    const lines = [
      "find . -name a -exec touch .npmrc \\;",
      "echo .npmrc | xargs touch",
      "tar -I 'touch .npmrc; gzip' -cf x.tar a",
      "zip -q -T -TT 'touch .npmrc' x.zip a",
    ];
    try {
      for (
        const line of [
          ...lines,
          "find . -execdir touch .npmrc {} +",
          "find . -ok touch .npmrc \\;",
          "find . -okdir touch .npmrc \\;",
          "tar --use-compress-program='touch .npmrc' -cf x.tar a",
          "tar cIf 'touch .npmrc' x.tar a",
          "tar --to-command='touch .npmrc' -xf x.tar",
          "sort --compress-program=./c.sh a",
          "sort --compress=./c.sh a",
          "rg --pre ./c.sh x",
          "cpio -o --rsh-command=./c.sh",
          "less a",
          "man ls",
          "echo a | parallel touch",
        ]
      ) {
        await personAsked(line, rules);
      }
      // Without such an option, as before.
      for (const line of ["find . -name a", "zip -q x.zip a", "sort a"]) {
        const decided = await decideCommand(line, { rules, workspaceRoot: workspace, sandbox: "off" });
        assert.equal(decided.decision, "allow", `${line}: ${decided.reason}`);
      }
      // What the lines would have done.
      for (const line of lines) {
        await rm(join(workspace, ".npmrc"), { force: true });
        spawnSync("bash", ["-c", line], { cwd: workspace, timeout: 60_000 });
        assert.ok(existsSync(join(workspace, ".npmrc")), `${line} wrote .npmrc`);
      }
    } finally {
      for (const made of [".npmrc", "x.tar", "x.zip"]) {
        await rm(join(workspace, made), { recursive: true, force: true });
      }
    }
  });

  test("tar's options after a first word without a dash are read: the programs they run and the lists they give", {
    timeout: 300_000,
  }, async () => {
    // A first word that writes (`cf`) ended the reading of tar's options: with the sandbox off an automatic answer
    // let these run, the checkpoint's and the compressor's commands on the host, `-T` storing the file outside.
    const rules = PolicyRules.fromLayers([{ name: "project", config: { commands: { allow: ["tar"] } } }], workspace);
    const runs = [
      "tar cf x.tar --checkpoint=1 --checkpoint-action=exec='touch .npmrc' a",
      "tar cf x.tar --checkpoint=1 --checkpoint-ac=exec='touch .npmrc' a",
      "tar cf x.tar -I 'touch .npmrc; gzip' a",
      "tar cf x.tar --use-compress-program='touch .npmrc; gzip' a",
    ];
    const lists = ["tar cf x.tar -T names", "tar cf x.tar --files-from=names", "tar rf x.tar -T names"];
    await writeFile(join(workspace, "names"), "../outside/secret.txt\n");
    try {
      for (const line of [...runs, ...lists]) {
        await personAsked(line, rules);
        // The default allowlist, where the risk assessor answers, as well.
        const decided = await decideCommand(line, { workspaceRoot: workspace, sandbox: "off" });
        assert.equal(decided.prompt?.requirePerson, true, `${line}: ${decided.reason}`);
      }
      // What the lines would have done.
      for (const line of runs) {
        await rm(join(workspace, ".npmrc"), { force: true });
        spawnSync("bash", ["-c", line], { cwd: workspace, timeout: 60_000 });
        assert.ok(existsSync(join(workspace, ".npmrc")), `${line} wrote .npmrc`);
      }
      await rm(join(workspace, "x.tar"), { force: true });
      spawnSync("bash", ["-c", lists[0]], { cwd: workspace, timeout: 60_000 });
      assert.match(await readFile(join(workspace, "x.tar"), "latin1"), new RegExp(PLANTED));
    } finally {
      for (const made of [".npmrc", "x.tar", "names"]) await rm(join(workspace, made), { force: true });
    }
  });

  test("bsdtar's @ARCHIVE is an archive it reads, judged as the file it names", { timeout: 300_000 }, async () => {
    // The word was judged as a file named `@...` of the workspace: with an allow rule for bsdtar and the sandbox
    // off, `bsdtar cf - @../outside/y.tar` printed the entries of the archive outside on no question.
    const rules = PolicyRules.fromLayers([{ name: "project", config: { commands: { allow: ["bsdtar"] } } }], workspace);
    spawnSync("tar", ["cf", join(outside, "y.tar"), "-C", outside, "secret.txt"], { timeout: 60_000 });
    const lines = ["bsdtar cf - @../outside/y.tar", "bsdtar -cf - @link/y.tar"];
    try {
      for (const line of [...lines, "bsdtar -rf x.tar @../outside/y.tar", "bsdtar cf x.tar @$ARCHIVE"]) {
        await personAsked(line, rules);
      }
      // An archive of the workspace, as before.
      const own = await decideCommand("bsdtar cf x.tar @in.tar a", { rules, workspaceRoot: workspace, sandbox: "off" });
      assert.equal(own.decision, "allow", own.reason);
      // What the lines would have done.
      if (installed("bsdtar")) {
        for (const line of lines) {
          const run = spawnSync("bash", ["-c", line], { cwd: workspace, encoding: "latin1", timeout: 60_000 });
          assert.match(run.stdout, new RegExp(PLANTED), `${line}: ${run.stderr}`);
        }
      }
    } finally {
      await rm(join(outside, "y.tar"), { force: true });
    }
  });

  test("a download saved under the URL's name is judged as written: wget URL, curl -O, --remote-name-all", {
    timeout: 300_000,
  }, async () => {
    // Behind the egress proxy, `wget https://h/report.txt` and `curl -O https://h/report.txt` wrote the read-only
    // report.txt (curl rewrites it, wget creates it when missing): only `-o`, `-O FILE` and the folders were judged.
    // `curl -O http://127.0.0.1:PORT/.npmrc` against a local server wrote .npmrc.
    const readOnly = PolicyRules.fromLayers(
      [{ name: "project", config: { paths: { readOnly: ["report.txt", "kept/**"] } } }],
      workspace,
    );
    const network = { allow: ["a.example.com"], deny: [] };
    const check = (line: string) =>
      checkCommand(line, { rules: readOnly, sandbox: { available: true }, workspaceRoot: workspace, network });
    for (
      const line of [
        "wget https://a.example.com/report.txt",
        "wget -q https://a.example.com/dir/report%2Etxt",
        "curl -O https://a.example.com/report.txt",
        "curl -sO https://a.example.com/report.txt",
        "curl --remote-name-all https://a.example.com/report.txt",
        "curl -O --output-dir kept https://a.example.com/f",
        "cd kept && wget https://a.example.com/f",
      ]
    ) {
      const checked = await check(line);
      assert.equal(checked.verdict, "deny", `${line}: ${checked.reasons.join(" | ")}`);
    }
    // The server names the file: only the run knows it.
    for (const line of ["curl -OJ https://a.example.com/f", "wget --content-disposition https://a.example.com/f"]) {
      assert.notEqual((await check(line)).verdict, "allow", line);
    }
    // To standard output, or under another name, as before.
    for (
      const line of [
        "curl https://a.example.com/report.txt",
        "wget -O- https://a.example.com/report.txt",
        "wget -O copy.txt https://a.example.com/report.txt",
        "curl -O https://a.example.com/other.txt",
      ]
    ) {
      const checked = await check(line);
      assert.equal(checked.verdict, "allow", `${line}: ${checked.reasons.join(" | ")}`);
    }
  });

  test(
    "a variable a line puts in a program's environment may move what it writes: without the sandbox a person decides",
    {
      timeout: 300_000,
    },
    async () => {
      // With an allow rule for git and the sandbox off, `GIT_CONFIG_GLOBAL=.npmrc git config --global a.b c` wrote
      // .npmrc on the risk assessor's word; `HOME=.`, `export`, `declare -x` and `set -a` move programs' files alike.
      const rules = PolicyRules.fromLayers(
        [{ name: "project", config: { commands: { allow: ["git", "sort"] } } }],
        workspace,
      );
      const lines = [
        "GIT_CONFIG_GLOBAL=.npmrc git config --global a.b c",
        "export GIT_CONFIG_GLOBAL=.npmrc; git config --global a.b c",
      ];
      try {
        for (
          const line of [
            ...lines,
            "HOME=. git config --global a.b c",
            "HOME=.; git config --global a.b c",
            "declare -x GIT_CONFIG_GLOBAL=.npmrc; git config --global a.b c",
            "set -a; g=.npmrc",
            "TMPDIR=.git/hooks sort a",
            "PATH=./bin:$PATH sort a",
          ]
        ) {
          await personAsked(line, rules, /a path only known when it runs .*which may be a protected one/);
        }
        // A language, or a shell variable no environment holds by custom, asks only the assessor as before.
        for (const line of ["LANG=C sort a", "n=1; sort a", "set -e; sort a"]) {
          const decided = await decideCommand(line, { rules, workspaceRoot: workspace, sandbox: "off" });
          assert.notEqual(decided.prompt?.requirePerson, true, `${line}: ${decided.reason}`);
        }
        // What the lines would have done.
        spawnSync("git", ["init", "-q"], { cwd: workspace, timeout: 60_000 });
        for (const line of lines) {
          await rm(join(workspace, ".npmrc"), { force: true });
          spawnSync("bash", ["-c", line], { cwd: workspace, timeout: 60_000 });
          assert.match(await readFile(join(workspace, ".npmrc"), "utf8"), /\[a\]/, `${line} wrote .npmrc`);
        }
      } finally {
        for (const made of [".npmrc", ".git"]) await rm(join(workspace, made), { recursive: true, force: true });
      }
    },
  );

  test("the variables a runner sets for its command are judged as a prefix assignment is", {
    timeout: 300_000,
  }, async () => {
    // With the sandbox off an automatic answer let `env PATH=. cat a` run the workspace's ./cat on the host, as
    // `PATH=. cat a` asked a person: env's own assignments (and its -u, -i) were no change of the environment to the
    // analysis, behind another runner too.
    const rules = PolicyRules.fromLayers([{ name: "project", config: { commands: { allow: ["env"] } } }], workspace);
    const lines = ["env PATH=. cat a", "timeout 5 env PATH=. cat a", "nohup env -- PATH=.:/bin cat a"];
    await writeFile(join(workspace, "cat"), "#!/bin/sh\necho LOCAL-CAT-RAN\n", { mode: 0o755 });
    try {
      for (const line of [...lines, "env -SPATH=. cat a", "env -vS PATH=. cat a", "sudo LD_PRELOAD=x.so cat a"]) {
        await personAsked(line, rules, /a path only known when it runs .*which may be a protected one/);
        const decided = await decideCommand(line, { workspaceRoot: workspace, sandbox: "off" });
        assert.equal(decided.prompt?.requirePerson, true, `${line}: ${decided.reason}`);
      }
      // A language or a time zone asks only the assessor, as before.
      for (const line of ["env LANG=C sort a", "env TZ=UTC date", "env cat a"]) {
        const decided = await decideCommand(line, { rules, workspaceRoot: workspace, sandbox: "off" });
        assert.notEqual(decided.prompt?.requirePerson, true, `${line}: ${decided.reason}`);
      }
      // What the lines would have done.
      for (const line of lines) {
        const run = spawnSync("bash", ["-c", line], { cwd: workspace, encoding: "utf8", timeout: 60_000 });
        assert.match(run.stdout, /LOCAL-CAT-RAN/, `${line}: ${run.stderr}`);
      }
    } finally {
      await rm(join(workspace, "cat"), { force: true });
    }
  });

  test("a runner's other subcommands, sort -T and deno test --coverage without a value are judged as writing", {
    timeout: 300_000,
  }, async () => {
    // `deno bundle main.ts .npmrc` ran on an allow rule for deno with the sandbox off (deno counted as a program
    // whose words are known, for its `deno test`), `sort -T kept a` made its temporary files in the read-only kept/,
    // and `deno test --coverage` wrote the folder `coverage` past a read-only rule: the value it takes when none is
    // given was not judged.
    await mkdir(join(workspace, "kept"));
    const allow = { commands: { allow: ["deno", "sort", "npm"] } };
    const rules = PolicyRules.fromLayers([{ name: "project", config: allow }], workspace);
    const readOnly = PolicyRules.fromLayers(
      [{ name: "project", config: { ...allow, paths: { readOnly: ["kept/**", "coverage/**"] } } }],
      workspace,
    );
    try {
      for (const line of ["deno bundle main.ts .npmrc", "sort -T .git/hooks a", "npm --prefix .git/hooks install"]) {
        await personAsked(line, rules, /writes the protected path/);
      }
      for (const line of ["sort -T kept a", "sort --temporary-directory=kept a", "sort -Tkept a"]) {
        const decided = await decideCommand(line, { rules: readOnly, workspaceRoot: workspace, sandbox: "off" });
        assert.equal(decided.decision, "deny", `${line}: ${decided.reason}`);
      }
      for (const line of ["deno bundle -o kept/f main.ts", "deno compile -o kept/f main.ts"]) {
        const decided = await decideCommand(line, { rules: readOnly, workspaceRoot: workspace, sandbox: "auto" });
        assert.notEqual(decided.decision, "allow", `${line}: ${decided.reason}`);
      }
      const coverage = await checkCommand("deno test --coverage", {
        rules: readOnly,
        sandbox: { available: true },
        workspaceRoot: workspace,
      });
      assert.notEqual(coverage.verdict, "allow", coverage.reasons.join(" | "));
      // Elsewhere, as before.
      for (const line of ["sort -t o a", "sort -k 2 a"]) {
        const decided = await decideCommand(line, { rules: readOnly, workspaceRoot: workspace, sandbox: "off" });
        assert.equal(decided.decision, "allow", `${line}: ${decided.reason}`);
      }
    } finally {
      await rm(join(workspace, "kept"), { recursive: true, force: true });
    }
  });

  test("the backup sed -iSUFFIX keeps and the file of git config -f are judged as written", {
    timeout: 300_000,
  }, async () => {
    // With allow rules and the sandbox off, `sed -irc s/a/b/ .npm` wrote .npm's old content to `.npmrc` (its backup)
    // and `git config -f .npmrc a.b c` wrote .npmrc, on the risk assessor's word: the backup was not named, and
    // `-f` was an option git config was not known to take.
    await writeFile(join(workspace, ".npm"), "registry=http://evil.example/\n");
    await mkdir(join(workspace, "kept"));
    const allow = { commands: { allow: ["sed", "git"] } };
    const rules = PolicyRules.fromLayers([{ name: "project", config: allow }], workspace);
    const readOnly = PolicyRules.fromLayers(
      [{ name: "project", config: { ...allow, paths: { readOnly: ["kept/**"] } } }],
      workspace,
    );
    const lines = ["sed -irc s/a/b/ .npm", "git config -f .npmrc a.b c"];
    try {
      for (
        const line of [
          ...lines,
          "sed --in-place=rc s/a/b/ .npm",
          "sed -i'*rc' s/a/b/ .npm",
          "sed -i'.git/hooks/*' s/a/b/ pre-commit",
          "git config --file=.npmrc a.b c",
          "git config --file .npmrc set a.b c",
        ]
      ) {
        await personAsked(line, rules, /writes the protected path/);
      }
      for (const line of ["sed -i'kept/*' s/a/b/ a", "git config -fkept/f a.b c", "git config -f kept/f a.b c"]) {
        const decided = await decideCommand(line, { rules: readOnly, workspaceRoot: workspace, sandbox: "off" });
        assert.equal(decided.decision, "deny", `${line}: ${decided.reason}`);
      }
      // Reading another file's configuration asks as before, a person only where it is protected.
      // (A person in any case: git needs the sandbox, which is off here.)
      const read = await decideCommand("git config -f a --list", { rules, workspaceRoot: workspace, sandbox: "off" });
      assert.equal(read.decision, "ask", read.reason);
      // What the lines would have done.
      for (const line of lines) spawnSync("bash", ["-c", line], { cwd: workspace, timeout: 60_000 });
      assert.match(await readFile(join(workspace, ".npmrc"), "utf8"), /evil[\s\S]*\[a\]/);
    } finally {
      for (const made of [".npm", ".npmrc", "kept"]) await rm(join(workspace, made), { recursive: true, force: true });
    }
  });

  test("the backup cp, mv, ln and install keep of what they replace (-S SUFFIX) is judged as written", {
    timeout: 300_000,
  }, async () => {
    // With allow rules and the sandbox off, `cp -b -S rc a .npm` kept .npm's old content as `.npmrc`, unasked.
    await writeFile(join(workspace, ".npm"), "registry=http://evil.example/\n");
    const rules = PolicyRules.fromLayers(
      [{ name: "project", config: { commands: { allow: ["cp", "mv", "ln", "install"] } } }],
      workspace,
    );
    try {
      for (
        const line of [
          "cp -b -S rc a .npm",
          "cp --backup --suffix=rc a .npm",
          "cp -S rc a .npm",
          "mv -bSrc a .npm",
          "ln -sf -b -S rc a .npm",
          "install -b -S rc a .npm",
        ]
      ) {
        await personAsked(line, rules, /writes the protected path \.npmrc/);
      }
      for (const line of ["cp -b a b", "cp -S .bak a b"]) {
        const decided = await decideCommand(line, { rules, workspaceRoot: workspace, sandbox: "off" });
        assert.equal(decided.decision, "allow", `${line}: ${decided.reason}`);
      }
      // What the line would have done.
      spawnSync("bash", ["-c", "cp -b -S rc a .npm"], { cwd: workspace, timeout: 60_000 });
      assert.equal(await readFile(join(workspace, ".npmrc"), "utf8"), "registry=http://evil.example/\n");
    } finally {
      for (const made of [".npm", ".npmrc", "b", "b.bak"]) await rm(join(workspace, made), { force: true });
    }
  });

  test(
    "an awk option the analysis does not read may write any path: gawk -i inplace",
    { timeout: 300_000 },
    async () => {
      // With an allow rule for gawk and the sandbox off, `gawk -i inplace '{print "evil"}' .npmrc` rewrote .npmrc on
      // the risk assessor's word: `-i` (a library to load) was an unknown option, and nothing was marked written.
      await writeFile(join(workspace, ".npmrc"), "registry=https://registry.npmjs.org/\n");
      const rules = PolicyRules.fromLayers(
        [{ name: "project", config: { commands: { allow: ["gawk", "awk"] } } }],
        workspace,
      );
      try {
        for (
          const line of [`gawk -i inplace '{print "evil"}' .npmrc`, "awk --include=inplace 1 .npmrc", "gawk -l x 1 a"]
        ) {
          // Named: .npmrc itself, which the program may write (its rule stopped at the option); else any path.
          await personAsked(
            line,
            rules,
            /writes the protected path \.npmrc|a path only known when it runs .*protected/,
          );
        }
        const plain = await decideCommand("awk '{print $1}' .npmrc", {
          rules,
          workspaceRoot: workspace,
          sandbox: "off",
        });
        assert.equal(plain.decision, "allow", plain.reason);
        // What the line would have done.
        spawnSync("bash", ["-c", `gawk -i inplace '{print "evil"}' .npmrc`], { cwd: workspace, timeout: 60_000 });
        assert.equal(await readFile(join(workspace, ".npmrc"), "utf8"), "evil\n");
      } finally {
        await rm(join(workspace, ".npmrc"), { force: true });
      }
    },
  );

  test("a denied path whose matches all lie outside the workspace asks only where a line reaches out", {
    timeout: 300_000,
  }, async () => {
    // A server's token file, denied to every tool: without a sandbox, every path outside the workspace asks
    // already, so a line inside it runs as before (with a relative deny it would ask: see the test above).
    const rules = PolicyRules.fromLayers([{
      name: "cli",
      config: { paths: { deny: [`${outside}/secret.txt`, `${outside}/*.db-*`] } },
    }], workspace);
    const decide = (line: string) => decideCommand(line, { rules, workspaceRoot: workspace, sandbox: "off" });
    assert.equal((await decide("cat f.txt")).decision, "allow");
    assert.notEqual((await decide(`cat ${outside}/secret.txt`)).decision, "allow");
    assert.notEqual((await decide(`cat ${outside}/*`)).decision, "allow");
    // One that may match inside the workspace still needs the sandbox.
    const anywhere = PolicyRules.fromLayers([{ name: "cli", config: { paths: { deny: ["/**/id_rsa"] } } }], workspace);
    const asked = await decideCommand("cat f.txt", { rules: anywhere, workspaceRoot: workspace, sandbox: "off" });
    assert.match(asked.reason, /OS sandbox that hides them/);
  });

  test("a device node in the workspace is judged as the outside: named, matched by a pattern, met by a walk", {
    timeout: 120_000,
  }, async (t) => {
    // A device node holds no file of the workspace: a block device is a disk with every file of the machine (with
    // the sandbox off, `cat blk` of a node for a loop device printed a file outside), a character device the kernel's
    // log or memory. Its size is 0 and it is no link, so the path judgement took it for an empty file.
    const folder = join(workspace, "dv");
    await mkdir(join(folder, "sub"), { recursive: true });
    await writeFile(join(folder, "f.txt"), "hello\n");
    // Like /dev/zero (1, 5): reading it gives bytes no file of the workspace holds.
    const made = spawnSync("sh", ["-c", "mknod dv/zero c 1 5 && mknod dv/sub/disk b 7 0"], {
      cwd: workspace,
      timeout: 60_000,
    });
    if (made.status !== 0) {
      await rm(folder, { recursive: true, force: true });
      t.skip("mknod needs root");
      return;
    }
    try {
      const run = spawnSync("head", ["-c", "4", "dv/zero"], { cwd: workspace, timeout: 60_000 });
      assert.deepEqual([...run.stdout], [0, 0, 0, 0], "head read no bytes from the device node");
      const asking = [
        "cat dv/zero",
        "head -c 4 dv/zero",
        "cat < dv/zero",
        "wc -c dv/sub/disk",
        "cat dv/*",
        "head -c 4 dv/*/*",
        "grep -R hello dv",
        "grep -r -D read -a hello dv",
        "grep -rDread hello dv",
        "egrep --devices=read -r hello dv",
        "fgrep --dev=read -r hello dv",
      ];
      for (const line of asking) {
        for (const sandbox of SANDBOXES) {
          const check = await checkCommand(line, { sandbox, workspaceRoot: workspace });
          assert.equal(check.verdict, "ask", `${line} was allowed (sandbox ${sandbox.available})`);
          assert.match(check.reasons.join(" | "), /device/, line);
        }
      }
      // grep skips the devices a walk meets unless told to read them; listing one reads nothing of it.
      for (
        const line of ["grep -r hello dv", "grep -rn hello dv/sub", "ls -la dv dv/sub", "cat dv/f.txt", "cat dv/f*"]
      ) {
        const check = await checkCommand(line, { sandbox: { available: false }, workspaceRoot: workspace });
        assert.equal(check.verdict, "allow", `${line}: ${check.reasons.join(" | ")}`);
      }
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  test("a device node the line makes is judged as the outside: mknod of a block or character node needs a person", {
    timeout: 120_000,
  }, async (t) => {
    // A node the line makes is not there when the line is judged: with the sandbox off and an automatic answer,
    // `mknod d b 7 0; head -c 40 d` printed a disk image outside through its loop device, and `mknod k c 1 11 &&
    // head -c 200 k` the kernel's log.
    const folder = await mkdtemp(join(workspace, "mk-"));
    try {
      const made = spawnSync("sh", ["-c", "mknod z c 1 5 && head -c 4 z"], { cwd: folder, timeout: 60_000 });
      if (made.status !== 0) return t.skip("mknod needs root");
      assert.deepEqual([...made.stdout], [0, 0, 0, 0], "the line read the device it made");
      const options = ["", "-m 600 ", "-m600 ", "--mode=600 ", "--mode 600 ", "--mo 600 ", "-Z ", "-- "];
      const readers = ["cat N", "head -c 4 N", "grep -a x N", "cat < N", "wc -c N", "od N"];
      const joins = [" && ", "; ", " || ", " | "];
      let lines = 0;
      for (const option of options) {
        for (const type of ["b 7 0", "c 1 5", "u 1 5", "$T 1 5"]) {
          const reader = readers[lines % readers.length];
          const line = `mknod ${option}N ${type}${joins[lines % joins.length]}${reader}`;
          const decided = await decideCommand(line, { workspaceRoot: folder, sandbox: "off" });
          assert.equal(decided.prompt?.requirePerson, true, `${line}: ${decided.reason}`);
          const alone = await checkCommand(`mknod ${option}N ${type}`, {
            sandbox: { available: true },
            workspaceRoot: folder,
          });
          assert.match(alone.reasons.join(" | "), /device node mknod makes/, line);
          lines++;
        }
      }
      // A FIFO reaches nothing of the host.
      for (const line of ["mknod f p", "mknod -m 600 f p", "mknod -- f p", "mkfifo g"]) {
        const decided = await decideCommand(line, { workspaceRoot: folder, sandbox: "off" });
        assert.notEqual(decided.prompt?.requirePerson, true, `${line}: ${decided.reason}`);
      }
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  test("a link the line makes to a folder is judged by the links below it, which a later command reads through", {
    timeout: 120_000,
  }, async () => {
    // With the sandbox off and an automatic answer, `ln -s d2 l && cat l/s` (d2/s a link to a file outside),
    // `ln -s . l; cat l/d2/s`, `mv d4 d5 && cat d5/x/up/s` and `cp -a d4 d5 && cat d5/x/up/s` (d4/x/up -> ../../d2)
    // printed the file outside: the name read through the new link was not there to be judged.
    const folder = await realpath(await mkdtemp(join(base, "made-links-")));
    try {
      await mkdir(join(folder, "d2"));
      await mkdir(join(folder, "d4", "x"), { recursive: true });
      await mkdir(join(folder, "safe"));
      await writeFile(join(folder, "safe", "f"), "kept\n");
      await symlink(join(outside, "secret.txt"), join(folder, "d2", "s"));
      await symlink("../../d2", join(folder, "d4", "x", "up"));
      await symlink("../safe/f", join(folder, "d4", "inner"));
      // The class, shown without toolfence.
      const shown = spawnSync("bash", ["-c", "ln -s d2 l && cat l/s; rm -f l"], { cwd: folder, encoding: "utf8" });
      assert.equal(shown.stdout, `${PLANTED}\n`);
      const asking = [
        "ln -s d2 l && cat l/s",
        "ln -s d2 l; cat l/*",
        "ln -s . l; cat l/d2/s",
        "ln -sr d2 l && cat l/s",
        "ln -s -- d2 l && head l/s",
        "ln --symbolic d2 l && cat l/s",
        "mkdir m && ln -s ../d2 m/l && cat m/l/s",
        "mv d4 d5 && cat d5/x/up/s",
        "mv d4/x d5 && cat d5/up/s",
        "cp -a d4 d5 && cat d5/x/up/s",
        "cp -P d4/x/up l && cat l/s",
        "ln -s d4 l && cat l/x/up/s",
      ];
      for (const line of asking) {
        const decided = await decideCommand(line, { workspaceRoot: folder, sandbox: "off" });
        assert.equal(decided.prompt?.requirePerson, true, `${line}: ${decided.reason}`);
        const check = await checkCommand(line, { sandbox: SANDBOXES[0], workspaceRoot: folder });
        assert.match(check.reasons.join(" | "), /through which|outside the workspace/, line);
      }
      // Links to folders whose links stay inside run as before.
      for (const line of ["ln -s safe l && cat l/f", "ln -s safe/f l2 && cat l2", "cp -a safe s2 && cat s2/f"]) {
        const check = await checkCommand(line, { sandbox: SANDBOXES[1], workspaceRoot: folder });
        assert.doesNotMatch(check.reasons.join(" | "), /through which|outside/, line);
      }
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  test("which tests a name with a `/` where it points: an outside one asks", { timeout: 60_000 }, async () => {
    // `which /outside/exe` printed the path when it existed and could run: a look outside the workspace.
    await writeFile(join(outside, "exe"), "#!/bin/sh\n", { mode: 0o755 });
    try {
      const run = spawnSync("bash", ["-c", `which ${outside}/exe ${outside}/secret.txt`], { encoding: "utf8" });
      assert.equal(run.stdout.trim(), `${outside}/exe`);
      for (const line of [`which ${outside}/exe`, "which ../outside/exe", 'which "$PWD/../outside/exe"', "which ~/x"]) {
        for (const sandbox of SANDBOXES) {
          const check = await checkCommand(line, { sandbox, workspaceRoot: workspace });
          assert.equal(check.verdict, "ask", `${line} was allowed (sandbox ${sandbox.available})`);
        }
      }
      for (const line of ["which ls", "which -a node deno", "which ./f.txt"]) {
        const check = await checkCommand(line, { sandbox: SANDBOXES[1], workspaceRoot: workspace });
        assert.equal(check.verdict, "allow", `${line}: ${check.reasons.join(" | ")}`);
      }
    } finally {
      await rm(join(outside, "exe"));
    }
  });

  test("what the line was judged to touch travels with the authorization", { timeout: 300_000 }, async () => {
    const state = new PolicyState();
    const runs = await authorizeCommand(
      { state, asker: autoHost(), sandbox: "off", workspaceRoot: workspace },
      "wc -l < f.txt && head a",
    );
    assert.deepEqual(runs.touches.read.sort(), [join(workspace, "a"), join(workspace, "f.txt")].sort());
    assert.deepEqual(runs.touches.write, []);
  });
  test("a pattern is matched against the names in linear time, and `?` as a character or a byte", {
    timeout: 120_000,
  }, async () => {
    const folder = join(workspace, "globs");
    await mkdir(folder);
    try {
      await writeFile(join(folder, "a".repeat(200)), "x\n");
      await symlink(join(outside, "secret.txt"), join(folder, "aaab"));
      await symlink(join(outside, "secret.txt"), join(folder, "x\u{1f600}y"));
      // Each `*` was a `.*` of a regular expression, tried every way against the 200 `a`s: five of them took 65 s
      // of the server's one thread. Now they take milliseconds, and still find the link.
      for (const stars of [5, 8, 12]) {
        const line = `cat globs/${"*a".repeat(stars)}b`;
        const started = performance.now();
        const check = await checkCommand(line, { sandbox: { available: false }, workspaceRoot: workspace });
        const took = performance.now() - started;
        assert.ok(took < 10_000, `${line} took ${took} ms`);
        assert.equal(check.verdict, "allow", `${line}: ${check.reasons.join(" | ")}`);
      }
      for (const line of ["cat globs/*a*b", "cat globs/a?a?", "cat globs/x?y", "cat globs/x????y", "cat globs/*"]) {
        const check = await checkCommand(line, { sandbox: { available: false }, workspaceRoot: workspace });
        assert.equal(check.verdict, "ask", `${line} was allowed`);
        assert.match(check.reasons.join(" "), /may match the link/, line);
      }
      // bash matches `x????y` in the C locale (four bytes) and `x?y` in a UTF-8 one.
      const run = spawnSync("bash", ["-c", "cat globs/x????y"], {
        cwd: workspace,
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", LC_ALL: "C" },
        encoding: "utf8",
        timeout: 60_000,
      });
      assert.match(run.stdout, new RegExp(PLANTED), run.stderr);
      assert.equal(
        (await checkCommand("cat globs/x?z", { sandbox: { available: false }, workspaceRoot: workspace })).verdict,
        "allow",
      );
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});
