// The parts a SessionBase gets when it is built without them: the core alone
// has no workspace policy, so every file, process and question refuses, with
// a message that names the way to get one. Fail closed, never open.

import { ToolError } from "./errors.ts";
import { OPEN_FENCE } from "./fence.ts";
import type { Host } from "./host.ts";
import type { CallPolicy, PathResolver } from "./services.ts";

const NO_POLICY =
  "This session has no workspace: it is a SessionBase of @toolfence/core alone, which gives no file, process or person access. Use Session from @toolfence/policy (new Session({ workspace })), or give SessionBase a workspace, a policy and a host.";

function noAccess(): ToolError {
  return new ToolError(NO_POLICY, { code: "permission_denied" });
}

function refuse(): Promise<never> {
  return Promise.reject(noAccess());
}

/**
 * Every operation of a door refuses alike, whatever its name (an operation
 * added later refuses too). It throws at once rather than return a rejected
 * promise, so that a synchronous question such as `isHidden` fails closed too.
 */
function refusingDoor<T extends object>(): T {
  const operation = (): never => {
    throw noAccess();
  };
  return new Proxy({}, { get: () => operation }) as T;
}

/** A host that answers no question. */
export const NOBODY: Host = Object.freeze({ choose: refuse, confirm: refuse });

/** A workspace with no folder: nothing resolves into it. */
export const NO_WORKSPACE: PathResolver = Object.freeze({
  workdir: "",
  tempParent: "",
  relative: (absPath: string) => absPath,
  tempDir: refuse,
  areaOf: () => undefined,
});

/** A policy whose doors refuse every file and process operation. */
export function noPolicy(): CallPolicy {
  return {
    fence: OPEN_FENCE,
    sandbox: "off",
    files: refusingDoor(),
    processes: refusingDoor(),
    resolveForRead: refuse,
    authorizeCommand: refuse,
  };
}
