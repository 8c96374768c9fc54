// Finding the system Chromium. It is started through the policy's process
// door (`ctx.policy.processes.launcher`), in the sandbox's one read view.

import fs from "node:fs";
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
