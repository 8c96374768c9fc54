// What the command tools need from the runtime (see ToolNeeds in core/tool.ts).

import type { ToolNeeds } from "@toolfence/core";
import { SPAWN_ENV } from "@toolfence/policy";
import { INHERITED_VARIABLES } from "@toolfence/policy";

/**
 * `bash` and `bash_background`: the shell; stopping its process group at a
 * timeout or cancel (under Deno that takes `--allow-run` for every program,
 * which gives nothing a shell does not already have); the workspace, where it
 * runs; the session temp dir, where its output goes.
 */
export const COMMAND_NEEDS: ToolNeeds = Object.freeze({
  run: ["bash"],
  signal: true,
  read: ["workspace", "temp"],
  write: ["workspace", "temp"],
  env: SPAWN_ENV,
});

/**
 * `bash_read`, `bash_wait`, `bash_list` and `bash_stop`: what `bash_background`
 * needs, so that they are listed exactly when it is (without it there is no
 * job to follow).
 */
export const JOB_NEEDS: ToolNeeds = COMMAND_NEEDS;

/**
 * Bubblewrap to sandbox the shell, the free space of the workspace's and temp dir's disk (a command that would fill
 * it is ended), this machine's network interfaces (the egress judge counts their addresses as this machine's and
 * their networks' other addresses as private: without the list, only the proxy's look at where a connection lands
 * tells), and the caller's variables the command inherits.
 */
export const COMMAND_OPTIONAL_NEEDS: ToolNeeds = Object.freeze({
  run: ["bwrap"],
  sys: ["statfs", "networkInterfaces"],
  env: INHERITED_VARIABLES,
});
