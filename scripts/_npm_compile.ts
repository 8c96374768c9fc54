/**
 * Compiles the Deno sources to ESM `.js` and `.d.ts` for Node with the
 * TypeScript compiler API, and reports which bare specifiers each emitted file
 * imports.
 *
 * The sources are judged the way Node will load them: `module: nodenext` with
 * every file an ES module (the repository has no package.json, so the compiler
 * host supplies `{"type": "module"}` at the root), the ES2023 library, and
 * `@types/node` for Node's globals. Relative
 * `.ts` imports become `.js`: `rewriteRelativeImportExtensions` does it in the
 * JavaScript, a declaration transformer in the `.d.ts` files, where the
 * compiler keeps them as written.
 *
 * @module
 */
import path from "node:path";
import ts from "typescript";

/** What to compile. */
export interface CompileRequest {
  /** The repository root; output paths mirror source paths below it. */
  root: string;
  /** Where the output goes. */
  outDir: string;
  /** Entry files (absolute); whatever they import relatively is compiled too. */
  rootNames: readonly string[];
  /** Global declarations for the compilation only (never emitted), e.g. what Deno's types have and Node's lack. */
  ambient?: string;
  /** Bare specifiers of the workspace's own packages, to the absolute files they name (kept bare in the output). */
  paths?: Record<string, string[]>;
}

/** One emitted file. */
export interface EmittedFile {
  /** Absolute output path. */
  path: string;
  /** The source file it came from (absolute). */
  source: string;
  /** Bare specifiers it imports (packages, not `node:` built-ins). */
  bare: string[];
}

/** The outcome of a compilation. */
export interface CompileResult {
  /** Every emitted file. */
  emitted: EmittedFile[];
  /** The compiler's errors and warnings. */
  diagnostics: CompileDiagnostic[];
}

/** One diagnostic of the compiler. */
export interface CompileDiagnostic {
  /** The file it is in (absolute), if any. */
  file?: string;
  /** Whether it is an error (not a warning or suggestion). */
  error: boolean;
  /** The formatted message, with its location. */
  text: string;
}

/**
 * Diagnostics Deno does not raise, so the sources cannot be held to them:
 * 7016, an npm package without declarations imported under `noImplicitAny`
 * (Deno types it `any`; the code narrows it with its own interface).
 */
const DENO_TOLERATED = new Set([7016]);

const rewritable = /^\.\.?\/.*\.(m|c)?tsx?$/;

/** `./a.ts` gives `./a.js`, `./a.mts` gives `./a.mjs`; declaration files and anything not relative stay. */
export function rewriteRelativeSpecifier(specifier: string): string {
  if (!rewritable.test(specifier) || /\.d\.(m|c)?ts$/.test(specifier)) return specifier;
  return specifier.replace(/\.(m|c)?tsx?$/, (_ext, kind?: string) => `.${kind ?? ""}js`);
}

/**
 * Leaves the comments out of the JavaScript: the declarations keep the JSDoc
 * (what editors show), so in the `.js` files it is only bytes to install, a
 * fifth of them.
 */
function withoutComments(context: ts.TransformationContext) {
  const visit = (node: ts.Node): ts.Node => {
    ts.setEmitFlags(node, ts.EmitFlags.NoComments);
    return ts.visitEachChild(node, visit, context);
  };
  return (file: ts.SourceFile): ts.SourceFile => ts.visitNode(file, visit) as ts.SourceFile;
}

function rewriteDeclarationImports(context: ts.TransformationContext) {
  const { factory } = context;
  const literal = (node: ts.Expression | undefined): ts.StringLiteral | undefined => {
    if (node === undefined || !ts.isStringLiteral(node)) return undefined;
    const rewritten = rewriteRelativeSpecifier(node.text);
    return rewritten === node.text ? undefined : factory.createStringLiteral(rewritten);
  };
  const visit = (node: ts.Node): ts.Node => {
    if (ts.isImportDeclaration(node)) {
      const s = literal(node.moduleSpecifier);
      if (s) {
        return factory.updateImportDeclaration(node, node.modifiers, node.importClause, s, node.attributes);
      }
    } else if (ts.isExportDeclaration(node)) {
      const s = literal(node.moduleSpecifier);
      if (s) {
        return factory.updateExportDeclaration(
          node,
          node.modifiers,
          node.isTypeOnly,
          node.exportClause,
          s,
          node.attributes,
        );
      }
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      const s = literal(node.argument.literal as ts.Expression);
      if (s) {
        return factory.updateImportTypeNode(
          node,
          factory.updateLiteralTypeNode(node.argument, s),
          node.attributes,
          node.qualifier,
          node.typeArguments?.map((t) => ts.visitNode(t, visit) as ts.TypeNode),
          node.isTypeOf,
        );
      }
    } else if (ts.isModuleDeclaration(node) && ts.isStringLiteral(node.name)) {
      const s = literal(node.name);
      if (s) return factory.updateModuleDeclaration(node, node.modifiers, s, node.body);
    }
    return ts.visitEachChild(node, visit, context);
  };
  return (file: ts.SourceFile | ts.Bundle) => ts.visitNode(file, visit) as ts.SourceFile | ts.Bundle;
}

/** The module specifiers an emitted file imports: static, re-exported, dynamic (literal) and `import("...")` types. */
export function importedSpecifiers(fileName: string, text: string): string[] {
  const file = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      if (ts.isStringLiteral(node.moduleSpecifier)) found.push(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments.length > 0 && ts.isStringLiteralLike(node.arguments[0])
    ) {
      found.push(node.arguments[0].text);
    } else if (
      ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)
    ) {
      found.push(node.argument.literal.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

/** The compiler options of the npm build. */
export function compilerOptions(root: string, outDir: string): ts.CompilerOptions {
  return {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    // Node 20's language level. The DOM library stays because it is the only one that declares
    // `WebAssembly` (Node has it, @types/node 20 does not type it); the Node run of the suite
    // catches a browser-only global the types let through.
    lib: ["lib.es2023.d.ts", "lib.dom.d.ts"],
    types: ["node"],
    strict: true,
    declaration: true,
    rewriteRelativeImportExtensions: true,
    resolveJsonModule: true,
    skipLibCheck: true,
    rootDir: root,
    outDir,
    newLine: ts.NewLineKind.LineFeed,
    noEmitOnError: false,
  };
}

/**
 * Compiles `rootNames` and everything they import relatively into `outDir`.
 * Declarations and JavaScript are written even when there are type errors, so
 * the caller decides (and can show every error at once).
 */
export function compile(request: CompileRequest, isBare: (specifier: string) => boolean): CompileResult {
  const options = {
    ...compilerOptions(request.root, request.outDir),
    ...(request.paths ? { paths: request.paths } : {}),
  };
  const host = ts.createCompilerHost(options);
  const virtualManifest = path.join(request.root, "package.json");
  const hasManifest = ts.sys.fileExists(virtualManifest);
  if (!hasManifest) {
    // Deno treats every file as an ES module; nodenext needs a package.json to agree.
    const fileExists = host.fileExists.bind(host);
    const readFile = host.readFile.bind(host);
    host.fileExists = (f) => f === virtualManifest || fileExists(f);
    host.readFile = (f) => f === virtualManifest ? '{"type":"module"}' : readFile(f);
  }
  const ambientFile = path.join(request.root, ".npm_build_ambient.d.ts");
  if (request.ambient !== undefined) {
    const fileExists = host.fileExists.bind(host);
    const getSourceFile = host.getSourceFile.bind(host);
    host.fileExists = (f) => f === ambientFile || fileExists(f);
    host.getSourceFile = (f, language, onError, create) =>
      f === ambientFile
        ? ts.createSourceFile(f, request.ambient!, language, true)
        : getSourceFile(f, language, onError, create);
  }
  const rootNames = [...request.rootNames, ...(request.ambient !== undefined ? [ambientFile] : [])];
  const program = ts.createProgram({ rootNames, options, host });
  const emitted: EmittedFile[] = [];
  const result = program.emit(
    undefined,
    (fileName, text, writeBOM, _onError, sources) => {
      host.writeFile(fileName, text, writeBOM);
      const source = sources?.[0]?.fileName ?? fileName;
      emitted.push({
        path: path.resolve(fileName),
        source: path.resolve(source),
        bare: /\.(js|mjs|d\.ts|d\.mts)$/.test(fileName) ? importedSpecifiers(fileName, text).filter(isBare) : [],
      });
    },
    undefined,
    false,
    { after: [withoutComments], afterDeclarations: [rewriteDeclarationImports] },
  );
  const all = ts.sortAndDeduplicateDiagnostics([...ts.getPreEmitDiagnostics(program), ...result.diagnostics])
    .filter((d) => !DENO_TOLERATED.has(d.code));
  const formatHost: ts.FormatDiagnosticsHost = {
    getCanonicalFileName: (f) => f,
    getCurrentDirectory: () => request.root,
    getNewLine: () => "\n",
  };
  return {
    emitted,
    diagnostics: all.map((d) => ({
      file: d.file ? path.resolve(d.file.fileName) : undefined,
      error: d.category === ts.DiagnosticCategory.Error,
      text: ts.formatDiagnostics([d], formatHost).trimEnd(),
    })),
  };
}
