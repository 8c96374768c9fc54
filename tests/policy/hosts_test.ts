import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import type { ChoiceRequest } from "../../core/host.ts";
import { autoHost, callbackHost, denyAllHost, terminalHost, withAutoConfirm } from "../../policy/hosts.ts";
import { rejectsWith } from "./_fixtures.ts";

const writeQuestion: ChoiceRequest<"grant" | "once" | "deny"> = {
  title: "Write permission",
  message: "Overwrite a.txt?",
  options: [
    { value: "grant", label: "Allow and grant" },
    { value: "once", label: "Allow this time only" },
    { value: "deny", label: "Deny" },
  ],
  defaultChoice: "grant",
};

// A terminal made of two pipes: answers are typed only after the prompt appears.
function terminal(answers: string[], options: { closeAfter?: boolean } = {}) {
  const input = new PassThrough();
  const output = new PassThrough();
  let shown = "";
  output.on("data", (chunk) => {
    shown += String(chunk);
    if (/(: )$/.test(shown)) {
      const next = answers.shift();
      if (next !== undefined) setTimeout(() => input.write(next + "\n"), 1);
      else if (options.closeAfter) setTimeout(() => input.end(), 1);
    }
  });
  return { host: terminalHost({ input, output }), shown: () => shown };
}

describe("terminalHost", () => {
  test("shows no character a terminal acts on or a view hides, from any text of a question", {
    timeout: 60_000,
  }, async () => {
    // Every C0 and C1 control but the line feed and the tab, DEL, and the bidirectional and invisible format
    // characters, in the title, the message and an option's label: none reaches the terminal raw.
    const hidden: number[] = [];
    for (let code = 0; code <= 0x9f; code++) {
      if ((code < 0x20 && code !== 0x0a && code !== 0x09) || code >= 0x7f) hidden.push(code);
    }
    hidden.push(0x061c, 0x200b, 0x200e, 0x200f, 0x2028, 0x2029, 0x202a, 0x202e, 0x2066, 0x2069, 0xfeff, 0xe0041);
    const text = hidden.map((code) => `<${String.fromCodePoint(code)}>`).join("");
    const t = terminal(["1"]);
    await t.host.choose({ ...writeQuestion, title: text, message: text, options: [{ value: "grant", label: text }] });
    const c = terminal(["y"]);
    await c.host.confirm({ title: text, message: text, defaultChoice: false });
    for (const shown of [t.shown(), c.shown()]) {
      for (const code of hidden) {
        assert.ok(!shown.includes(String.fromCodePoint(code)), `U+${code.toString(16)} was shown raw`);
        assert.ok(shown.includes(`<\\u{${code.toString(16)}}>`), `U+${code.toString(16)} is shown escaped`);
      }
    }
    // A command that erases its own line: the person sees all of it.
    const spoof = terminal(["n"]);
    await spoof.host.confirm({ title: "Run", message: "cat /secret #\x1b[2K\r  ls -la", defaultChoice: false });
    assert.ok(spoof.shown().includes("cat /secret #\\u{1b}[2K\\u{d}  ls -la"), spoof.shown());
  });

  test("shows numbered options with the default and reads a number", { timeout: 60_000 }, async () => {
    const t = terminal(["2"]);
    assert.deepEqual(await t.host.choose(writeQuestion), { choice: "once", source: "user" });
    assert.match(t.shown(), /\[Write permission\] Overwrite a\.txt\?/);
    assert.match(t.shown(), /1\) Allow and grant \(default\)\n {2}2\) Allow this time only\n {2}3\) Deny\n/);
    assert.match(t.shown(), /Choose 1-3 \[1\]: $/);
  });

  test("an empty line takes the default; values and labels are accepted", { timeout: 60_000 }, async () => {
    assert.equal((await terminal([""]).host.choose(writeQuestion)).choice, "grant");
    assert.equal((await terminal(["DENY"]).host.choose(writeQuestion)).choice, "deny");
    assert.equal((await terminal(["allow this time only"]).host.choose(writeQuestion)).choice, "once");
  });

  test("an unreadable answer is asked again", { timeout: 60_000 }, async () => {
    const t = terminal(["7", "maybe", "3"]);
    assert.equal((await t.host.choose(writeQuestion)).choice, "deny");
    assert.equal(t.shown().match(/Not an answer/g)?.length, 2);
  });

  test("free text only when allowExtra", { timeout: 60_000 }, async () => {
    const t = terminal(["blue"]);
    const request = { ...writeQuestion, allowExtra: true } as unknown as ChoiceRequest<string>;
    assert.deepEqual(await t.host.choose(request), { choice: "blue", source: "user" });
  });

  test("the end of input refuses instead of answering", { timeout: 60_000 }, async () => {
    const t = terminal([], { closeAfter: true });
    const error = await rejectsWith(t.host.choose(writeQuestion), "permission_denied", "policy");
    assert.equal(error.status, "skipped");
  });

  test("confirm reads y, n and the default", { timeout: 60_000 }, async () => {
    const t = terminal(["", "n", "YES"]);
    const yes = { title: "Run", message: "Run ls?", defaultChoice: true };
    assert.deepEqual(await t.host.confirm(yes), { choice: true, source: "user" });
    assert.deepEqual(await t.host.confirm(yes), { choice: false, source: "user" });
    assert.deepEqual(await t.host.confirm({ ...yes, defaultChoice: false }), { choice: true, source: "user" });
    assert.match(t.shown(), /\[Y\/n\]: /);
    assert.match(t.shown(), /\[y\/N\]: /);
  });

  test("questions asked together are answered one after the other", { timeout: 60_000 }, async () => {
    const t = terminal(["1", "3"]);
    const [first, second] = await Promise.all([t.host.choose(writeQuestion), t.host.choose(writeQuestion)]);
    assert.equal(first.choice, "grant");
    assert.equal(second.choice, "deny");
  });

  test("an abort ends the question", { timeout: 60_000 }, async () => {
    const t = terminal([]);
    const controller = new AbortController();
    const pending = t.host.choose(writeQuestion, controller.signal);
    setTimeout(() => controller.abort(new Error("stop asking")), 10);
    await assert.rejects(pending, /stop asking/);
  });
});

describe("autoHost, denyAllHost, withAutoConfirm", () => {
  test("autoHost takes the default and marks it auto", { timeout: 60_000 }, async () => {
    assert.deepEqual(await autoHost().choose(writeQuestion), { choice: "grant", source: "auto" });
    assert.deepEqual(await autoHost().confirm({ title: "t", message: "m", defaultChoice: false }), {
      choice: false,
      source: "auto",
    });
  });

  test("autoHost refuses questions that need a person", { timeout: 60_000 }, async () => {
    await rejectsWith(autoHost().choose({ ...writeQuestion, requirePerson: true }), "permission_denied");
    await rejectsWith(
      autoHost().confirm({ title: "t", message: "m", defaultChoice: true, requirePerson: true }),
      "permission_denied",
    );
  });

  test("denyAllHost refuses everything, saying nobody can be asked", { timeout: 60_000 }, async () => {
    const error = await rejectsWith(denyAllHost().choose(writeQuestion), "permission_denied", "policy");
    assert.match(error.message, /no person can be asked/);
    await rejectsWith(denyAllHost().confirm({ title: "t", message: "m", defaultChoice: true }), "permission_denied");
  });

  test("withAutoConfirm answers automatically except where a person is required", { timeout: 60_000 }, async () => {
    const asked: string[] = [];
    const person = callbackHost({
      choose: (request) => {
        asked.push(request.message);
        return request.options[1].value;
      },
    });
    const host = withAutoConfirm(person);
    assert.deepEqual(await host.choose(writeQuestion), { choice: "grant", source: "auto" });
    assert.deepEqual(await host.choose({ ...writeQuestion, requirePerson: true }), { choice: "once", source: "user" });
    assert.deepEqual(asked, ["Overwrite a.txt?"]);
  });
});

describe("callbackHost", () => {
  test("a bare answer is a person's; a full outcome keeps its source", { timeout: 60_000 }, async () => {
    const host = callbackHost({ choose: () => "deny" as never });
    assert.deepEqual(await host.choose(writeQuestion), { choice: "deny", source: "user" });
    const automatic = callbackHost({ choose: (r) => ({ choice: r.defaultChoice, source: "auto" }) });
    assert.deepEqual(await automatic.choose(writeQuestion), { choice: "grant", source: "auto" });
  });

  test("an answer that is not an option is an error, never consent", { timeout: 60_000 }, async () => {
    const host = callbackHost({ choose: () => "yes please" as never });
    await assert.rejects(host.choose(writeQuestion), /not an option/);
    const bad = callbackHost({ choose: () => "x" as never, confirm: () => "yes" as never });
    await assert.rejects(bad.confirm({ title: "t", message: "m", defaultChoice: true }), /yes\/no/);
  });

  test("an automatic answer to a question that needs a person is refused", { timeout: 60_000 }, async () => {
    const host = callbackHost({ choose: (r) => ({ choice: r.defaultChoice, source: "auto" }) });
    await rejectsWith(host.choose({ ...writeQuestion, requirePerson: true }), "permission_denied");
  });

  test("without confirm, yes/no questions go to choose", { timeout: 60_000 }, async () => {
    const seen: string[][] = [];
    const host = callbackHost({
      choose: (request) => {
        seen.push(request.options.map((o) => o.value));
        return "no" as never;
      },
    });
    assert.deepEqual(await host.confirm({ title: "t", message: "m", defaultChoice: true }), {
      choice: false,
      source: "user",
    });
    assert.deepEqual(seen, [["yes", "no"]]);
  });
});
