// fnmatch-style wildcards for tool names: `*`, `?` and `[...]` classes.

export function fnmatch(pattern: string, name: string): boolean {
  let source = "^";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "*") source += ".*";
    else if (c === "?") source += ".";
    else if (c === "[") {
      const end = pattern.indexOf("]", i + 2);
      if (end === -1) {
        source += "\\[";
        continue;
      }
      let body = pattern.slice(i + 1, end);
      if (body.startsWith("!")) body = "^" + body.slice(1);
      source += `[${body.replace(/\\/g, "\\\\")}]`;
      i = end;
    } else source += c.replace(/[.+^${}()|\\\]]/g, "\\$&");
  }
  return new RegExp(source + "$").test(name);
}
