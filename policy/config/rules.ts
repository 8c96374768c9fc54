/**
 * The rules of the policy files, merged over their layers: which rule of
 * which layer decides a command's words or a path, and why.
 *
 * Layers, highest first: `managed` (`/etc/toolfence/config.json`), `cli`
 * (`--config FILE`), `project` (`toolfence.json` at the workspace root),
 * `user` (`~/.config/toolfence/config.json`), `default` (built in, empty).
 * Where rules of several layers match, deny beats ask beats allow, unless a
 * matching rule (or its whole layer) is marked `override`: then the layers
 * below it are not considered, though the layers above it still are, so no
 * layer can loosen what a higher one forbids. A rule (or layer) with
 * `enforce: false` is in shadow mode: its decision is recorded as what would
 * have happened, and not applied.
 *
 * @module
 */
import fs from "node:fs";
import path from "node:path";
import {
  codePoints,
  globBase,
  globMayMatchWithin,
  literalGlob,
  pathGlobMatcher,
  type PathMatcher,
  queryRuntimePermission,
  REPOSITORY_STORE_GLOBS,
  type WildcardItem,
  wildcardMatches,
  wildcardPattern,
} from "@toolfence/internal";
import type { PathRuleInput, PolicyFile } from "./schema.ts";

/** The layers of a policy, highest first. */
export const POLICY_LAYERS = ["managed", "cli", "project", "user", "default"] as const;

/** One layer's name. */
export type PolicyLayerName = typeof POLICY_LAYERS[number];

/** What a command rule says. */
export type RuleDecision = "allow" | "ask" | "deny";

/** Where a rule was written. */
export interface RuleSource {
  /** Its layer. */
  layer: PolicyLayerName;
  /** Its file, when it came from one. */
  file?: string;
  /** 1-based line and column of the rule in the file. */
  line?: number;
  /** 1-based column. */
  column?: number;
}

/** A command rule, ready to match. */
export interface CommandRule {
  /** allow, ask or deny. */
  decision: RuleDecision;
  /** The pattern as written (trimmed). */
  pattern: string;
  /** Whether the pattern is a glob over the joined words (else a token prefix). */
  glob: boolean;
  /** false: shadow mode. */
  enforce: boolean;
  /** true: lower layers are not considered where it matches. */
  override: boolean;
  /** Why, as the file says. */
  reason?: string;
  /** Where it was written. */
  source: RuleSource;
}

/** What a path rule does to what it matches. */
export type PathRuleKind = "deny" | "read-only";

/** A path rule, ready to match. */
export interface PathRule {
  /** deny (hidden) or read-only. */
  kind: PathRuleKind;
  /** The glob as written. */
  pattern: string;
  /** false: shadow mode. */
  enforce: boolean;
  /** true: lower layers are not considered where it matches. */
  override: boolean;
  /** Why, as the file says. */
  reason?: string;
  /** Where it was written. */
  source: RuleSource;
}

/** One layer: a parsed file (or the built-in defaults). */
export interface PolicyLayer {
  /** Its name. */
  name: PolicyLayerName;
  /** The file it was read from. */
  file?: string;
  /** The file's content. */
  config: PolicyFile;
  /** Its text, for positions. */
  text?: string;
  /** Positions of values by key path (`commands.deny[0]`). */
  positions?: ReadonlyMap<string, { line: number; column: number }>;
}

/** A decision and the rule behind it. */
export interface RuleOutcome<R> {
  /** The decision in force, when a rule decided. */
  rule?: R;
  /** What shadow-mode rules would have decided instead, when stricter. */
  shadow?: R;
  /** Every matching rule, highest layer first. */
  matches: R[];
}

const STRENGTH: Record<string, number> = { allow: 0, "read-only": 1, ask: 1, deny: 2 };

function strength(rule: CommandRule | PathRule): number {
  return STRENGTH[(rule as CommandRule).decision ?? (rule as PathRule).kind];
}

function rank(layer: PolicyLayerName): number {
  return POLICY_LAYERS.indexOf(layer);
}

/**
 * The rule in force among `matches`: walking the layers top-down, the first
 * layer with an overriding match closes the walk; the strictest match among
 * the layers walked wins (the highest layer on a tie).
 */
function resolve<R extends CommandRule | PathRule>(matches: readonly R[]): R | undefined {
  const sorted = [...matches].sort((a, b) => rank(a.source.layer) - rank(b.source.layer));
  let considered: R[] = sorted;
  const closer = sorted.find((rule) => rule.override);
  if (closer !== undefined) considered = sorted.filter((rule) => rank(rule.source.layer) <= rank(closer.source.layer));
  let best: R | undefined;
  for (const rule of considered) {
    if (best === undefined || strength(rule) > strength(best)) best = rule;
  }
  return best;
}

function outcome<R extends CommandRule | PathRule>(matches: R[]): RuleOutcome<R> {
  const sorted = [...matches].sort((a, b) => rank(a.source.layer) - rank(b.source.layer));
  const rule = resolve(sorted.filter((r) => r.enforce));
  const all = resolve(sorted);
  const shadow = all !== undefined && all !== rule && (rule === undefined || strength(all) > strength(rule))
    ? all
    : undefined;
  return { ...(rule ? { rule } : {}), ...(shadow ? { shadow } : {}), matches: sorted };
}

const GLOB_CHARS = /[*?[]/;

const patternCache = new Map<string, WildcardItem[]>();

/**
 * Whether a command rule's pattern matches a simple command's words: a prefix
 * by whole words, or a glob over the words joined by single spaces.
 */
export function commandPatternMatches(rule: Pick<CommandRule, "pattern" | "glob">, words: readonly string[]): boolean {
  if (words.length === 0) return false;
  if (rule.glob) {
    let items = patternCache.get(rule.pattern);
    if (items === undefined) {
      // Matched in linear time (`internal/wildcard.ts`): a rule's `*` are matched against a line the model wrote.
      items = wildcardPattern(rule.pattern.split(/\s+/).join(" "), true);
      if (patternCache.size > 512) patternCache.clear();
      patternCache.set(rule.pattern, items);
    }
    return wildcardMatches(items, codePoints(words.join(" ")));
  }
  const tokens = rule.pattern.split(/\s+/);
  return tokens.length <= words.length && tokens.every((token, i) => token === words[i]);
}

/**
 * Whether a command whose first words are `known` and whose next word is only
 * known at run time could match the rule.
 */
export function commandPatternMayMatch(rule: Pick<CommandRule, "pattern" | "glob">, known: readonly string[]): boolean {
  const tokens = rule.pattern.split(/\s+/);
  for (let i = 0; i < known.length && i < tokens.length; i++) {
    const token = tokens[i];
    // A glob is matched over the joined words (`?` and `*` match spaces too): from its first glob token on,
    // anything may match.
    if (GLOB_CHARS.test(token)) return true;
    if (token !== known[i]) return false;
  }
  return true;
}

function commandRule(
  decision: RuleDecision,
  input: string | { pattern: string; enforce?: boolean; override?: boolean; reason?: string },
  layer: PolicyLayer,
  index: number,
): CommandRule {
  const spec = typeof input === "string" ? { pattern: input } : input;
  const pattern = spec.pattern.trim().split(/\s+/).join(" ");
  const at = layer.positions?.get(`commands.${decision}[${index}]`);
  return {
    decision,
    pattern,
    glob: GLOB_CHARS.test(pattern),
    enforce: spec.enforce ?? layer.config.enforce ?? true,
    override: spec.override ?? layer.config.override ?? false,
    ...(spec.reason === undefined ? {} : { reason: spec.reason }),
    source: { layer: layer.name, ...(layer.file ? { file: layer.file } : {}), ...(at ?? {}) },
  };
}

function pathRule(
  kind: PathRuleKind,
  input: string | { pattern: string; enforce?: boolean; override?: boolean; reason?: string },
  layer: PolicyLayer,
  index: number,
): PathRule {
  const spec = typeof input === "string" ? { pattern: input } : input;
  const key = kind === "deny" ? "deny" : "readOnly";
  const at = layer.positions?.get(`paths.${key}[${index}]`);
  return {
    kind,
    pattern: spec.pattern.trim().replace(/^\.\//, ""),
    enforce: spec.enforce ?? layer.config.enforce ?? true,
    override: spec.override ?? layer.config.override ?? false,
    ...(spec.reason === undefined ? {} : { reason: spec.reason }),
    source: { layer: layer.name, ...(layer.file ? { file: layer.file } : {}), ...(at ?? {}) },
  };
}

/**
 * `rule`, and for an absolute glob whose literal part runs through a symlink (`/srv/w/tokens.json` where `/srv/w`
 * leads to `/data/w`) the same rule at the real path too. The tools judge the real path a name leads to (and the
 * workspace is its real path), so a glob that names a place only by a link's path matched nothing: a server's
 * token file given as `--token-file /srv/w/tokens.json` was read as `tokens.json`. The real path is that of the
 * deepest part that exists now, the rest appended; one the runtime may not read is not looked at (no prompt).
 */
function withRealTwin(rule: PathRule): PathRule[] {
  if (!rule.pattern.startsWith("/")) return [rule];
  const base = globBase(rule.pattern);
  const real = realPathOf(base);
  if (real === undefined || real === base) return [rule];
  // Escaped, so that a real path holding a glob character names only itself.
  return [rule, { ...rule, pattern: literalGlob(real) + rule.pattern.slice(base.length) }];
}

// The real path of `p` (absolute, normalised): its deepest existing ancestor resolved, the missing names appended.
function realPathOf(p: string): string | undefined {
  const missing: string[] = [];
  for (let head = path.posix.normalize(p);; head = path.posix.dirname(head)) {
    if (!queryRuntimePermission("read", head).allowed) return undefined;
    try {
      const real = fs.realpathSync.native(head);
      return missing.length === 0 ? real : path.posix.join(real, ...missing.reverse());
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT" || head === "/") return undefined;
      missing.push(path.posix.basename(head));
    }
  }
}

// The globs relative to `root` that match, below `root`, what `pattern` matches: a relative pattern itself, an
// absolute one by its names past those that match the root's names (`**` taking any number of them, none or all),
// `**` for a pattern that matches the root itself. None where it cannot match below the root (`/etc/**`).
function globsBelow(pattern: string, root: string): string[] {
  const trimmed = pattern.replace(/(?<=.)\/+$/, "");
  if (!trimmed.startsWith("/")) return [trimmed];
  const names = trimmed.split("/").filter((name) => name !== "");
  const rootNames = root === "/" ? [] : root.split("/").slice(1);
  const found = new Set<string>();
  const seen = new Set<string>();
  const match = (i: number, j: number): void => {
    const key = `${i}:${j}`;
    if (seen.has(key)) return;
    seen.add(key);
    if (j === rootNames.length) {
      found.add(i === names.length ? "**" : names.slice(i).join("/"));
      return;
    }
    if (i === names.length) return;
    if (names[i] === "**") {
      match(i + 1, j);
      match(i, j + 1);
    } else if (pathGlobMatcher([names[i]])(rootNames[j])) {
      match(i + 1, j + 1);
    }
  };
  match(0, 0);
  return [...found];
}

/** `rule "git push*" (deny) in the project file /w/toolfence.json:4:7`. */
export function describeRule(rule: CommandRule | PathRule): string {
  const what = "decision" in rule ? rule.decision : rule.kind;
  const where = rule.source.file
    ? `${rule.source.layer} file ${rule.source.file}${
      rule.source.line ? `:${rule.source.line}:${rule.source.column}` : ""
    }`
    : `${rule.source.layer} layer`;
  return `rule ${JSON.stringify(rule.pattern)} (${what}${rule.enforce ? "" : ", shadow mode"}) in the ${where}`;
}

/** What the path rules decide for a path. */
export interface PathOutcome extends RuleOutcome<PathRule> {
  /** `deny`: hidden; `read-only`: no writes; `allow`: no rule applies. */
  decision: "allow" | "deny" | "read-only";
}

/**
 * The rules of every layer of a policy, merged. Immutable once built.
 *
 * Needs no permissions.
 *
 * @example
 * ```ts
 * import { PolicyRules } from "@toolfence/policy";
 * const rules = PolicyRules.fromLayers([{
 *   name: "project",
 *   config: { commands: { deny: ["git push"] }, paths: { deny: ["**\/.env"] } },
 * }], "/work/project");
 * console.log(rules.matchCommand(["git", "push", "origin"]).rule?.decision); // "deny"
 * console.log(rules.decidePath("/work/project/app/.env").decision); // "deny"
 * ```
 */
export class PolicyRules {
  /** The layers, highest first. */
  readonly layers: readonly PolicyLayer[];
  /** The workspace root the path rules are relative to. */
  readonly root: string;
  /** Every command rule, highest layer first. */
  readonly commandRules: readonly CommandRule[];
  /** Every path rule, highest layer first. */
  readonly pathRules: readonly PathRule[];
  readonly #matchers = new Map<PathRule, PathMatcher>();
  /** The rules of `REPOSITORY_STORE_GLOBS` (internal), while a rule hides paths of the workspace. */
  readonly #storeRules: readonly PathRule[];

  private constructor(layers: readonly PolicyLayer[], root: string) {
    this.layers = Object.freeze([...layers].sort((a, b) => rank(a.name) - rank(b.name)));
    this.root = path.posix.normalize(root).replace(/(?<=.)\/$/, "");
    const commands: CommandRule[] = [];
    const paths: PathRule[] = [];
    for (const layer of this.layers) {
      for (const decision of ["deny", "ask", "allow"] as const) {
        (layer.config.commands?.[decision] ?? []).forEach((rule, i) =>
          commands.push(commandRule(decision, rule, layer, i))
        );
      }
      (layer.config.paths?.deny ?? []).forEach((rule, i) =>
        paths.push(...withRealTwin(pathRule("deny", rule, layer, i)))
      );
      (layer.config.paths?.readOnly ?? []).forEach((rule, i) =>
        paths.push(...withRealTwin(pathRule("read-only", rule, layer, i)))
      );
    }
    this.commandRules = Object.freeze(commands);
    this.pathRules = Object.freeze(paths);
    const hiding = paths.find((rule) =>
      rule.kind === "deny" && rule.enforce &&
      globMayMatchWithin(rule.pattern.startsWith("/") ? rule.pattern : `${this.root}/${rule.pattern}`, this.root)
    );
    this.#storeRules = hiding === undefined ? [] : REPOSITORY_STORE_GLOBS.map((pattern) => ({
      kind: "deny" as const,
      pattern,
      enforce: true,
      override: false,
      reason: `the repository keeps there what the rule ${JSON.stringify(hiding.pattern)} hides`,
      source: { layer: hiding.source.layer, ...(hiding.source.file ? { file: hiding.source.file } : {}) },
    }));
  }

  /** Rules from layers (any order), with path rules relative to `root`. */
  static fromLayers(layers: readonly PolicyLayer[], root: string): PolicyRules {
    return new PolicyRules(layers, root);
  }

  /** The same rules, with path rules relative to another workspace root (one per tenant). */
  withRoot(root: string): PolicyRules {
    const normal = path.posix.normalize(root).replace(/(?<=.)\/$/, "");
    return normal === this.root ? this : new PolicyRules(this.layers, normal);
  }

  /**
   * These rules for a copy of the workspace made at `root` (a scratch copy):
   * as {@linkcode PolicyRules.withRoot}, and an absolute glob that names a
   * place in this workspace (it starts with the workspace's path) names the
   * same place in the copy too, so what it denies or keeps read-only in the
   * workspace is denied or read-only in the copy as well.
   */
  forCopyAt(root: string): PolicyRules {
    const copy = path.posix.normalize(root).replace(/(?<=.)\/$/, "");
    const inCopy = (pattern: string): string | undefined =>
      pattern === this.root || pattern.startsWith(`${this.root}/`) ? copy + pattern.slice(this.root.length) : undefined;
    const withCopies = (rules: readonly PathRuleInput[] | undefined): PathRuleInput[] | undefined => {
      if (rules === undefined) return undefined;
      const copies = rules.flatMap((rule): PathRuleInput[] => {
        const moved = inCopy((typeof rule === "string" ? rule : rule.pattern).trim());
        if (moved === undefined) return [];
        return [typeof rule === "string" ? moved : { ...rule, pattern: moved }];
      });
      return [...rules, ...copies];
    };
    const layers = this.layers.map((layer): PolicyLayer => {
      const paths = layer.config.paths;
      if (paths === undefined) return layer;
      return {
        ...layer,
        config: {
          ...layer.config,
          paths: { ...paths, deny: withCopies(paths.deny), readOnly: withCopies(paths.readOnly) },
        },
      };
    });
    return new PolicyRules(layers, copy);
  }

  /**
   * These rules and a `cli` layer denying `files` (absolute paths, each taken
   * literally, or with `suffix`, a glob, after it: `.*` for rotations): a
   * server's own files (its tokens, its audit log), denied to every tool and
   * masked in every sandbox that would show them.
   */
  denyingFiles(files: readonly { path: string; suffix?: string }[]): PolicyRules {
    if (files.length === 0) return this;
    // Escaped, so that a name with a glob character names only itself.
    const deny = files.map((file) => literalGlob(path.posix.resolve(file.path)) + (file.suffix ?? ""));
    return new PolicyRules([...this.layers, { name: "cli", config: { paths: { deny } } }], this.root);
  }

  /** No rules at all. */
  static empty(root: string): PolicyRules {
    return new PolicyRules([], root);
  }

  /** Whether any command rule of `decision` exists (shadow ones included). */
  hasCommandRules(decision?: RuleDecision): boolean {
    return this.commandRules.some((rule) => decision === undefined || rule.decision === decision);
  }

  /** The command rules matching one simple command's words. */
  matchCommand(words: readonly string[]): RuleOutcome<CommandRule> {
    return outcome(this.commandRules.filter((rule) => commandPatternMatches(rule, words)));
  }

  /** The command rules (deny or ask) that a command starting with `known` and going on unknown could match. */
  mayMatchCommand(known: readonly string[]): CommandRule[] {
    return this.commandRules.filter((rule) => rule.decision !== "allow" && commandPatternMayMatch(rule, known));
  }

  /** The rule in force (and the shadow one) among matches gathered elsewhere. */
  static resolve(matches: CommandRule[]): RuleOutcome<CommandRule> {
    return outcome(matches);
  }

  /** Whether any path rule exists (shadow ones included). */
  get hasPathRules(): boolean {
    return this.pathRules.length > 0;
  }

  /** The deny globs in force, relative to the root, for the OS sandbox. */
  hiddenGlobs(): string[] {
    return this.pathRules.filter((rule) => rule.kind === "deny" && rule.enforce).map((rule) => rule.pattern);
  }

  /**
   * The read-only globs in force, as globs relative to the root that match
   * what {@linkcode PolicyRules.decidePath} keeps read-only in the workspace:
   * each pattern and everything below what it matches (a rule matches a path
   * or a folder above it), an absolute one by the part of it that lies past
   * the root. For the OS sandbox, which binds them read-only.
   */
  readOnlyGlobs(): string[] {
    const globs = new Set<string>();
    for (const rule of this.pathRules) {
      if (rule.kind !== "read-only" || !rule.enforce) continue;
      for (const glob of globsBelow(rule.pattern, this.root)) {
        globs.add(glob);
        globs.add(glob === "**" || glob.endsWith("/**") ? glob : `${glob}/**`);
      }
    }
    return [...globs];
  }

  #matcher(rule: PathRule): PathMatcher {
    let matcher = this.#matchers.get(rule);
    if (matcher === undefined) {
      // Letter case ignored: see pathGlobMatcher.
      matcher = pathGlobMatcher([rule.pattern]);
      this.#matchers.set(rule, matcher);
    }
    return matcher;
  }

  /**
   * The first enforced rule that may match a path inside one of the folders (absolute), case-insensitively: where a
   * command creates files whose names only the run knows, any of them may be one the rule keeps.
   */
  ruleWithin(folders: readonly string[]): PathRule | undefined {
    return this.pathRules.find((rule) =>
      rule.enforce && folders.some((folder) =>
        globMayMatchWithin(
          (rule.pattern.startsWith("/") ? rule.pattern : path.posix.join(this.root, rule.pattern)).toLowerCase(),
          folder.toLowerCase(),
        )
      )
    );
  }

  /**
   * What the path rules decide for a path (absolute, or relative to the
   * root): a rule matches the path or any folder above it, by the path
   * relative to the root (relative globs) or the absolute path (absolute
   * globs), case-insensitively. The path is taken as given: pass the real
   * path, and the path as named, to judge both.
   */
  decidePath(given: string): PathOutcome {
    if (this.pathRules.length === 0) return { decision: "allow", matches: [] };
    const absolute = path.posix.resolve(this.root, given);
    const inside = absolute === this.root || absolute.startsWith(`${this.root}/`);
    const relative = inside ? absolute.slice(this.root.length + 1) : undefined;
    const candidates = (full: string) => {
      const parts = full.split("/").filter(Boolean);
      return parts.map((_, i) => parts.slice(0, i + 1).join("/"));
    };
    const relatives = relative === undefined || relative === "" ? [] : candidates(relative);
    const absolutes = candidates(absolute).map((p) => `/${p}`);
    const matches = this.pathRules.filter((rule) => {
      const matcher = this.#matcher(rule);
      return rule.pattern.startsWith("/") ? absolutes.some(matcher) : relatives.some(matcher);
    });
    const store = this.#storeRules.find((rule) => relatives.some(this.#matcher(rule)));
    if (store !== undefined) matches.push(store);
    const result = outcome(matches);
    return { ...result, decision: result.rule?.kind ?? "allow" };
  }
}
