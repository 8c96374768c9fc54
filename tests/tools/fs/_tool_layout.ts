// The shared setup of the fs tools' own tests (write_file, temp_dir, mkdir,
// delete, move, copy, list_dir, file_info): a fresh layout with every fs tool
// before each test, a host whose person answers every question the same way,
// and what was asked. `l` is reassigned before each test; importers see the
// current layout through the live binding.

import { afterEach, beforeEach } from "node:test";
import { createHash } from "node:crypto";
import path from "node:path";
import type { ChoiceRequest } from "../../../core/host.ts";
import { callbackHost, type denyAllHost } from "../../../policy/hosts.ts";
import { fsTools } from "../../../tools/fs/mod.ts";
import { type Layout, makeLayout } from "./_helpers.ts";

export let l: Layout;
export const asked: string[] = [];
export const at = (...parts: string[]): string => path.join(l.workdir, ...parts);
export const sha = (text: string): string => createHash("sha256").update(text).digest("hex");

// A host where a person answers `answer` to every write question.
export function person(answer: "grant" | "once" | "deny"): ReturnType<typeof callbackHost> {
  return callbackHost({
    choose: <T extends string>(request: ChoiceRequest<T>) => {
      asked.push(request.message);
      return answer as T;
    },
  });
}

/** Replaces the layout by one whose session asks `host`, without auto-confirm. */
export async function withHost(host: ReturnType<typeof person> | ReturnType<typeof denyAllHost>): Promise<void> {
  await l.cleanup();
  l = await makeLayout(fsTools(), { host, autoConfirm: false });
}

/** Registers, in the calling test file, a fresh layout before each test and its removal after. */
export function useToolLayout(): void {
  beforeEach(async () => {
    asked.length = 0;
    l = await makeLayout(fsTools());
  });
  afterEach(() => l.cleanup());
}
