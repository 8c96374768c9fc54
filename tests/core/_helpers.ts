// Shared fixtures for the core tests: a real temporary workspace per session.

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Session, type SessionOptions } from "../../policy/session.ts";

/** Runs `fn` with a session over a fresh temporary workspace, then cleans up. */
export async function withSession<T>(
  fn: (session: Session, dir: string) => Promise<T>,
  options: Omit<SessionOptions, "workspace"> = {},
): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), "toolfence-test-"));
  const session = new Session({ workspace: dir, ...options });
  try {
    return await fn(session, dir);
  } finally {
    await session.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** Resolves after `ms` milliseconds, or rejects when the signal aborts. */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(signal.reason);
    }, { once: true });
  });
}
