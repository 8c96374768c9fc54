import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { ToolError } from "../../../core/errors.ts";
import { compilePattern } from "../../../tools/search/_pattern.ts";

const regex = (pattern: string, caseSensitive = true) => compilePattern(pattern, { regex: true, caseSensitive });

describe("grep patterns mean the same in both engines", () => {
  test("\\w, \\d and \\b are ASCII; \\s is JavaScript's whitespace set", { timeout: 60_000 }, () => {
    assert.equal(regex("\\w+").rust, "[0-9A-Za-z_]+");
    assert.equal(regex("[\\w-]").rust, "[0-9A-Za-z_\\x{2D}]");
    assert.equal(regex("\\D").rust, "[^0-9]");
    assert.equal(regex("\\bx\\B").rust, "(?-u:\\b)x(?-u:\\B)");
    assert.ok(regex("\\s").line.test("\ufeff"));
    assert.match(regex("\\s").rust, /\\x\{FEFF\}/);
    assert.ok(!regex("\\w").line.test("é"));
  });

  test("literals are escaped so that neither engine reads them as syntax", { timeout: 60_000 }, () => {
    const fixed = compilePattern("a&&b--c~~[d]", { regex: false, caseSensitive: true });
    assert.equal(fixed.rust, "a\\x{26}\\x{26}b\\x{2D}\\x{2D}c\\x{7E}\\x{7E}\\x{5B}d\\x{5D}");
    assert.ok(fixed.line.test("xa&&b--c~~[d]y"));
    assert.equal(regex("[a&&b]").rust, "[a\\x{26}\\x{26}b]");
    assert.equal(regex(".").rust, "[^\\n\\r\\x{2028}\\x{2029}]");
  });

  test("case folding is the same flag on both sides", { timeout: 60_000 }, () => {
    const p = regex("Straße", false);
    assert.equal(p.rust, "(?i)Stra\\x{DF}e");
    assert.ok(p.line.test("STRAßE"));
  });

  test("groups become non-capturing; quantifiers and alternation pass through", { timeout: 60_000 }, () => {
    const p = regex("(?<word>ab)+|c{2,3}?|(?P<x>d)*");
    assert.equal(p.rust, "(?:ab)+|c{2,3}?|(?:d)*");
    assert.equal(p.re2, "(?:ab)+|c{2,3}?|(?:d)*");
  });

  test("the word boundary is ASCII in both spellings; negated escapes inside a class become ranges", {
    timeout: 60_000,
  }, () => {
    assert.equal(regex("\\bx\\B").re2, "\\bx\\B");
    // é is not an ASCII word character, so a boundary lies between it and x.
    assert.ok(regex("\\bx").line.test("éx") && !regex("\\Bx").line.test("éx"));
    const notDigitOrA = regex("^[\\Da]+$");
    assert.ok(notDigitOrA.line.test("xyz a 😀"));
    assert.ok(!notDigitOrA.line.test("x1"));
    const notSpace = regex("^[^\\S]+$");
    assert.ok(notSpace.line.test(" \t\u3000\ufeff"));
    assert.ok(!notSpace.line.test(" x "));
    assert.ok(regex("[\\W]").line.test("-") && !regex("[\\W]").line.test("a_9"));
  });

  test("the whole-text matcher never misses a line the line matcher finds", { timeout: 60_000 }, () => {
    const p = regex("^b.$");
    assert.ok(p.line.test("bx"));
    assert.ok(p.text.test("a\r\nbx\r\nc"));
    assert.ok(p.text.test("a\nbx"));
    assert.ok(!p.text.test("a\nbxy\nc"));
  });

  test("matching takes linear time: patterns that make a backtracking engine take cubic time are fast", {
    timeout: 60_000,
  }, () => {
    const line = "a".repeat(50_000) + "b";
    for (const source of ["a*a*c", "a*a*a*a*c", "\\w*\\w*\\w*x", "(?:a|b)*a*c", "[ab]*a*[ab]*c", "a{0,1000}a*c"]) {
      const p = regex(source);
      const started = performance.now();
      assert.equal(p.line.test(line), false);
      assert.equal(p.text.test(line + "\n" + line), false);
      assert.ok(performance.now() - started < 2000, `${source} took ${performance.now() - started} ms`);
    }
  });
});

describe("constructs that differ between engines, or can hang one, are refused with a reason", () => {
  const refused: [string, RegExp, boolean?][] = [
    ["(?=x)", /lookahead and lookbehind/],
    ["(?<!x)y", /lookahead and lookbehind/],
    ["(a)\\1", /backreferences/],
    ["\\k<a>", /backreferences/],
    ["(?i)x", /inline flags/],
    ["[[:alpha:]]", /POSIX classes/],
    ["a\\nb", /line breaks/],
    ["(a+)+", /nested repetition/],
    ["(a*b?)*", /nested repetition/],
    ["(\\w+\\s*)+$", /nested repetition/],
    ["(a|ab)*c", /alternatives that can match the same text/],
    ["(".repeat(5000) + "a" + ")".repeat(5000), /groups nest more than 100 deep/],
    ["(x|x)+", /alternatives that can match the same text/],
    ["(A|a){2,}", /alternatives/, false],
    ["a{2000}", /above 1000/],
    ["a{3,2}", /out of order/],
    ["a**", /cannot be repeated/],
    ["a++", /possessive/],
    ["^*", /cannot be repeated/],
    ["*a", /nothing to repeat/],
    ["a{", /escaped as \\\{/],
    ["a}", /escaped as \\\}/],
    ["a]", /escaped as \\\]/],
    ["(ab", /unclosed \(/],
    ["ab)", /unmatched \)/],
    ["[ab", /unclosed \[/],
    ["[]a]", /right after \[/],
    ["[z-a]", /out of order/],
    ["[\\d-z]", /a character at each end/],
    ["\\q", /unknown escape/],
    ["x\\", /lone backslash/],
    ["\\p{NoSuchProperty}", /Invalid/],
  ];
  for (const [pattern, reason, caseSensitive = true] of refused) {
    test(`${pattern}${caseSensitive ? "" : " (ignoring case)"}`, { timeout: 60_000 }, () => {
      assert.throws(() => regex(pattern, caseSensitive), (error: unknown) => {
        assert.ok(error instanceof ToolError);
        assert.equal(error.code, "invalid_pattern");
        assert.equal(error.kind, "semantic");
        assert.match(error.message, reason);
        return true;
      });
    });
  }

  test("bounded repetition inside repetition, and distinct alternatives, are allowed", { timeout: 60_000 }, () => {
    assert.doesNotThrow(() => regex("(ab?)+"));
    assert.doesNotThrow(() => regex("(\\d{1}x)*"));
    assert.doesNotThrow(() => regex("(foo|bar)+"));
    assert.doesNotThrow(() => regex("(A|a){2,}"));
    assert.doesNotThrow(() => regex("(a|ab)c"), "an alternation that is not repeated cannot blow up");
  });

  test("a line break cannot be searched for literally either", { timeout: 60_000 }, () => {
    assert.throws(() => compilePattern("a\nb", { regex: false, caseSensitive: true }), /line breaks/);
  });
});
