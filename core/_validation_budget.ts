// Validation bounded in work. A recursive union (a valibot `v.lazy` tree whose node is a union of object shapes, a JSON
// Schema whose `anyOf` refers back to itself) re-validates the same subtree of the arguments under each member, at
// every level: 2^depth runs, so an 18-level value stalled a call for seconds and a 40-level one would never end. Two
// defences, both per validation:
// - valibot: each union, variant, intersect and lazy node remembers its outcome per (config, value object), so a
//   subtree is judged once per schema node whatever the members above it (`instrumentValibot`);
// - every validator (valibot's run, the unknown-key walk, Ajv) spends from one work budget that grows with the size
//   of the arguments; past it the validation fails closed (`ArgumentsTooComplex`), naming the limit and the path.

/** Work allowed whatever the size of the arguments: far above what any sane schema spends on a small value. */
export const BASE_WORK = 50_000;
/** Work allowed per value in the arguments (objects, arrays and scalars alike). */
export const WORK_PER_VALUE = 32;

/**
 * The deepest nesting validated: objects and arrays inside the arguments object (which is level 0). Deeper values
 * are refused before any validator runs (valibot, the unknown-key walk and the guarded-key walk recurse per level).
 */
export const MAX_ARGUMENT_DEPTH = 64;

/** Thrown from inside a validator when its budget is spent; caught by the validation that set the budget. */
export class ArgumentsTooComplex extends Error {
  constructor(
    readonly limit: number,
    readonly at: unknown,
    readonly path: string | undefined,
    readonly reason: "work" | "depth" = "work",
  ) {
    super(reason === "work" ? `validation work over ${limit}` : `arguments nested over ${limit} levels`);
  }
}

/** The work one validation may spend, and what it has spent. */
export interface WorkBudget {
  work: number;
  readonly limit: number;
  /** valibot nodes' outcomes: config → node → value object → outcome. */
  readonly memo: Map<object, Map<object, WeakMap<object, Snapshot>>>;
}

let active: WorkBudget | undefined;

/**
 * The number of values in `args` (each object, array and scalar counts one); throws {@linkcode ArgumentsTooComplex}
 * for an object or array nested deeper than {@linkcode MAX_ARGUMENT_DEPTH}.
 */
function countValues(args: unknown): number {
  let count = 0;
  const stack: [unknown, number][] = [[args, 0]];
  while (stack.length > 0) {
    const [next, depth] = stack.pop()!;
    count++;
    if (typeof next !== "object" || next === null) continue;
    if (depth > MAX_ARGUMENT_DEPTH) throw new ArgumentsTooComplex(MAX_ARGUMENT_DEPTH, next, undefined, "depth");
    for (const key in next) {
      if (Object.hasOwn(next, key)) stack.push([(next as Record<string, unknown>)[key], depth + 1]);
    }
  }
  return count;
}

/**
 * The budget for validating `args`: {@linkcode BASE_WORK} plus {@linkcode WORK_PER_VALUE} per value in them. Throws
 * {@linkcode ArgumentsTooComplex} when they are nested deeper than {@linkcode MAX_ARGUMENT_DEPTH}.
 */
export function budgetFor(args: unknown): WorkBudget {
  return { work: 0, limit: BASE_WORK + WORK_PER_VALUE * countValues(args), memo: new Map() };
}

/** Whether `error` is the engine's stack overflow: a validator recursed too deep (a backstop to the depth limit). */
export function isStackOverflow(error: unknown): boolean {
  return error instanceof RangeError && /call stack/i.test(error.message);
}

/** Spends `amount` units of the active budget; throws {@linkcode ArgumentsTooComplex} past its limit. */
export function spend(at?: unknown, path?: string, amount = 1): void {
  if (active !== undefined && (active.work += amount) > active.limit) {
    throw new ArgumentsTooComplex(active.limit, at, path);
  }
}

/** Runs `fn` under `budget` (nested calls keep the outer budget's accounting separate and restore it). */
export function withBudget<T>(budget: WorkBudget, fn: () => T): T {
  const outer = active;
  active = budget;
  try {
    return fn();
  } finally {
    active = outer;
  }
}

/** The dotted path of `target` (by identity) inside `root`, for the refusal's message; undefined when not found. */
export function pathOf(root: unknown, target: unknown): string | undefined {
  if (typeof target !== "object" || target === null) return undefined;
  const stack: [unknown, string][] = [[root, ""]];
  let visited = 0;
  while (stack.length > 0 && visited++ < 1_000_000) {
    const [node, path] = stack.pop()!;
    if (node === target) return path;
    if (typeof node !== "object" || node === null) continue;
    for (const key in node) {
      if (!Object.hasOwn(node, key)) continue;
      const child = (node as Record<string, unknown>)[key];
      if (typeof child !== "object" || child === null) continue;
      stack.push([child, Array.isArray(node) ? `${path}[${key}]` : path === "" ? key : `${path}.${key}`]);
    }
  }
  return undefined;
}

// ---------------------------------------------------------------- valibot

interface Dataset {
  typed?: boolean;
  value: unknown;
  issues?: Issue[];
}

interface Issue {
  path?: unknown[];
  [key: string]: unknown;
}

interface Snapshot {
  typed: boolean | undefined;
  value: unknown;
  issues: Issue[] | undefined;
}

// deno-lint-ignore no-explicit-any
type Node = Record<string, any>;
type Run = (this: Node, dataset: Dataset, config: object) => Dataset;

// Callers own the issues a run returns: an object schema puts its key in front of each issue's path in place. Each
// copy spends from the budget: an intersect reports its members' issues together, so a recursive one reports the same
// issue 2^depth times, which no memo shortens.
function copyIssues(issues: Issue[] | undefined, at: unknown): Issue[] | undefined {
  if (issues === undefined) return undefined;
  spend(at, undefined, issues.length);
  return issues.map((issue) => ({ ...issue, path: issue.path?.slice() }));
}

const MEMOISED = new Set(["union", "variant", "intersect", "lazy"]);
const instrumented = new WeakSet<object>();
// The schemas a lazy getter returned that were walked (a getter may make a new schema on each call).
const walked = new WeakSet<object>();

function isSchemaNode(value: unknown): value is Node {
  return typeof value === "object" && value !== null && (value as Node).kind === "schema" &&
    typeof (value as Node)["~run"] === "function";
}

/**
 * Makes every union, variant, intersect and lazy node under `schema` (those behind a `v.lazy` as its getter returns
 * them) spend from the active budget and remember its outcome per value object while a budget is active. Outside a
 * budget each node runs as valibot wrote it. Each node is changed once. Returns whether `schema` has such a node.
 */
export function instrumentValibot(schema: unknown): boolean {
  let found = false;
  const seen = new Set<object>();
  const stack: unknown[] = [schema];
  while (stack.length > 0) {
    const node = stack.pop();
    if (!isSchemaNode(node) || seen.has(node)) continue;
    seen.add(node);
    spend(); // a getter that makes a new schema on each call is walked each time
    if (MEMOISED.has(node.type) && node.async !== true) {
      found = true;
      // Nodes met before (shared with another schema, or behind a lazy already run) are not wrapped twice; async
      // nodes (whose run gives a promise) are left as they are.
      if (!instrumented.has(node)) {
        instrumented.add(node);
        wrapRun(node);
        if (node.type === "lazy" && typeof node.getter === "function") wrapGetter(node);
      }
    }
    for (const [key, field] of Object.entries(node)) {
      if (key === "~standard" || key === "reference" || key === "~run" || key === "getter") continue;
      if (Array.isArray(field)) {
        for (const item of field) if (isSchemaNode(item)) stack.push(item);
      } else if (isSchemaNode(field)) {
        stack.push(field);
      } else if (key === "entries" && typeof field === "object" && field !== null) {
        for (const entry of Object.values(field)) if (isSchemaNode(entry)) stack.push(entry);
      }
    }
  }
  return found;
}

// The getter each wrapped getter stands for.
const originalGetters = new WeakMap<object, object>();

/**
 * What a schema node's outcome is remembered under: a lazy node is all its getter (the one its author wrote), so the
 * lazy nodes of a schema the getter makes anew on each call (a recursive function that builds the union) share it.
 */
export function memoKey(node: object): object {
  const getter = (node as Node).type === "lazy" ? (node as Node).getter : undefined;
  return typeof getter === "function" ? originalGetters.get(getter) ?? getter : node;
}

function wrapGetter(node: Node): void {
  const getter = node.getter as (input: unknown) => unknown;
  try {
    const wrapped = function (this: unknown, input: unknown) {
      const inner = getter.call(this, input);
      if (typeof inner === "object" && inner !== null && !walked.has(inner)) {
        instrumentValibot(inner);
        walked.add(inner);
      }
      return inner;
    };
    originalGetters.set(wrapped, getter);
    node.getter = wrapped;
  } catch {
    // A frozen schema keeps its getter: the budget still bounds what runs beneath it.
  }
}

function wrapRun(node: Node): void {
  const run = node["~run"] as Run;
  const key = memoKey(node);
  const memoised: Run = function (this: Node, dataset, config) {
    const budget = active;
    if (budget === undefined) return run.call(this, dataset, config);
    const value = dataset.value;
    spend(value);
    if (typeof value !== "object" || value === null || dataset.issues !== undefined) {
      return run.call(this, dataset, config);
    }
    let byNode = budget.memo.get(config);
    if (byNode === undefined) budget.memo.set(config, byNode = new Map());
    let byValue = byNode.get(key);
    if (byValue === undefined) byNode.set(key, byValue = new WeakMap());
    const known = byValue.get(value);
    if (known !== undefined) {
      dataset.typed = known.typed;
      dataset.value = known.value;
      dataset.issues = copyIssues(known.issues, value);
      return dataset;
    }
    const out = run.call(this, dataset, config);
    byValue.set(value, { typed: out.typed, value: out.value, issues: copyIssues(out.issues, value) });
    return out;
  };
  try {
    node["~run"] = memoised;
  } catch {
    // A frozen schema runs unmemoised; the budget still bounds it through the nodes around it.
  }
}
