// A source tree that exercises what the two grep engines must agree on:
// nested .gitignore files with re-includes, hidden files, a .git folder,
// symlinks in and out of the workspace, binary files, encodings, line endings,
// long lines, a file longer than one read chunk, and text where ASCII and
// Unicode meanings of \w, \d, \b and \s differ.

import fsp from "node:fs/promises";
import path from "node:path";

/** Writes the tree into `dir` (the workspace); `outside` is a folder beside it. */
export async function writeSearchFixture(dir: string, outside: string): Promise<void> {
  const put = async (rel: string, content: string | Uint8Array) => {
    await fsp.mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
    await fsp.writeFile(path.join(dir, rel), content);
  };
  await put(".gitignore", "*.log\nbuild/\n/root-only.txt\n!keep.log\nnode_modules\n");
  await put("root-only.txt", "needle in an ignored root file\n");
  await put("app.log", "needle in a log\n");
  await put("keep.log", "needle kept by negation\n");
  await put("build/out.js", "needle in build output\n");
  await put("node_modules/pkg/index.js", "export const needle = 1;\n");
  await put(".git/config", "needle in git config\n");
  await put(".github/workflow.yml", "run: echo needle\n");
  await put(".env.example", "NEEDLE=1\n");
  await put(
    "src/main.ts",
    [
      "import { helper } from './util.ts';",
      "// needle: the main entry",
      "export function main(argv: string[]): number {",
      "  const needleCount = argv.filter((a) => a.includes('needle')).length;",
      "  return needleCount;",
      "}",
      "",
      "-e is not a flag here",
      "price: $100 (approx.) [tag] {brace} a|b ^caret",
      "",
    ].join("\n"),
  );
  await put("src/util.ts", "export function helper() {\n  return 'NEEDLE';\n}\n");
  await put("src/.gitignore", "generated/\n!important.gen.ts\n*.gen.ts\n");
  await put("src/generated/types.ts", "export type Needle = string;\n");
  await put("src/a.gen.ts", "// needle generated\n");
  await put("src/important.gen.ts", "// needle important but generated\n");
  await put("src/deep/nested/file.py", "def needle():\n    return 42\n\nclass Needle:\n    pass\n");
  await put("src/deep/.gitignore", "!*.log\n");
  await put("src/deep/trace.log", "needle re-included log\n");
  await put(
    "docs/unicode.md",
    [
      "café needle über",
      "naïve_needle",
      "résumé 42 ٤٢ digits",
      "tab\tseparated\u00a0nbsp\u2003emspace",
      "ſhort with long s and Kelvin K sign",
      "ÄÖÜ äöü straße STRASSE",
      "emoji 😀 needle 🎉",
      "",
    ].join("\n"),
  );
  await put("docs/crlf.txt", "first needle\r\nsecond line\r\nthird needle$\r\n");
  await put("docs/bom.txt", new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode("needle after bom\n")]));
  const utf16 = new Uint8Array([
    0xff,
    0xfe,
    ...new Uint8Array(new Uint16Array(Array.from("needle in utf16\n", (c) => c.charCodeAt(0))).buffer),
  ]);
  await put("docs/utf16.txt", utf16);
  await put("docs/long.txt", "x".repeat(5000) + " needle " + "y".repeat(5000) + "\n");
  await put("bin/data.bin", new Uint8Array([0x6e, 0x65, 0x65, 0x64, 0x6c, 0x65, 0x00, 0x01, 0x02]));
  await put("bin/image.png", new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]));
  const big: string[] = [];
  for (let i = 0; i < 60_000; i++) big.push(i % 15_000 === 7 ? `row ${i} needle` : `row ${i} filler text`);
  await put("data/big.txt", big.join("\n") + "\n");
  await put("data/many.txt", Array.from({ length: 300 }, (_, i) => `needle ${i}`).join("\n") + "\n");
  await put("data/context.txt", ["a", "b", "needle 1", "c", "needle 2", "d", "e", "f", "needle 3"].join("\n"));
  await fsp.mkdir(outside, { recursive: true });
  await fsp.writeFile(path.join(outside, "secret.txt"), "needle outside the workspace\n");
  await fsp.symlink(path.join(outside, "secret.txt"), path.join(dir, "src", "link-out.txt"));
  await fsp.symlink(outside, path.join(dir, "dir-out"));
  await fsp.symlink("util.ts", path.join(dir, "src", "link-in.ts"));
}
