/**
 * THE list of tree-sitter-bash node types the walk accepts, each with the bash
 * semantics the walk implements for it. A line whose tree holds any other
 * node type asks, with a reason naming the construct.
 *
 * `judged`: the walk reads the construct as bash does and judges what is in
 * it; the line may run without asking when everything in it is allowed.
 * `asks`: the walk reads the construct only to report what is inside it (so
 * that the reasons name every command); the construct itself always asks.
 *
 * Where tree-sitter's reading of a construct can differ from bash's, the
 * entry says how the walk closes the gap. Constructs that are not on the list,
 * so that they ask: `[ ... ]` as a test expression (tree-sitter reads its
 * words as an expression grammar, bash runs `[` as a command; `_tree.ts`
 * parses the line again with `[` read as a word, so such a node never reaches
 * the walk), and every syntax error (`ERROR`, missing tokens).
 *
 * @module
 */
import type { Node } from "web-tree-sitter";

/** How the walk treats a node type. */
export interface NodeTypeModel {
  /** `judged`: may run without asking; `asks`: the construct always asks. */
  verdict: "judged" | "asks";
  /** The construct, as a reason names it. */
  construct: string;
  /** The bash semantics the walk implements for it, and how it closes gaps between tree-sitter and bash. */
  semantics: string;
}

const judged = (construct: string, semantics: string): NodeTypeModel => ({ verdict: "judged", construct, semantics });
const asks = (construct: string, semantics: string): NodeTypeModel => ({ verdict: "asks", construct, semantics });

/** Every named node type the walk accepts. */
export const MODELLED_NODE_TYPES: ReadonlyMap<string, NodeTypeModel> = new Map([
  ["program", judged("the command line", "a list of statements separated by `;`, `&&`, `||`; newlines and `&` ask")],
  ["comment", judged("a comment", "`#` at the start of a word, to the end of the line; `a#b` is one word")],
  ["list", judged("a list", "`a && b`, `a || b`, `a ; b`: each side is judged; `&` asks (background job)")],
  ["pipeline", judged("a pipeline", "`a | b`, `a |& b`: each command is judged; `!` inside a pipeline asks")],
  ["negated_command", judged("`!`", "`! cmd`: runs cmd and inverts its status")],
  ["subshell", judged("a subshell", "`( list )`: the list runs in a child shell, each command judged")],
  ["compound_statement", judged("a group", "`{ list; }` runs the list; `(( expr ))` is arithmetic (see below)")],
  ["do_group", judged("a loop body", "`do list done`")],
  ["if_statement", judged("`if`", "`if list; then list; [elif…] [else…] fi`: every list judged")],
  ["elif_clause", judged("`elif`", "part of `if`")],
  ["else_clause", judged("`else`", "part of `if`")],
  ["while_statement", judged("a `while`/`until` loop", "condition and body judged")],
  ["for_statement", asks("a `for`/`select` loop", "assigns the loop variable; the words and the body are read")],
  [
    "c_style_for_statement",
    asks("a C-style `for` loop", "evaluates arithmetic and assigns variables; the body is read"),
  ],
  [
    "case_statement",
    judged("`case`", "`case word in pattern) list ;; esac`: word and patterns expanded, lists judged"),
  ],
  ["case_item", judged("a `case` branch", "patterns (read as patterns, expansions walked) and the list")],
  ["function_definition", asks("a function definition", "defines a function; its body is read")],
  [
    "command",
    judged(
      "a simple command",
      "assignments before the name ask; the name and the arguments are words (an argument that looks like `a=b` is an argument); redirections judged",
    ),
  ],
  ["command_name", judged("a command name", "the first word of a simple command; `[` and `test` are plain commands")],
  ["redirected_statement", judged("a redirection", "redirections applied to a compound command or a command")],
  [
    "file_redirect",
    judged(
      "a redirection",
      "`>`, `>>`, `>|`, `&>`, `&>>` to /dev/null, `<` from /dev/null, `N>&M` descriptor copies and `>&-` closes; any other file asks; `<>` is a syntax error for the parser and asks",
    ),
  ],
  ["file_descriptor", judged("a file descriptor", "`2` in `2>&1`; `{name}>` (stores a descriptor in a variable) asks")],
  ["herestring_redirect", judged("a here-string", "`<<< word`: the word is expanded as a word")],
  [
    "heredoc_redirect",
    judged(
      "a here-document",
      "`<<` and `<<-` (leading tabs removed); the end line is compared with the delimiter as bash compares it (quotes removed, continuations joined), and a body that bash would end earlier asks",
    ),
  ],
  ["heredoc_start", judged("a here-document delimiter", "quoted (body literal) or unquoted (body expanded)")],
  ["heredoc_body", judged("a here-document body", "with an unquoted delimiter every expansion is walked")],
  ["heredoc_content", judged("here-document text", "literal text; backquotes and missed `$` in it ask")],
  ["heredoc_end", judged("a here-document end line", "must equal the delimiter as bash reads it")],
  [
    "variable_assignment",
    asks("an assignment", "`name=value`, `name+=value`, `name[sub]=value`: assigns; the value is walked"),
  ],
  ["variable_assignments", asks("assignments", "several assignments with no command")],
  ["declaration_command", asks("a declaration", "`declare`, `typeset`, `export`, `local`, `readonly`")],
  ["unset_command", asks("`unset`", "unsets variables or functions")],
  ["variable_name", judged("a variable name", "inside an expansion or assignment")],
  ["special_variable_name", judged("a special parameter", "`$?`, `$@`, `$*`, `$#`, `$$`, `$!`, `$-`, `$0`")],
  ["array", judged("an array value", "`(a b c)` in an assignment: every element a word")],
  [
    "test_command",
    judged(
      "a `[[ … ]]` conditional",
      "only `[[ … ]]`: bash's own conditional grammar, where `<` `>` compare strings, `&&` `||` `!` `( )` are its operators, operands expand without splitting; arithmetic operators with computed operands and `-v`/`-R` ask (bash evaluates array subscripts in them); the `[`-form never reaches the walk",
    ),
  ],
  ["binary_expression", judged("a binary expression", "in `[[ … ]]` or arithmetic; assignment operators ask")],
  ["unary_expression", judged("a unary expression", "in `[[ … ]]` or arithmetic")],
  ["parenthesized_expression", judged("a parenthesised expression", "in `[[ … ]]` or arithmetic")],
  ["ternary_expression", judged("`?:`", "in arithmetic")],
  ["postfix_expression", judged("`++`/`--`", "in arithmetic; assigns, so it asks")],
  ["test_operator", judged("a test operator", "`-f`, `-eq`, `==`, … inside `[[ … ]]`")],
  ["word", judged("a word", "unquoted text after quote removal; globs, braces and `~` are only known at run time")],
  ["number", judged("a number", "a literal number")],
  ["raw_string", judged("a single-quoted string", "`'…'`: literal")],
  ["ansi_c_string", judged("`$'…'`", "decoded as bash decodes it (escapes, `\\cX`, NUL ends the string)")],
  ["string", judged("a double-quoted string", '`"…"`: expansions inside walked; a newline inside is text')],
  ["string_content", judged("double-quoted text", "literal; backquotes and `$` the parser missed ask")],
  ["translated_string", asks('`$"…"`', "a locale-translated string")],
  ["concatenation", judged("a word in parts", "parts joined with no blank, as one word")],
  ["simple_expansion", judged("`$name`", "expanded at run time; unquoted it may split")],
  [
    "expansion",
    judged(
      "`${…}`",
      "reading operators only; `=`/`:=` assign, `!` indirection and most `@` transformations ask; computed substring offsets ask",
    ),
  ],
  ["subscript", judged("an array subscript", "only literal numbers, `@` and `*`; bash evaluates any other subscript")],
  ["command_substitution", judged("`$( … )`", "its commands are judged like the rest of the line; backquotes ask")],
  ["process_substitution", judged("`<( … )`/`>( … )`", "its commands are judged; replaced by a /dev/fd name")],
  ["arithmetic_expansion", judged("`$(( … ))`", "only literal numbers; any variable or substitution asks")],
  ["brace_expression", judged("brace expansion", "`{1..3}`: only known at run time")],
  ["extglob_pattern", judged("an extended glob", "a pattern; expansions the parser left inside ask")],
  ["regex", judged("a `=~` regular expression", "a pattern; expansions the parser left inside ask")],
]);

/** Anonymous tokens the walk accepts (each only where the walk expects it). */
export const MODELLED_TOKENS: ReadonlySet<string> = new Set(
  [
    ...'; && || | |& & ( ) { } ! $ " ` $( $(( $[ ${ } (( )) [[ ]] [ ]'.split(" "),
    // `..` only inside a brace expression such as `{1..3}`, which is read whole.
    "..",
    ..."if then elif else fi for select in do done while until case esac function".split(" "),
    ..."declare typeset export local readonly unset unsetenv".split(" "),
    ..."> >> >| &> &>> < <& >& <&- >&- << <<- <<< <( >(".split(" "),
    ..."= += -= *= /= %= **= <<= >>= &= ^= |= ++ -- == != =~ < > <= >= + - * / % ** ^ ~ , ? : -a -o".split(" "),
    ...":- - :? ? :+ + # ## % %% / // /# /% ^ ^^ , ,, @ := Q E U u L a K k A P ;; ;& ;;&".split(" "),
  ],
);

/** Describes a node for a reason: its construct and its text. */
export function describeNode(node: Node, text: string): string {
  const model = MODELLED_NODE_TYPES.get(node.type);
  return model === undefined ? `${node.type} ${text}` : `${model.construct} ${text}`;
}

/**
 * The first node of the tree whose type is not modelled, or `undefined`.
 * Syntax errors are reported separately and skipped here.
 */
export function firstUnmodelledNode(root: Node): Node | undefined {
  const cursor = root.walk();
  try {
    for (;;) {
      const type = cursor.nodeType;
      const known = type === "ERROR" || cursor.nodeIsMissing ||
        (cursor.nodeIsNamed ? MODELLED_NODE_TYPES.has(type) : MODELLED_TOKENS.has(type));
      if (!known) return cursor.currentNode;
      if (cursor.gotoFirstChild()) continue;
      while (!cursor.gotoNextSibling()) {
        if (!cursor.gotoParent()) return undefined;
      }
    }
  } finally {
    cursor.delete();
  }
}
