/**
 * The statement layer of the walk: lists, pipelines, compound commands,
 * simple commands with their assignments and redirections, declarations,
 * loops, `case` and function definitions. `analyzeBash` in `_tree.ts` runs it.
 *
 * @module
 */
import type { Node } from "web-tree-sitter";
import type { BashSimpleCommand } from "./_tree.ts";
import { quoteSource } from "./_literals.ts";
import { children, REDIRECT_TYPES, STATEMENT_TOKENS } from "./_walker_base.ts";
import { ConditionalWalker } from "./_conditionals.ts";
import { checkCoverage } from "./_coverage.ts";

const CASE_TERMINATORS = new Set([";;", ";&", ";;&"]);

/** Walks a whole tree; the result is in `commands`, `problems` and `understood`. */
export class Walker extends ConditionalWalker {
  /** How many statements (not comments) the walk met. */
  statementCount = 0;
  /** Where the first statement starts. */
  firstStatement = Infinity;
  /** Where the last statement ends. */
  lastStatement = -1;
  /** Offsets of the command names the walk found. */
  private readonly commandNames = new Set<number>();

  /**
   * @param source The command line as bash reads it.
   * @param brackets Offsets of the `[` the tree shows as another word character
   * (see `_tree.ts`); each must turn out to start a command name.
   */
  constructor(source: string, private readonly brackets: ReadonlySet<number> = new Set()) {
    super(source);
  }

  /** Asks unless every replaced `[` is where bash reads it: at the start of a command name. */
  checkBrackets(): void {
    for (const offset of this.brackets) {
      if (!this.commandNames.has(offset)) {
        this.notUnderstood(
          `the checker could not read \`[\` at offset ${offset} as the command bash runs there`,
        );
      }
    }
  }

  /** Checks that every byte of the source belongs to a node the walk understood. */
  checkCoverage(): void {
    const result = checkCoverage({
      source: this.source,
      covered: this.covered,
      firstStatement: this.firstStatement,
      lastStatement: this.lastStatement,
      heredocBodyStarts: this.heredocBodyStarts,
    });
    if (result.notUnderstood !== undefined) this.notUnderstood(result.notUnderstood);
    this.problems.push(...result.problems);
  }

  /** A node that holds statements separated by operators and keywords. */
  statements(node: Node, depth: number): void {
    if (this.tooDeep(node, depth)) return;
    let previous: Node | undefined;
    for (const { child } of children(node)) {
      if (child.isMissing || child.type === "ERROR") {
        this.syntaxError(child);
      } else if (child.isNamed) {
        this.statement(child, depth + 1);
        previous = child;
      } else if (child.type === "&") {
        this.cover(child);
        this.problems.push(
          `\`&\` runs ${
            quoteSource(previous === undefined ? "" : this.text(previous))
          } in the background; only ; && || | ( ) may join commands`,
        );
      } else if (STATEMENT_TOKENS.has(child.type)) {
        this.cover(child);
      } else {
        this.unexpected(child, quoteSource(this.text(node)));
      }
    }
  }

  statement(node: Node, depth: number): void {
    if (this.tooDeep(node, depth)) return;
    if (node.type !== "comment") {
      this.statementCount++;
      this.firstStatement = Math.min(this.firstStatement, node.startIndex);
      this.lastStatement = Math.max(this.lastStatement, node.endIndex);
    }
    switch (node.type) {
      case "command":
        this.command(node, [], node, depth);
        return;
      case "redirected_statement":
        this.redirectedStatement(node, depth);
        return;
      case "pipeline":
        // bash accepts `!` only at the start of a pipeline.
        for (const negated of node.namedChildren.slice(1)) {
          if (negated?.type === "negated_command") {
            this.notUnderstood(`bash rejects ${quoteSource(this.text(negated))} inside a pipeline`);
          }
        }
        this.statements(node, depth);
        return;
      case "list":
      case "subshell":
      case "negated_command":
      case "do_group":
      case "if_statement":
      case "elif_clause":
      case "else_clause":
      case "while_statement":
        this.statements(node, depth);
        return;
      case "compound_statement":
        if (node.child(0)?.type === "((") this.arithmeticCommand(node, depth);
        else this.statements(node, depth);
        return;
      case "for_statement":
        this.forStatement(node, depth);
        return;
      case "c_style_for_statement":
        this.cStyleFor(node, depth);
        return;
      case "case_statement":
        this.caseStatement(node, depth);
        return;
      case "function_definition":
        this.functionDefinition(node, depth);
        return;
      case "variable_assignment":
      case "variable_assignments":
        this.assignment(node, depth);
        return;
      case "declaration_command":
      case "unset_command":
        this.declaration(node, depth);
        return;
      case "test_command":
        this.testCommand(node, depth);
        return;
      case "comment":
        this.cover(node);
        return;
      default:
        this.unexpected(node, "a list of commands");
    }
  }

  protected redirectedStatement(node: Node, depth: number): void {
    const body = node.childForFieldName("body");
    const redirects: Node[] = [];
    for (const { child } of children(node)) {
      if (body !== null && child.equals(body)) continue;
      if (REDIRECT_TYPES.has(child.type)) redirects.push(child);
      else this.unexpected(child, quoteSource(this.text(node)));
    }
    if (body === null) {
      for (const redirect of redirects) this.redirect(redirect, undefined, depth);
      return;
    }
    if (body.type === "command") {
      this.command(body, redirects, node, depth);
      return;
    }
    this.statement(body, depth + 1);
    for (const redirect of redirects) this.redirect(redirect, undefined, depth);
  }

  protected command(
    node: Node,
    outerRedirects: Node[],
    whole: Node,
    depth: number,
  ): void {
    const finding: BashSimpleCommand = {
      text: this.text(whole),
      kind: "command",
      words: [],
      problems: [],
      redirects: [],
    };
    this.commands.push(finding);
    const redirects = [...outerRedirects];
    const words: Node[] = [];
    for (const { child, field } of children(node)) {
      if (child.type === "variable_assignment") {
        const name = this.text(child.childForFieldName("name") ?? child);
        finding.problems.push(
          `${quoteSource(this.text(child))} sets ${name} for the command it prefixes`,
        );
        this.assignmentValue(child, depth);
      } else if (REDIRECT_TYPES.has(child.type)) {
        redirects.push(child);
      } else if (field === "name" && child.type === "command_name") {
        const inner = child.namedChildren.filter((n) => n !== null);
        if (inner.length !== 1 || child.childCount !== 1) {
          this.unexpected(child, quoteSource(this.text(node)));
          continue;
        }
        words.push(inner[0]);
        this.commandNames.add(inner[0].startIndex);
      } else if (field === "argument" && child.isNamed) {
        words.push(child);
      } else if (this.literalDollar(child)) {
        words.push(child);
      } else if (child.type === "$") {
        this.cover(child);
        finding.problems.push(
          `${quoteSource(this.text(node))} uses a \`$"..."\` locale-translated string`,
        );
      } else {
        this.unexpected(child, quoteSource(this.text(node)));
      }
    }
    const joined: Node[][] = [];
    for (const word of words) {
      const last = joined.at(-1);
      if (last !== undefined && last[last.length - 1].endIndex === word.startIndex) last.push(word);
      else joined.push([word]);
    }
    finding.words = joined.map((nodes) => this.joinedWord(nodes, depth));
    for (const redirect of redirects) {
      this.redirect(redirect, finding, depth);
      const before = words.find((word) => word.endIndex === redirect.startIndex);
      if (before !== undefined && /^\{[A-Za-z_][A-Za-z0-9_]*\}$/.test(this.text(before))) {
        finding.problems.push(
          `${quoteSource(this.text(before) + this.text(redirect))} stores a file descriptor in a variable`,
        );
      }
    }
  }

  protected assignment(node: Node, depth: number): void {
    const finding: BashSimpleCommand = {
      text: this.text(node),
      kind: "assignment",
      words: [],
      problems: [],
      redirects: [],
    };
    this.commands.push(finding);
    const assignments = node.type === "variable_assignments" ? node.namedChildren.filter((n) => n !== null) : [node];
    for (const assignment of assignments) {
      if (assignment.type !== "variable_assignment") {
        this.unexpected(assignment, quoteSource(this.text(node)));
        continue;
      }
      const name = this.text(assignment.childForFieldName("name") ?? assignment);
      finding.problems.push(
        `${quoteSource(this.text(assignment))} assigns the shell variable ${name}`,
      );
      this.assignmentValue(assignment, depth);
    }
  }

  protected assignmentValue(node: Node, depth: number): void {
    for (const { child, field } of children(node)) {
      if (field === "name" && child.type === "subscript") this.subscript(child, depth, node);
      else if (field === "name") this.cover(child);
      else if (!child.isNamed && (child.type === "=" || child.type === "+=")) {
        this.cover(child);
      } else if (field === "value" && child.type === "array") {
        for (const { child: element } of children(child)) {
          if (element.isNamed) this.word(element, depth);
          else if (element.type === "(" || element.type === ")") this.cover(element);
          else this.unexpected(element, quoteSource(this.text(node)));
        }
      } else if (field === "value" && child.isNamed) {
        this.word(child, depth);
      } else {
        this.unexpected(child, quoteSource(this.text(node)));
      }
    }
  }

  protected declaration(node: Node, depth: number): void {
    const finding: BashSimpleCommand = {
      text: this.text(node),
      kind: "declaration",
      words: [],
      problems: [],
      redirects: [],
    };
    this.commands.push(finding);
    for (const { child } of children(node)) {
      if (!child.isNamed) {
        this.cover(child);
        finding.words.push({ text: child.type, value: child.type, mayBeOption: false });
      } else if (child.type === "variable_assignment") {
        this.cover(child.childForFieldName("name") ?? child);
        this.assignmentValue(child, depth);
        finding.words.push({ text: this.text(child), mayBeOption: false });
      } else if (child.type === "variable_name") {
        this.cover(child);
        finding.words.push({ text: this.text(child), value: this.text(child), mayBeOption: false });
      } else {
        finding.words.push(this.word(child, depth));
      }
    }
    finding.problems.push(
      `${quoteSource(this.text(node))} changes the shell's variables`,
    );
  }

  protected forStatement(node: Node, depth: number): void {
    const keyword = node.child(0)?.type ?? "for";
    for (const { child, field } of children(node)) {
      if (field === "variable") {
        this.cover(child);
        this.problems.push(
          `the ${keyword} loop in ${quoteSource(this.text(node))} assigns the shell variable ${this.text(child)}`,
        );
      } else if (field === "value") {
        this.word(child, depth);
      } else if (field === "body") {
        this.statement(child, depth + 1);
      } else if (!child.isNamed && STATEMENT_TOKENS.has(child.type)) {
        this.cover(child);
      } else {
        this.unexpected(child, quoteSource(this.text(node)));
      }
    }
  }

  protected caseStatement(node: Node, depth: number): void {
    for (const { child, field } of children(node)) {
      if (field === "value") this.word(child, depth);
      else if (child.type === "case_item") this.caseItem(child, depth);
      else if (!child.isNamed && STATEMENT_TOKENS.has(child.type)) this.cover(child);
      else if (child.type === "comment") this.cover(child);
      else this.unexpected(child, quoteSource(this.text(node)));
    }
  }

  protected caseItem(node: Node, depth: number): void {
    for (const { child, field } of children(node)) {
      if (field === "value") this.word(child, depth);
      else if (child.isNamed) this.statement(child, depth + 1);
      else if (STATEMENT_TOKENS.has(child.type) || CASE_TERMINATORS.has(child.type)) this.cover(child);
      else this.unexpected(child, quoteSource(this.text(node)));
    }
  }

  protected functionDefinition(node: Node, depth: number): void {
    const name = node.childForFieldName("name");
    this.problems.push(
      `${quoteSource(this.text(node))} defines the function ${name === null ? "?" : this.text(name)}`,
    );
    for (const { child, field } of children(node)) {
      if (field === "name") this.cover(child);
      else if (field === "body") this.statement(child, depth + 1);
      else if (["function", "(", ")"].includes(child.type)) this.cover(child);
      else this.unexpected(child, quoteSource(this.text(node)));
    }
  }
}
