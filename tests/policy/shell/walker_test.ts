// The tree walk (policy/shell/_tree.ts and the files it is split into): where
// tree-sitter-bash reads a line differently from bash, the analysis follows
// bash or asks, and every ask names the construct.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { analyzeBash } from "../../../policy/shell/_tree.ts";
import { Walker } from "../../../policy/shell/_walker.ts";
import { parseBash } from "../../../policy/shell/parser.ts";
import { MODELLED_NODE_TYPES, MODELLED_TOKENS } from "../../../policy/shell/_node_types.ts";
import { checkCommand } from "../../../policy/shell/check_command.ts";

// The allowlist entries for `[` and `test` belong to the flag rules; these
// tests judge the walk, so they bring their own.
const allowlist = ["[", "test", "echo", "ls", "cat", "cd", "true"];

async function verdict(command: string): Promise<{ verdict: string; reasons: string[] }> {
  const check = await checkCommand(command, { allowlist });
  return { verdict: check.verdict, reasons: check.reasons };
}

async function asks(command: string, ...mentions: string[]): Promise<void> {
  const result = await verdict(command);
  assert.equal(result.verdict, "ask", `${JSON.stringify(command)} must ask`);
  for (const mention of mentions) {
    assert.ok(
      result.reasons.some((reason) => reason.includes(mention)),
      `${JSON.stringify(command)}: no reason names ${JSON.stringify(mention)}: ${result.reasons.join(" | ")}`,
    );
  }
}

async function allows(command: string): Promise<void> {
  const result = await verdict(command);
  assert.equal(result.verdict, "allow", `${JSON.stringify(command)}: ${result.reasons.join(" | ")}`);
}

async function commandWords(command: string): Promise<(string | undefined)[][]> {
  const analysis = await analyzeBash(command);
  assert.ok(analysis.understood, `${JSON.stringify(command)}: ${analysis.problems.join(" | ")}`);
  return analysis.commands.map((found) => found.words.map((word) => word.value));
}

describe("analyzeBash: [ is the ordinary command bash runs", () => {
  test("its words are arguments of one simple command", { timeout: 60_000 }, async () => {
    assert.deepEqual(await commandWords("[ -f x ] && echo y"), [["[", "-f", "x", "]"], ["echo", "y"]]);
    assert.deepEqual(await commandWords("test -f x && echo y"), [["test", "-f", "x"], ["echo", "y"]]);
    assert.deepEqual(await commandWords("[ a = b ] || [ ! -d c ]"), [["[", "a", "=", "b", "]"], [
      "[",
      "!",
      "-d",
      "c",
      "]",
    ]]);
  });

  test("operators inside it are the operators bash applies", { timeout: 60_000 }, async () => {
    await asks("[ a || sh -c 'id > p; rm keep.txt' ]", "`sh -c 'id > p; rm keep.txt' ]`");
    await asks("[ a && rm keep.txt ]", "`rm` is not on the allowlist");
    await asks("[ a | rm keep.txt ]", "`rm` is not on the allowlist");
    await asks("[ a ] || rm keep.txt", "`rm` is not on the allowlist");
    await asks("[ -n a -o b ] ; rm x", "`rm` is not on the allowlist");
    await asks("[ a || [ b ] || rm x ]", "`rm` is not on the allowlist");
  });

  test("redirections inside it are redirections", { timeout: 60_000 }, async () => {
    await asks("[ a > keep.txt ]", "writes to a file");
    await asks("[ a >> keep.txt ]", "writes to a file");
    await asks("[ a < /dev/tcp/127.0.0.1/9 ]", "network connection");
    await asks("[ a \\< b ] > out", "writes to a file");
    await asks("[>x ]", "writes to a file");
  });

  test("words glued to [ are another command name, or not understood", { timeout: 60_000 }, async () => {
    await asks("[-f x ]", "`[-f` is not on the allowlist");
    await asks("[=x ]", "`[`");
    await asks("[[a ]]");
  });

  test("allowed tests run; their twins ask", { timeout: 60_000 }, async () => {
    await allows("[ -f x ] && echo y");
    await allows("test -f x && echo y");
    await allows("[ a \\< b ]");
    await allows("[ -d src ] || ls");
    await asks("[ -f x ] && rm y", "`rm` is not on the allowlist");
    await asks("test -f x && rm y", "`rm` is not on the allowlist");
    await asks("[ -f $(rm y) ]", "`rm` is not on the allowlist");
    await asks("[ -f x ]\nrm y", "a newline joins commands");
    await asks("[ -f x ] &", "in the background");
  });

  test("cd is an ordinary simple command for the judge", { timeout: 60_000 }, async () => {
    assert.deepEqual(await commandWords("cd src && ls"), [["cd", "src"], ["ls"]]);
    await allows("cd src && ls");
    await asks("cd src && rm x", "`rm` is not on the allowlist");
  });
});

describe("analyzeBash: [[ ]] read with bash's conditional grammar", () => {
  test("an operator word in an operand position is an operand, as in bash", { timeout: 60_000 }, async () => {
    // tree-sitter reads two unary tests; bash compares `-eq` arithmetically
    // with a string whose array subscript runs a command.
    await asks("[[ -eq -eq 'a[$(id)]' ]]", "compares arithmetically");
    // `-f -eq` is a unary test, and the word after it a syntax error for bash.
    await asks("[[ -f -eq 'a[$(id)]' ]]", "bash reads the conditional");
    await asks("[[ a && -eq -eq 'a[$(id)]' ]]", "compares arithmetically");
    await asks("[[ ( -lt -lt 'a[$(id)]' ) ]]", "compares arithmetically");
  });

  test("variable tests and computed arithmetic operands ask", { timeout: 60_000 }, async () => {
    await asks("[[ -v x ]]", "tests a variable by name");
    await asks("[[ ! -R x ]]", "tests a variable by name");
    await asks("[[ $x -eq 1 ]]", "compares arithmetically");
    await asks("[[ 1 -eq 1 && a -lt b ]]", "compares arithmetically");
  });

  test("a word that only looks like an operator is one word, as in bash", { timeout: 60_000 }, async () => {
    await allows("[[ !a ]]");
    await allows("[[ a==b ]]");
    await asks("[[ !a -eq 'b[$(id)]' ]]", "compares arithmetically");
  });

  test("what bash rejects asks", { timeout: 60_000 }, async () => {
    await asks("[[ a b ]]");
    await asks("[[ -f ]]");
    await asks("[[ a -a b ]]");
  });

  test("substitutions inside a regular expression are walked or ask", { timeout: 60_000 }, async () => {
    await asks("[[ a =~ <(rm x) ]]", "`<(`");
    await asks("[[ a =~ x$(rm x) ]]");
    await asks("[[ a =~ (x|`rm x`) ]]");
  });

  test("everyday conditionals run", { timeout: 60_000 }, async () => {
    await allows("[[ -f x ]] && ls");
    await allows("[[ a == b* || ! -d c ]]");
    await allows("[[ ( -n a ) && a < b ]]");
    await allows('[[ "a" =~ ^a(b|c)$ ]]');
    await allows("[[ 1 -eq '1' ]]");
  });
});

describe("analyzeBash: quoting", () => {
  test("a newline inside quotes is part of the word", { timeout: 60_000 }, async () => {
    assert.deepEqual(await commandWords('echo "a\nb"'), [["echo", "a\nb"]]);
    assert.deepEqual(await commandWords('echo "a\\\nb"'), [["echo", "ab"]]);
    assert.deepEqual(await commandWords('echo "\n\n$HOME\nb\n"'), [["echo", undefined]]);
    assert.deepEqual(await commandWords("echo 'a\nb' $'c\\nd'"), [["echo", "a\nb", "c\nd"]]);
    await allows('echo "a\nb"');
    await allows('echo "first line\nsecond line" | cat');
  });

  test("a newline outside quotes still joins commands", { timeout: 60_000 }, async () => {
    await asks('echo "a\nb"\nrm x', "a newline joins commands");
    await asks('echo "a\nb" ; rm x', "`rm` is not on the allowlist");
    await asks('echo "$(ls\nrm x)"', "a newline joins commands");
    await asks('echo "a\n"b\nrm x', "a newline joins commands");
  });

  test(
    "quotes inside ${...} inside double quotes ask, since bash does not read them as quotes",
    { timeout: 60_000 },
    async () => {
      await asks(`echo "\${x:-'$(rm x)'}"`, "inside double quotes");
      await asks(`echo "\${x:-\${y:-'a'}}"`, "inside double quotes");
      await asks(`cat <<EOF\n\${x:-'$(rm x)'}\nEOF`, "inside double quotes");
      await allows("echo ${x:-'a'}");
      await allows('echo "${x:-a}"');
    },
  );

  test("nodes that touch are one word, as bash reads them", { timeout: 60_000 }, async () => {
    assert.deepEqual(await commandWords("echo $'-'\\-la \"a\"\\< a\\$ \\$"), [["echo", "--la", "a<", "a$", "$"]]);
    assert.deepEqual(await commandWords('"l"\\s'), [["ls"]]);
    await allows('"l"\\s');
    const find = await analyzeBash("find . $'-'\\delete");
    assert.deepEqual(find.commands[0].words.map((word) => word.value), ["find", ".", "-delete"]);
  });

  test("$'...' ends where bash ends it", { timeout: 60_000 }, async () => {
    // The parser reads `\\'` as an escaped quote and runs on to the last quote.
    await asks("echo $'a\\\\' ; rm x ; #'", "earlier than the parser");
    await asks("echo $'\\c\\\\' ; rm x ; #'", "earlier than the parser");
    assert.deepEqual(await commandWords("echo $'a\\\\b' $'\\c\\\\x' $'\\c?' $'\\''"), [[
      "echo",
      "a\\b",
      "\x1cx",
      "\x7f",
      "'",
    ]]);
    await asks("echo $'\\xe9'", "depend on the locale");
    await asks("echo $'\\u00e9'", "depend on the locale");
    // The decoding used to throw a RangeError here.
    await asks("echo $'\\UFFFFFFFF'", "depend on the locale");
  });

  test("a comment starts only at the start of a word", { timeout: 60_000 }, async () => {
    assert.deepEqual(await commandWords("echo a#b"), [["echo", "a#b"]]);
    await asks("echo a#; rm x", "`rm` is not on the allowlist");
    await asks('echo "a"#; rm x', "`rm` is not on the allowlist");
    await allows("echo a #; rm x");
  });
});

describe("the modelled node types", () => {
  test("every node type of the grammar is listed, apart from supertypes", { timeout: 60_000 }, async () => {
    const path = fileURLToPath(import.meta.resolve("tree-sitter-bash/src/node-types.json"));
    const types: { type: string; named: boolean }[] = JSON.parse(await readFile(path, "utf8"));
    const named = types.filter((type) => type.named && !type.type.startsWith("_")).map((type) => type.type);
    assert.deepEqual(named.filter((type) => !MODELLED_NODE_TYPES.has(type)), []);
    for (const [type, model] of MODELLED_NODE_TYPES) {
      assert.ok(named.includes(type), `${type} is not a node type of tree-sitter-bash`);
      assert.ok(model.semantics.length > 0 && model.construct.length > 0, type);
    }
    // Tokens left out ask when they appear.
    const tokens = types.filter((type) => !type.named).map((type) => type.type);
    assert.deepEqual(tokens.filter((token) => !MODELLED_TOKENS.has(token)).sort(), ["$`", "``"]);
  });

  test("a token that is not modelled asks, naming it", { timeout: 60_000 }, async () => {
    await asks("echo $`ls`", "does not model the token `$``");
  });
});

describe("substitutions the walk did not read", () => {
  test("ask: one hidden inside a node read whole would run unjudged", { timeout: 60_000 }, async () => {
    const source = "echo $(rm a) <(rm b)";
    const tree = (await parseBash(source))!;
    try {
      // A walk that reads nothing stands for a node whose substitution the walk covers whole (`36#$(cmd)` once).
      const walker = new Walker(source, new Set());
      walker.checkSubstitutions(tree.rootNode);
      assert.equal(walker.understood, false);
      assert.match(walker.problems.join(" "), /did not read the commands of `\$\(rm a\)`/);
    } finally {
      tree.delete();
    }
    // The walk reads every substitution it meets, in arithmetic, subscripts and numbers alike.
    await asks("echo $((36#$(rm a))) ${x[36#$(rm b)]}", "`rm` is not on the allowlist");
  });
});
