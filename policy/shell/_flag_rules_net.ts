/**
 * Flag rules for the network readers, `curl` and `wget`: they join the
 * allowlist only where the session's commands run sandboxed behind the egress
 * proxy (the command context carries the policy's network lists), and only
 * when they read: every URL `http(s)://` to a host `network.allow` names (and
 * `network.deny` does not), no upload or request body (`-d`, `-F`, `-T`,
 * `--json`, `--post-data`, ...), no method (`-X`), no config file (`-K`,
 * `-e`, `--config`), no proxy or socket of their own (`-x`, `--noproxy`,
 * `--unix-socket`), no URL glob, and output files only inside the workspace.
 * Options not listed here ask: the grammar is an allowlist. The proxy still
 * judges every connection (a redirect to another host included).
 *
 * @module
 */
import type { BashWord } from "./_tree.ts";
import {
  type FlagContext,
  flags,
  insideWorkspace,
  type OptionGrammar,
  readOptions,
  type ValueCheck,
  valued,
} from "./_options.ts";
import type { Rule } from "./_flag_rules_runners.ts";
import { allowedByName } from "../egress/judge.ts";

/** The commands that join the allowlist where commands have the egress proxy. */
export const NETWORK_READERS: readonly string[] = Object.freeze(["curl", "wget"]);

// Curl expands `{a,b}` and `[1-9]` into several URLs (several hosts); a bracketed IPv6 host is the one exception.
const GLOB = /[{}]|\[(?![0-9a-f:.]+\])/i;

const allowedUrl: ValueCheck = (_word, value, context) => {
  const network = context.network;
  if (network === undefined) return "is a network address, and commands have no network here";
  if (!/^https?:\/\//i.test(value)) return "is not an http:// or https:// URL (a bare host or another scheme asks)";
  const afterScheme = value.replace(/^https?:\/\//i, "");
  if (GLOB.test(afterScheme.replace(/^\[[0-9a-f:.]+\]/i, ""))) return "is a URL glob, which may name several hosts";
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "is not a URL";
  }
  if (url.username || url.password) return "carries credentials";
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  return allowedByName(network, url.protocol, url.hostname, port)
    ? undefined
    : `names ${url.host}, which the policy's network.allow does not name`;
};

// `-` is standard output; anything else is a file the command writes, which must lie in the workspace.
const outputFile: ValueCheck = (word, value, context) => {
  if (value === "-") return undefined;
  const problem = insideWorkspace(word, value, context);
  if (problem === undefined) context.pathOperands?.push({ value, access: "write", origin: "an output file" });
  return problem;
};

// The folder downloads are saved in (`curl --output-dir`, `wget -P`), under names only the run knows.
const outputFolder: ValueCheck = (word, value, context) => {
  const problem = insideWorkspace(word, value, context);
  if (problem === undefined) {
    context.pathOperands?.push({ value, access: "write", origin: "an output folder", below: true });
  }
  return problem;
};

// curl's `-w` can write to a file of its own choosing (`%output{file}`), and `-w @file` reads its format from a file.
const writeOut: ValueCheck = (_word, value) =>
  /%output\{/i.test(value) ? "writes to a file (`%output{...}`)" : value.startsWith("@") ? "reads a file" : undefined;

// `-H @file` sends a file's lines as headers: an upload.
const header: ValueCheck = (_word, value) => value.startsWith("@") ? "sends a file's content as headers" : undefined;

const CURL: OptionGrammar = {
  program: "curl",
  short: {
    ...flags("s S f L I i v k g 4 6 q # O J Z"),
    ...valued("A e m r C Y y"),
    H: { value: "required", check: header },
    o: { value: "required", check: outputFile },
    w: { value: "required", check: writeOut },
  },
  long: {
    ...flags(
      "silent show-error fail fail-with-body fail-early location head include verbose insecure globoff compressed " +
        "no-progress-meter progress-bar http1.0 http1.1 http2 http2-prior-knowledge remote-name remote-name-all " +
        "remote-header-name create-dirs ipv4 ipv6 no-buffer no-keepalive no-sessionid tcp-nodelay parallel " +
        "ssl-reqd tlsv1.2 tlsv1.3 raw styled-output no-styled-output retry-all-errors retry-connrefused",
    ),
    ...valued(
      "user-agent referer max-time connect-timeout retry retry-delay retry-max-time range limit-rate " +
        "max-filesize max-redirs continue-at speed-limit speed-time parallel-max expect100-timeout",
    ),
    header: { value: "required", check: header },
    output: { value: "required", check: outputFile },
    "output-dir": { value: "required", check: outputFolder },
    "write-out": { value: "required", check: writeOut },
    url: { value: "required", check: allowedUrl },
  },
  operand: allowedUrl,
};

const WGET: OptionGrammar = {
  program: "wget",
  short: {
    ...flags("q v S c N 4 6"),
    ...valued("T t U w"),
    O: { value: "required", check: outputFile },
    P: { value: "required", check: outputFolder },
  },
  long: {
    ...flags(
      "quiet verbose no-verbose server-response continue timestamping spider no-check-certificate https-only " +
        "no-clobber inet4-only inet6-only content-disposition trust-server-names",
    ),
    ...valued("timeout connect-timeout read-timeout dns-timeout tries user-agent header max-redirect wait limit-rate"),
    "output-document": { value: "required", check: outputFile },
    "directory-prefix": { value: "required", check: outputFolder },
  },
  operand: allowedUrl,
};

function readerRule(grammar: OptionGrammar): Rule {
  return (args: readonly BashWord[], _name: string, context: FlagContext) => {
    if (context.network === undefined) {
      return `\`${grammar.program}\` reaches the network, and commands here have none (no egress proxy)`;
    }
    const reading = readOptions(args, grammar, context);
    if (reading.problem !== undefined) return reading.problem;
    if (reading.operands.length === 0 && !reading.seen.has("--url")) return `\`${grammar.program}\` names no URL`;
    recordRemoteNames(grammar.program, args, reading.operands, reading.seen, context);
    return undefined;
  };
}

/**
 * The files a download saves under a name the URL gives: `wget URL` (without `-O`) and `curl -O URL`
 * (`--remote-name`, `--remote-name-all`) write the URL's last name in the folder of `-P` or `--output-dir`, or the
 * one they run in (`wget https://h/.npmrc` writes `.npmrc`); the server names it with `curl -J` or
 * `wget --content-disposition`, `--trust-server-names`: a name only the run knows.
 */
function recordRemoteNames(
  program: string,
  args: readonly BashWord[],
  urls: readonly BashWord[],
  seen: ReadonlySet<string>,
  context: FlagContext,
): void {
  const saves = program === "wget"
    ? !seen.has("-O") && !seen.has("--output-document") && !seen.has("--spider")
    : ["-O", "--remote-name", "--remote-name-all"].some((option) => seen.has(option));
  if (!saves) return;
  const folder = valueOf(args, program === "wget" ? ["-P", "--directory-prefix"] : ["--output-dir"]) ?? ".";
  const serverNamed = ["-J", "--remote-header-name", "--content-disposition", "--trust-server-names"]
    .some((option) => seen.has(option));
  for (const url of urls) {
    const name = serverNamed || url.value === undefined ? undefined : remoteName(url.value);
    context.pathOperands?.push({
      value: name === undefined ? undefined : `${folder.replace(/\/+$/, "")}/${name}`,
      access: "write",
      origin: "a file the download is saved to",
    });
  }
}

/** The last value given to one of `options` (`-P D`, `-PD`, `--opt D`, `--opt=D`). */
function valueOf(args: readonly BashWord[], options: readonly string[]): string | undefined {
  let found: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const value = args[i].value;
    if (value === undefined) continue;
    if (value === "--") break;
    for (const option of options) {
      if (value === option) found = args[i + 1]?.value;
      else if (option.startsWith("--") && value.startsWith(`${option}=`)) found = value.slice(option.length + 1);
      else if (!option.startsWith("--") && value.startsWith(option)) found = value.slice(option.length);
    }
  }
  return found;
}

/** The name a URL's file is saved under: its last path name (wget's `index.html` for none), decoded. */
function remoteName(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  const last = url.pathname.split("/").at(-1) ?? "";
  let name: string;
  try {
    name = decodeURIComponent(last);
  } catch {
    return undefined;
  }
  // An empty name (`https://h/`) is `index.html` for wget, and an error or a default for curl; a name with a slash
  // or `..` once decoded is not followed.
  if (name === "") return "index.html";
  return name.includes("/") || name === "." || name === ".." ? undefined : name;
}

/** The rules of {@linkcode NETWORK_READERS}, by program name. */
export const NET_RULES: ReadonlyMap<string, Rule> = new Map([
  ["curl", readerRule(CURL)],
  ["wget", readerRule(WGET)],
]);
