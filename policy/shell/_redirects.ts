/**
 * The redirection layer of the walk: which redirections may run without
 * asking (only /dev/null and descriptor copies), here-strings, and
 * here-documents, whose end line and body expansions are checked against what
 * bash reads.
 *
 * @module
 */
import type { Node } from "web-tree-sitter";
import type { BashRedirect, BashSimpleCommand } from "./_tree.ts";
import { heredocDelimiter, quoteSource, readLiteral } from "./_literals.ts";
import { continuationEnd, continuationJoinsReason, joinsWord, joinsWordBefore } from "./_coverage.ts";
import { children, REDIRECT_TYPES, STATEMENT_TOKENS } from "./_walker_base.ts";
import { WordWalker } from "./_words.ts";

/** Reads redirections and here-documents. */
export abstract class RedirectWalker extends WordWalker {
  /** Where here-document bodies start, for the coverage check. */
  protected readonly heredocBodyStarts = new Set<number>();
  /** File redirections that belong to no simple command (`done < f`, `$(< f)`). */
  readonly redirects: BashRedirect[] = [];

  protected redirect(
    node: Node,
    finding: BashSimpleCommand | undefined,
    depth: number,
  ): void {
    const sink = finding?.problems ?? this.problems;
    switch (node.type) {
      case "file_redirect":
        this.fileRedirect(node, sink, finding?.redirects ?? this.redirects, depth);
        return;
      case "herestring_redirect":
        for (const { child } of children(node)) {
          if (child.type === "<<<" || child.type === "file_descriptor") this.cover(child);
          else if (child.isNamed) this.word(child, depth);
          else this.unexpected(child, quoteSource(this.text(node)));
        }
        return;
      case "heredoc_redirect":
        this.heredoc(node, finding, depth);
        return;
      default:
        this.unexpected(node, "a redirection");
    }
  }

  protected fileRedirect(node: Node, sink: string[], files: BashRedirect[], depth: number): void {
    let operator = "";
    const destinations: Node[] = [];
    for (const { child, field } of children(node)) {
      if (field === "descriptor") this.cover(child);
      else if (field === "destination") destinations.push(child);
      else if (!child.isNamed) {
        this.cover(child);
        operator = child.type;
      } else this.unexpected(child, quoteSource(this.text(node)));
    }
    if (destinations.length > 1) {
      const rest = destinations.slice(1).map((d) => this.text(d)).join(" ");
      this.notUnderstood(
        `the parser read ${quoteSource(rest)} as part of the redirection ${
          quoteSource(this.text(node))
        }; bash passes it to the command as arguments`,
      );
    }
    const destination = destinations[0];
    const target = destination === undefined ? undefined : this.word(destination, depth);
    const described = quoteSource(this.text(node));
    files.push({ text: this.text(node), operator, ...(target === undefined ? {} : { target }) });
    switch (operator) {
      case ">&-":
      case "<&-":
        return;
      case ">&":
      case "<&":
        if (target?.value !== undefined && /^[0-9]+-?$|^-$/.test(target.value)) return;
        if (target?.value === "/dev/null") return;
        sink.push(
          `${described} redirects to a file; only /dev/null and descriptor copies like 2>&1 are allowed`,
        );
        return;
      case ">":
      case ">>":
      case ">|":
      case "&>":
      case "&>>":
        if (target?.value === "/dev/null") return;
        sink.push(
          `${described} writes to a file; only /dev/null and descriptor copies like 2>&1 are allowed`,
        );
        return;
      case "<":
        // The file it reads is judged by the path rules, like every other path of the line.
        return;
      default:
        this.notUnderstood(`the checker does not handle the redirection ${described}`);
    }
  }

  protected heredoc(
    node: Node,
    finding: BashSimpleCommand | undefined,
    depth: number,
  ): void {
    const start = node.children.find((child) => child?.type === "heredoc_start") ?? undefined;
    const quotedDelimiter = start !== undefined && /['"\\]/.test(this.text(start));
    const delimiter = start === undefined ? "" : heredocDelimiter(this.text(start));
    const stripTabs = node.child(0)?.type === "<<-";
    const asBashReadsIt = (line: string) => stripTabs ? line.replace(/^\t+/, "") : line;
    if (!node.children.some((child) => child?.type === "heredoc_end")) {
      this.notUnderstood(`the here-document ${quoteSource(this.text(node))} has no end line`);
    }
    for (const { child, field } of children(node)) {
      switch (child.type) {
        case "<<":
        case "<<-":
        case "heredoc_start":
        case "file_descriptor":
          this.cover(child);
          break;
        case "heredoc_end": {
          this.cover(child);
          this.heredocBodyStarts.add(child.startIndex);
          // The parser sometimes ends a here-document at a line bash does not
          // accept as its end; bash then reads on, expanding what follows.
          const lineStart = this.source.lastIndexOf("\n", child.startIndex - 1) + 1;
          const lineEnd = this.source.indexOf("\n", lineStart);
          const line = this.source.slice(lineStart, lineEnd === -1 ? undefined : lineEnd);
          if (asBashReadsIt(line) !== delimiter) {
            this.notUnderstood(
              `the parser ends a here-document at ${quoteSource(line)}, but bash ends it only at ${
                quoteSource(delimiter)
              }`,
            );
          }
          break;
        }
        case "heredoc_body": {
          this.heredocBodyStarts.add(child.startIndex);
          // With an unquoted delimiter bash joins a line ending in a backslash
          // with the next before it compares it: `EO\⏎F` ends `<<EOF`.
          const lines = (quotedDelimiter ? this.text(child) : this.text(child).replaceAll("\\\n", "")).split("\n");
          if (lines.some((line) => asBashReadsIt(line) === delimiter)) {
            this.notUnderstood(
              `bash ends the here-document ${quoteSource(this.text(child))} earlier than the parser, at ${
                quoteSource(delimiter)
              }`,
            );
          }
          this.heredocBody(child, quotedDelimiter, depth);
          break;
        }
        default:
          if (field === "redirect" && REDIRECT_TYPES.has(child.type)) {
            this.redirect(child, finding, depth);
          } else if (child.isNamed) {
            // What follows the delimiter on its line (`| head`, `&& ls`)
            // belongs to the enclosing list or pipeline.
            this.statement(child, depth + 1);
          } else if (child.type === "&") {
            this.statementsToken(child, node);
          } else if (STATEMENT_TOKENS.has(child.type)) {
            this.cover(child);
          } else {
            this.unexpected(child, quoteSource(this.text(node)));
          }
      }
    }
  }

  protected heredocBody(node: Node, quotedDelimiter: boolean, depth: number): void {
    this.cover(node);
    if (quotedDelimiter) {
      if (node.namedChildCount > 0) {
        this.notUnderstood(
          `the parser found expansions in the quoted here-document ${quoteSource(this.text(node))}`,
        );
      }
      return;
    }
    // The parser leaves backquotes (and whatever it does not recognise) inside
    // plain text, so every stretch of text between expansions is read again.
    let literalStart = node.startIndex;
    const checkLiteral = (end: number) => {
      const text = this.source.slice(literalStart, end);
      const literal = readLiteral(text, "heredoc");
      if (literal.unrecognized !== undefined) {
        this.problems.push(
          `the here-document ${
            quoteSource(this.text(node))
          } contains ${literal.unrecognized}, which bash expands; quote the delimiter (<<'EOF') to keep it literal`,
        );
      }
    };
    for (const { child } of children(node)) {
      if (child.type === "heredoc_content") continue;
      checkLiteral(child.startIndex);
      literalStart = child.endIndex;
      // The body is covered as a whole, so the coverage check does not see
      // continuations inside its expansions: `$(ls\⏎blk)` runs lsblk.
      for (let i = child.startIndex; i < child.endIndex; i++) {
        if (this.source[i] !== "\\" || this.source[i + 1] !== "\n") continue;
        const after = continuationEnd(this.source, i);
        if (joinsWordBefore(this.source, i) && joinsWord(this.source[after])) {
          this.notUnderstood(continuationJoinsReason(this.source, i, after));
          break;
        }
        i = after - 1;
      }
      if (child.isNamed) this.wordParts(child, depth + 1, true);
      else this.unexpected(child, "a here-document");
    }
    checkLiteral(node.endIndex);
  }
}
