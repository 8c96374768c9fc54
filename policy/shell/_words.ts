/**
 * The word layer of the walk: quote removal, the parts of a word, and
 * command and process substitutions (whose bodies are walked as statements).
 *
 * @module
 */
import type { Node } from "web-tree-sitter";
import type { BashWord } from "./_tree.ts";
import {
  ansiCStringEnd,
  decodeAnsiC,
  joinParts,
  quoteSource,
  readLiteral,
  STATIC_EMPTY,
  type WordParts,
} from "./_literals.ts";
import { children, REDIRECT_TYPES } from "./_walker_base.ts";
import { ExpansionWalker } from "./_expansions.ts";

const QUOTE_TYPES = new Set(["raw_string", "ansi_c_string", "translated_string"]);

/** Reads words and everything nested in them. */
export abstract class WordWalker extends ExpansionWalker {
  /** A word part whose value is only known when the command runs, with why. */
  protected decidedLater(node: Node, splits: boolean, why: string): WordParts {
    return { prefix: "", splits, dynamic: `${quoteSource(this.text(node))} ${why}` };
  }

  /** Reads one word and walks every substitution inside it. */
  word(node: Node, depth: number): BashWord {
    return this.joinedWord([node], depth);
  }

  /**
   * Reads nodes that touch, with no blank between them, as the one word bash
   * reads there: the parser sometimes gives `$'a'\{` or `"a"\<` as two
   * arguments.
   */
  protected joinedWord(nodes: Node[], depth: number): BashWord {
    const parts = joinParts(nodes.map((node) => this.wordParts(node, depth, false)));
    const text = this.source.slice(nodes[0].startIndex, nodes[nodes.length - 1].endIndex);
    const mayBeOption = parts.value !== undefined
      ? parts.value.startsWith("-")
      : parts.splits || parts.prefix === "" || parts.prefix.startsWith("-");
    // Unquoted text with no expansion but globs, braces and tildes: the pattern bash expands.
    const pattern = parts.value === undefined && !/['"$`\\]/.test(text) ? readLiteral(text, "unquoted") : undefined;
    return {
      text,
      value: parts.value,
      dynamic: parts.value === undefined
        ? (parts.dynamic ?? `${quoteSource(text)} is expanded when the command runs`)
        : undefined,
      mayBeOption,
      ...(pattern?.glob !== undefined && pattern.unrecognized === undefined ? { pattern: pattern.value } : {}),
    };
  }

  // Text the parser left as a literal although it holds shell syntax: a misparse, so ask.
  protected literalNotRead(what: "word" | "string", node: Node, unrecognized: string, splits: boolean): WordParts {
    this.notUnderstood(
      `the ${what} ${
        quoteSource(this.text(node))
      } contains ${unrecognized}, which the parser did not read as shell syntax`,
    );
    return { prefix: "", splits, dynamic: "not understood" };
  }

  protected wordParts(node: Node, depth: number, quoted: boolean): WordParts {
    if (this.tooDeep(node, depth)) return { prefix: "", splits: true };
    if (quoted && QUOTE_TYPES.has(node.type)) {
      // Inside double quotes (or a here-document) bash does not read
      // `'...'` in `${x:-'...'}` as quotes: `"${x:-'$(id)'}"` runs id.
      this.notUnderstood(
        `${
          quoteSource(this.text(node))
        } sits in \`\${...}\` inside double quotes, where bash does not read it as a quoted string`,
      );
      return { prefix: "", splits: false, dynamic: "not understood" };
    }
    switch (node.type) {
      case "word": {
        this.cover(node);
        const literal = readLiteral(this.text(node), "unquoted");
        if (literal.unrecognized !== undefined) {
          return this.literalNotRead("word", node, literal.unrecognized, true);
        }
        if (literal.glob !== undefined) {
          const prefix = literal.value.match(/^[^*?[{}~]*/)?.[0] ?? "";
          return {
            // A leading `~` expands to a path or stays `~`, never an option.
            prefix: literal.value.startsWith("~") ? "~" : prefix,
            splits: literal.glob === "brace expansion",
            dynamic: `${quoteSource(this.text(node))} uses ${literal.glob}`,
            brackets: literal.brackets,
          };
        }
        return { value: literal.value, prefix: literal.value, splits: false, brackets: literal.brackets };
      }
      case "number":
        this.cover(node);
        return /^[-+]?[0-9A-Za-z#_]*$/.test(this.text(node))
          ? { value: this.text(node), prefix: this.text(node), splits: false }
          : this.misread(node);
      case "raw_string":
        this.cover(node);
        if (this.text(node).slice(1, -1).includes("'")) {
          this.notUnderstood(`bash ends the string ${quoteSource(this.text(node))} at its second quote`);
          return { prefix: "", splits: false, dynamic: "not understood" };
        }
        return {
          value: this.text(node).slice(1, -1),
          prefix: this.text(node).slice(1, -1),
          splits: false,
        };
      case "ansi_c_string": {
        this.cover(node);
        // The parser reads `\\'` in `$'a\\' ...'` as an escaped quote and
        // runs on to a later quote, where bash ends the string.
        const end = ansiCStringEnd(this.text(node));
        if (end !== this.text(node).length) {
          this.notUnderstood(
            `bash ends the string ${quoteSource(this.text(node))} at offset ${
              node.startIndex + end
            }, earlier than the parser`,
          );
          return { prefix: "", splits: false, dynamic: "not understood" };
        }
        const value = decodeAnsiC(this.text(node).slice(2, -1));
        if (value === undefined) {
          this.notUnderstood(
            `${quoteSource(this.text(node))} holds an escape above ASCII, whose bytes depend on the locale`,
          );
          return { prefix: "", splits: false, dynamic: "not understood" };
        }
        return { value, prefix: value, splits: false };
      }
      case "string":
        return this.doubleQuoted(node, depth);
      case "translated_string":
        for (const { child } of children(node)) {
          if (child.type === "$") this.cover(child);
          else if (child.type === "string") this.doubleQuoted(child, depth + 1);
          else this.unexpected(child, quoteSource(this.text(node)));
        }
        return this.decidedLater(node, false, "is a locale-translated string");
      case "concatenation": {
        const parts: WordParts[] = [];
        for (const { child } of children(node)) {
          if (child.isNamed || this.literalDollar(child)) parts.push(this.wordParts(child, depth + 1, quoted));
          else parts.push(this.misread(child));
        }
        return joinParts(parts);
      }
      case "simple_expansion":
        this.cover(node);
        return this.decidedLater(node, !quoted, "is expanded when the command runs");
      case "expansion":
        this.expansion(node, depth, quoted);
        return this.decidedLater(node, !quoted, "is expanded when the command runs");
      case "command_substitution":
        this.commandSubstitution(node, depth);
        return this.decidedLater(node, !quoted, "is replaced by its output when the command runs");
      case "process_substitution":
        this.processSubstitution(node, depth);
        return {
          prefix: "/dev/fd/",
          splits: false,
          dynamic: `${quoteSource(this.text(node))} is replaced by a file name when the command runs`,
        };
      case "arithmetic_expansion":
        for (const { child } of children(node)) {
          if (child.isNamed) this.arithmetic(child, depth + 1, node);
          else if (["$((", "))", "$[", "]"].includes(child.type)) this.cover(child);
          else this.unexpected(child, quoteSource(this.text(node)));
        }
        return this.decidedLater(node, !quoted, "is computed when the command runs");
      case "brace_expression":
        this.cover(node);
        return this.decidedLater(node, true, "uses brace expansion");
      case "extglob_pattern":
      case "regex":
        this.pattern(node);
        return this.decidedLater(node, false, "is a pattern");
      case "$":
        if (this.literalDollar(node)) {
          this.cover(node);
          return { value: "$", prefix: "$", splits: false };
        }
        return this.misread(node);
      default:
        return this.misread(node);
    }
  }

  /**
   * Whether an anonymous `$` token is a literal dollar for bash: `\$`, or
   * `$` with nothing after it that bash expands (`a$`, `$ b`). Followed by a
   * quote it starts `$"..."` or `$'...'`.
   */
  protected literalDollar(node: Node): boolean {
    if (node.isNamed || node.type !== "$") return false;
    const text = this.text(node);
    if (text === "\\$") return true;
    return text === "$" && !/^[A-Za-z0-9_{(\[@*#?$!\-'"]/.test(this.source.slice(node.endIndex, node.endIndex + 1));
  }

  protected misread(node: Node): WordParts {
    this.unexpected(node, "a word");
    return { prefix: "", splits: true, dynamic: "not understood" };
  }

  protected doubleQuoted(node: Node, depth: number): WordParts {
    const parts: WordParts[] = [];
    // Literal text is read in runs, since the parser leaves the newlines of a
    // string out of its nodes (`"a⏎b"` is one word for bash, holding a
    // newline) and a backslash before such a newline removes both.
    let run = "";
    let position = node.startIndex;
    const flush = (): boolean => {
      if (run === "") return true;
      const literal = readLiteral(run, "double");
      run = "";
      if (literal.unrecognized !== undefined) {
        this.literalNotRead("string", node, literal.unrecognized, false);
        return false;
      }
      parts.push({ value: literal.value, prefix: literal.value, splits: false });
      return true;
    };
    for (const { child } of children(node)) {
      const gap = this.source.slice(position, child.startIndex);
      position = child.endIndex;
      if (gap !== "") {
        if (!/^\n+$/.test(gap)) return this.misread(node);
        this.coverRange(child.startIndex - gap.length, child.startIndex);
        run += gap;
      }
      if (!child.isNamed && child.type === '"') {
        this.cover(child);
        // tree-sitter-bash folds blanks before the closing quote into its token (`" "` is one token after `"`):
        // they are part of the string's content.
        const token = this.text(child);
        if (token.length > 1 && token.endsWith('"')) run += token.slice(0, -1);
      } else if (child.type === "string_content") {
        this.cover(child);
        run += this.text(child);
      } else if (child.isNamed) {
        if (!flush()) return { prefix: "", splits: false, dynamic: "not understood" };
        parts.push(this.wordParts(child, depth + 1, true));
      } else {
        parts.push(this.misread(child));
      }
    }
    if (!flush()) return { prefix: "", splits: false, dynamic: "not understood" };
    return parts.length === 0 ? STATIC_EMPTY : joinParts(parts);
  }

  protected commandSubstitution(node: Node, depth: number): void {
    if (this.text(node).startsWith("`")) {
      this.problems.push(
        `${quoteSource(this.text(node))} is a backquote substitution; use $(...) instead`,
      );
    }
    this.substitutionBody(node, depth, ["$(", ")", "`"]);
  }

  /** The statements of `$(...)`, `<(...)` or `>(...)`, between the given delimiters. */
  private substitutionBody(node: Node, depth: number, delimiters: string[]): void {
    for (const { child, field } of children(node)) {
      if (!child.isNamed && delimiters.includes(child.type)) {
        this.cover(child);
      } else if (field === "redirect" && REDIRECT_TYPES.has(child.type)) {
        // `$(< file)`: bash reads the file without running a command.
        this.redirect(child, undefined, depth);
      } else if (child.isNamed) {
        this.statement(child, depth + 1);
      } else if (child.type === "&" || child.type === ";") {
        this.statementsToken(child, node);
      } else {
        this.unexpected(child, quoteSource(this.text(node)));
      }
    }
  }

  protected statementsToken(token: Node, parent: Node): void {
    this.cover(token);
    if (token.type === "&") {
      this.problems.push(
        `\`&\` in ${quoteSource(this.text(parent))} runs a command in the background`,
      );
    }
  }

  protected processSubstitution(node: Node, depth: number): void {
    this.substitutionBody(node, depth, ["<(", ">(", ")"]);
  }
}
