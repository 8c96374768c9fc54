/**
 * A conservative reading of sed scripts: what makes one write files or run
 * commands.
 *
 * @module
 */

/**
 * A conservative reading of a sed script: returns what makes it write files or
 * run commands, or `undefined` when it does neither. Anything unfamiliar counts
 * as dangerous.
 */
export function sedScriptEffect(script: string): string | undefined {
  let i = 0;
  const skipDelimited = (delimiter: string): boolean => {
    for (; i < script.length; i++) {
      if (script[i] === "\\") i++;
      else if (script[i] === delimiter) {
        i++;
        return true;
      }
    }
    return false;
  };
  const skipTo = (pattern: RegExp): void => {
    const rest = script.slice(i).search(pattern);
    i = rest === -1 ? script.length : i + rest + 1;
  };
  while (i < script.length) {
    const char = script[i];
    if (/[\s;!{}0-9,$~+]/.test(char)) {
      i++;
    } else if (char === "/" || char === "\\") {
      // An address regex: `/re/` or `\cREc`.
      const delimiter = char === "/" ? "/" : script[++i];
      i++;
      if (delimiter === undefined || !skipDelimited(delimiter)) {
        return "has an unterminated address";
      }
      if (script[i] === "I" || script[i] === "M") i++;
    } else if (char === "s" || char === "y") {
      const delimiter = script[++i];
      if (delimiter === undefined || delimiter === "\n" || delimiter === "\\") {
        return `has an unusual ${char} command`;
      }
      i++;
      if (!skipDelimited(delimiter) || !skipDelimited(delimiter)) {
        return `has an unterminated ${char} command`;
      }
      if (char === "s") {
        const flags = /^[0-9gpiImMew ]*/.exec(script.slice(i))?.[0] ?? "";
        if (/[ew]/.test(flags)) return "has an s command with the e or w flag";
        i += flags.length;
      }
    } else if ("ewW".includes(char)) {
      return `uses the ${char} command`;
    } else if ("aicrR#".includes(char)) {
      // Text to insert, a file to read or a comment: the rest of the line.
      skipTo(/\n/);
    } else if ("btTv:".includes(char)) {
      // GNU sed ends labels at a semicolon as well as at a newline.
      skipTo(/[;\n]/);
    } else if ("dDgGhHlnNpPqQxz=F".includes(char)) {
      i++;
    } else {
      return `uses the unfamiliar command \`${char}\``;
    }
  }
  return undefined;
}
