// Finding the system Chromium and wrapping it in bubblewrap, so that the
// browser process sees the system's read-only files, its own profile folder
// and the workspace (read-only, for file: pages and uploads), and nothing else
// of the file system.

import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import process from "node:process";
import { ANY_TARGET, ToolError, type ToolNeeds } from "@toolfence/core";

/** Names of the Chromium builds looked for on PATH, in order. */
export const BROWSER_NAMES = ["chromium-headless-shell", "chromium", "chromium-browser", "google-chrome", "chrome"];

// By the mode bits, not access(2): Deno's accessSync needs --allow-sys=uid.
function isExecutable(file: string): boolean {
  try {
    const stat = fs.statSync(file);
    return stat.isFile() && (stat.mode & 0o111) !== 0;
  } catch {
    return false;
  }
}

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(":")) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/** The browser to run: the configured one, else the first of {@linkcode BROWSER_NAMES} on PATH. */
export function findBrowser(configured?: string): string {
  if (configured) {
    if (isExecutable(configured)) return configured;
    throw notFound(`The configured browser ${configured} is not an executable file`);
  }
  for (const name of BROWSER_NAMES) {
    const found = onPath(name);
    if (found) return found;
  }
  throw notFound(`No Chromium was found on PATH (looked for ${BROWSER_NAMES.join(", ")})`);
}

/**
 * What the tools that start or drive the browser need of the runtime: any
 * program (Chromium, bubblewrap), any host (the proxy connects to the
 * destinations it judged), the whole environment (playwright reads it), the
 * home folder's path, reads of the workspace, the temp folder and the browser's
 * executable, writes of the workspace and the temp folder. A browser that
 * cannot be found now is named when a call starts it.
 */
export function browserNeeds(configured?: string): ToolNeeds {
  let executable: string[] = [];
  try {
    executable = [findBrowser(configured)];
  } catch {
    // Not found (or not readable under the current flags): the first call says which.
  }
  return {
    run: [ANY_TARGET],
    read: ["workspace", "temp", ...executable],
    write: ["workspace", "temp"],
    sys: ["homedir"],
    env: [ANY_TARGET],
    net: [ANY_TARGET],
  };
}

function notFound(message: string): ToolError {
  return new ToolError(message, {
    code: "browser_not_found",
    recoverable: false,
    recoveryHint: "Tell the user to install Chromium (apt-get install chromium-headless-shell) or configure its path.",
  });
}

// The parts of /etc a browser reads: the loader cache, fonts, certificates, name service, time zone.
const ETC = [
  "ld.so.cache",
  "ld.so.conf",
  "ld.so.conf.d",
  "fonts",
  "ssl",
  "ca-certificates",
  "hosts",
  "resolv.conf",
  "nsswitch.conf",
  "localtime",
  "passwd",
  "group",
  "alternatives",
  "chromium",
  "chromium.d",
  "mime.types",
];

function quote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/**
 * Writes `dir/browser.sh`, which runs `browser` inside bubblewrap with the
 * given folders writable and the workspace read-only; returns its path.
 */
export async function writeSandboxWrapper(
  bwrap: string,
  browser: string,
  dir: string,
  readOnly: readonly string[],
): Promise<string> {
  const args = ["--die-with-parent", "--unshare-all", "--share-net", "--new-session"];
  // The empty /tmp comes first: the folders bound below may lie inside it.
  args.push("--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp");
  args.push("--ro-bind", "/usr", "/usr");
  // bwrap's --ro-bind-try judges existence itself, so that this needs no read permission for /etc or /bin.
  for (const top of ["/bin", "/sbin", "/lib", "/lib64", "/lib32"]) {
    let link: string | undefined;
    try {
      if (fs.lstatSync(top).isSymbolicLink()) link = fs.readlinkSync(top);
    } catch {
      // unknown: bound as it is, if it exists
    }
    if (link) args.push("--symlink", link, top);
    else args.push("--ro-bind-try", top, top);
  }
  for (const name of ETC) args.push("--ro-bind-try", path.join("/etc", name), path.join("/etc", name));
  let real = browser;
  try {
    real = fs.realpathSync(browser);
  } catch {
    // the path as given
  }
  const extra = [...new Set([path.dirname(real), path.dirname(browser)])].filter((d) => !d.startsWith("/usr/"));
  for (const folder of [...extra, ...readOnly]) args.push("--ro-bind", folder, folder);
  args.push("--bind", dir, dir);
  args.push("--setenv", "HOME", dir, "--setenv", "TMPDIR", dir);
  const script = `#!/bin/sh\nexec ${quote(bwrap)} ${args.map(quote).join(" ")} ${quote(browser)} "$@"\n`;
  const file = path.join(dir, "browser.sh");
  await fsp.writeFile(file, script, { mode: 0o700 });
  return file;
}
