/**
 * The seccomp filter every sandboxed command and checker runs under: fallocate(2) fails with EOPNOTSUPP. It reserves
 * disk blocks without writing them, 5 GiB in 13 ms here, so a loop of `fallocate -l 10M` filled a 488 MiB workspace
 * file system to its last block between two readings of the disk watch (see `watchDiskSpace`); refused, programs fall
 * back to writing (glibc's posix_fallocate does), at the disk's speed, which the watch's 200 ms readings follow.
 * Everything else is allowed: the sandbox's walls are its namespaces and mounts, not a syscall list.
 *
 * @module
 */

import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

// struct sock_filter: u16 code, u8 jt, u8 jf, u32 k (the host's byte order; seccomp runs where it is built).
type Instruction = [code: number, jt: number, jf: number, k: number];

const LD_ABS_W = 0x20; // BPF_LD | BPF_W | BPF_ABS
const JEQ_K = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const RET_K = 0x06; // BPF_RET | BPF_K
const ALLOW = 0x7fff0000; // SECCOMP_RET_ALLOW
const EOPNOTSUPP = 95;
const DENY = 0x00050000 | EOPNOTSUPP; // SECCOMP_RET_ERRNO
const NR = 0; // offsetof(struct seccomp_data, nr)
const ARCH = 4; // offsetof(struct seccomp_data, arch)

// fallocate's number on each architecture a process of this machine may call it in: x86-64 (and its x32 ABI, the
// number with bit 30 set), i386 (a 32-bit program on x86-64), aarch64. Another architecture is let through.
const PROGRAM: Instruction[] = [
  [LD_ABS_W, 0, 0, ARCH], // 0
  [JEQ_K, 3, 0, 0xc000003e], // 1: AUDIT_ARCH_X86_64 -> 5
  [JEQ_K, 6, 0, 0x40000003], // 2: AUDIT_ARCH_I386 -> 9
  [JEQ_K, 8, 0, 0xc00000b7], // 3: AUDIT_ARCH_AARCH64 -> 12
  [RET_K, 0, 0, ALLOW], // 4
  [LD_ABS_W, 0, 0, NR], // 5
  [JEQ_K, 8, 0, 285], // 6: x86-64 fallocate -> 15
  [JEQ_K, 7, 0, 0x40000000 | 285], // 7: x32 fallocate -> 15
  [RET_K, 0, 0, ALLOW], // 8
  [LD_ABS_W, 0, 0, NR], // 9
  [JEQ_K, 4, 0, 324], // 10: i386 fallocate -> 15
  [RET_K, 0, 0, ALLOW], // 11
  [LD_ABS_W, 0, 0, NR], // 12
  [JEQ_K, 1, 0, 47], // 13: aarch64 fallocate -> 15
  [RET_K, 0, 0, ALLOW], // 14
  [RET_K, 0, 0, DENY], // 15
];

/** The filter as bubblewrap's `--seccomp` reads it: the compiled cBPF program, instruction after instruction. */
export function seccompProgram(): Uint8Array {
  const bytes = new Uint8Array(PROGRAM.length * 8);
  const view = new DataView(bytes.buffer);
  const little = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
  PROGRAM.forEach(([code, jt, jf, k], i) => {
    view.setUint16(i * 8, code, little);
    view.setUint8(i * 8 + 2, jt);
    view.setUint8(i * 8 + 3, jf);
    view.setUint32(i * 8 + 4, k, little);
  });
  return bytes;
}

let programFile: string | undefined;

// The program in a file of this process's own (a fresh private folder of the system temp folder, never one a command
// can write), made once and again if a temp cleaner removed it; undefined where it cannot be made.
function programPath(): string | undefined {
  if (programFile !== undefined && fs.existsSync(programFile)) return programFile;
  try {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolfence-seccomp-"));
    const file = path.join(dir, "deny-fallocate.bpf");
    fs.writeFileSync(file, seccompProgram(), { mode: 0o400, flag: "wx" });
    return programFile = file;
  } catch {
    return undefined;
  }
}

const support = new Map<string, Promise<boolean>>();

/** Whether `bwrap` loads the filter here (a kernel with seccomp, a bubblewrap that takes it); probed once per bwrap. */
export function seccompSupported(bwrap: string): Promise<boolean> {
  let known = support.get(bwrap);
  if (known === undefined) {
    known = new Promise<boolean>((resolve) => {
      const fd = openSeccompProgram();
      if (fd === undefined) return resolve(false);
      const done = (ok: boolean) => {
        fs.closeSync(fd);
        resolve(ok);
      };
      try {
        const child = spawn(bwrap, ["--ro-bind", "/", "/", "--unshare-all", "--seccomp", "3", "--", "true"], {
          stdio: ["ignore", "ignore", "ignore", fd],
          timeout: 5_000,
        });
        child.once("error", () => done(false));
        child.once("close", (code) => done(code === 0));
      } catch {
        done(false);
      }
    });
    support.set(bwrap, known);
  }
  return known;
}

/** A descriptor of the filter to hand bubblewrap (`--seccomp N`), or undefined; the caller closes it. */
export function openSeccompProgram(): number | undefined {
  const file = programPath();
  if (file === undefined) return undefined;
  try {
    return fs.openSync(file, "r");
  } catch {
    programFile = undefined;
    return undefined;
  }
}
