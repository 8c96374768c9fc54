/**
 * The seccomp filter every sandboxed command and checker runs under: fallocate(2) fails with EOPNOTSUPP (and
 * io_uring_setup(2) with ENOSYS, whose rings could reserve the same way unseen; io_setup(2) too, see below). fallocate reserves
 * disk blocks without writing them, 5 GiB in 13 ms here, so a loop of `fallocate -l 10M` filled a 488 MiB workspace
 * file system to its last block between two readings of the disk watch (see `watchDiskSpace`); refused, programs fall
 * back to writing (glibc's posix_fallocate does), at the disk's speed, which the watch's 200 ms readings follow.
 * io_setup(2) reserves events of the machine's one AIO budget (`fs.aio-max-nr`, 65536), counted for no user, namespace
 * or cgroup: before, one `io_setup(65536)` in a command (2 MiB of memory) took all of it, and while the command ran
 * every other program of the machine (a database's native AIO, qemu, fio) failed its own with EAGAIN. Refused with
 * ENOSYS, as on a kernel without AIO, libaio's users fall back to plain reads and writes (InnoDB's simulated AIO),
 * and glibc's POSIX AIO (`aio_read`) never calls it.
 * add_key(2), request_key(2) and keyctl(2) fail with ENOSYS, as on a kernel without keys: keys are charged to the
 * user of the machine's namespace (`kernel.keys.root_maxkeys`, 1,000,000 keys and 25 MB for root, `maxkeys` 200 for
 * another), no namespace of the sandbox's nor cgroup bounding them, and a user keyring's keys outlive the command:
 * before, a command's add_key to `@u` in a loop took root's quota, 3,000 keys of 1000 bytes each staying counted after
 * the command and its session ended, and every other program of the user (Kerberos' keyring caches, the NFS idmapper,
 * systemd's credentials) would fail add_key with EDQUOT. Docker's default profile refuses them for the same reason.
 * A file's set-user-ID and set-group-ID bits are refused (EPERM) wherever a mode is given: chmod(2), fchmod(2),
 * fchmodat(2) and fchmodat2, open(2), openat(2) and creat(2) that create, mknod(2) and mknodat(2); openat2(2), whose
 * mode lies in a structure a filter cannot read, fails with ENOSYS (glibc falls back to openat). The workspace is the
 * host's: a command's files are the server's user's outside the sandbox, and before, `chmod 4755 a.sh` (or an
 * `install -m 4755`, a `tar x` of such an entry) left a set-user-ID file of that user there, which any local user of
 * the machine could run as the server's user (root, for a server run as root), while the sandbox's own `nosuid`
 * mounts hid it from the command itself.
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
const JSET_K = 0x45; // BPF_JMP | BPF_JSET | BPF_K
const RET_K = 0x06; // BPF_RET | BPF_K
const ALLOW = 0x7fff0000; // SECCOMP_RET_ALLOW
const EOPNOTSUPP = 95;
const DENY = 0x00050000 | EOPNOTSUPP; // SECCOMP_RET_ERRNO
const NR = 0; // offsetof(struct seccomp_data, nr)
const ARCH = 4; // offsetof(struct seccomp_data, arch)

const ENOSYS = 38;
const NO_RING = 0x00050000 | ENOSYS;
const EPERM = 1;
const NO_SET_ID = 0x00050000 | EPERM;
// S_ISUID | S_ISGID.
const SET_ID_BITS = 0o6000;
// offsetof(struct seccomp_data, args[i]): the low 32 bits of the argument on a little-endian machine (x86 and aarch64,
// the architectures below), which hold every mode bit.
const arg = (i: number) => 16 + 8 * i;

// The x32 ABI's numbers: x86-64's with bit 30 set.
const X32 = 0x40000000;
// add_key, request_key and keyctl: three numbers in a row on each architecture.
function keyCalls(addKey: number, abi = 0): number[] {
  return [addKey, addKey + 1, addKey + 2].map((nr) => abi | nr);
}

// The numbers of fallocate, and of io_uring_setup, io_setup and the key calls, on each architecture a process of this
// machine may call them in: x86-64 (and its x32 ABI, the number with bit 30 set; x32's io_setup is 543), i386 (a 32-bit program on
// x86-64), aarch64. Another architecture is let through. io_uring_setup and io_setup fail with ENOSYS, as on a kernel
// without them (their users fall back to plain calls): a ring's IORING_OP_FALLOCATE reserves the same blocks with no
// system call a filter sees, and io_setup takes from the machine's one AIO budget; add_key, request_key and keyctl
// likewise (x86-64 248-250, i386 286-288, aarch64 217-219), as on a kernel without keys.
// The calls that give a file's mode, by the argument that holds it (0: none of them), and openat2 (437 on each),
// which is absent as the rings are: x86-64 open 2, creat 85, chmod 90, fchmod 91, mknod 133, openat 257, mknodat 259,
// fchmodat 268, fchmodat2 452; i386 open 5, creat 8, mknod 14, chmod 15, fchmod 94, openat 295, mknodat 297, fchmodat
// 306, fchmodat2 452; aarch64 (which has only the *at calls) mknodat 33, fchmod 52, fchmodat 53, openat 56, fchmodat2
// 452.
type ModeCalls = [mode: 1 | 2 | 3, numbers: number[]][];
const X86_64_MODES: ModeCalls = [[1, [85, 90, 91, 133]], [2, [2, 259, 268, 452]], [3, [257]]];
const withX32 = (calls: ModeCalls): ModeCalls =>
  calls.map(([mode, numbers]) => [mode, [...numbers, ...numbers.map((nr) => X32 | nr)]]);
const ARCHES: { arch: number; fallocate: number[]; absent: number[]; modes: ModeCalls }[] = [
  // AUDIT_ARCH_X86_64
  {
    arch: 0xc000003e,
    fallocate: [285, 0x40000000 | 285],
    absent: [
      425,
      0x40000000 | 425,
      206,
      0x40000000 | 206,
      0x40000000 | 543,
      ...keyCalls(248),
      ...keyCalls(248, X32),
      437,
      X32 | 437,
    ],
    modes: withX32(X86_64_MODES),
  },
  // AUDIT_ARCH_I386
  {
    arch: 0x40000003,
    fallocate: [324],
    absent: [425, 245, ...keyCalls(286), 437],
    modes: [[1, [8, 14, 15, 94]], [2, [5, 297, 306, 452]], [3, [295]]],
  },
  // AUDIT_ARCH_AARCH64
  {
    arch: 0xc00000b7,
    fallocate: [47],
    absent: [425, 0, ...keyCalls(217), 437],
    modes: [[1, [52]], [2, [33, 53, 452]], [3, [56]]],
  },
];

// The program: the architecture picks a block, each block compares the number and refuses or allows, or jumps to
// the check of the mode argument. Jumps are relative to the next instruction, so each block's compares jump over the
// rest of it to the returns and the mode checks at the end (cBPF jumps reach 255 instructions: the program is far
// shorter).
function assemble(): Instruction[] {
  const modeCount = (modes: ModeCalls) => modes.reduce((n, [, numbers]) => n + numbers.length, 0);
  const blockLength = (a: (typeof ARCHES)[number]) => 1 + a.fallocate.length + a.absent.length + modeCount(a.modes) + 1;
  const dispatch = 1 + ARCHES.length + 1; // load arch, one compare per arch, allow
  const starts: number[] = [];
  let at = dispatch;
  for (const a of ARCHES) {
    starts.push(at);
    at += blockLength(a);
  }
  // The mode checks, one per argument (load its low word; a set-ID bit in it refuses, else allow), then the returns:
  // after every block, as cBPF jumps only forward.
  const checkAt = (mode: number) => at + (mode - 1) * 2;
  const deny = at + 6; // RET EOPNOTSUPP
  const noRing = at + 7; // RET ENOSYS
  const noSetId = at + 8; // RET EPERM
  const allow = at + 9; // RET ALLOW
  const program: Instruction[] = [[LD_ABS_W, 0, 0, ARCH]];
  ARCHES.forEach(({ arch }, i) => program.push([JEQ_K, starts[i] - (program.length + 1), 0, arch]));
  program.push([RET_K, 0, 0, ALLOW]);
  ARCHES.forEach(({ fallocate, absent, modes }) => {
    program.push([LD_ABS_W, 0, 0, NR]);
    for (const nr of fallocate) program.push([JEQ_K, deny - (program.length + 1), 0, nr]);
    for (const nr of absent) program.push([JEQ_K, noRing - (program.length + 1), 0, nr]);
    for (const [mode, numbers] of modes) {
      for (const nr of numbers) program.push([JEQ_K, checkAt(mode) - (program.length + 1), 0, nr]);
    }
    program.push([RET_K, 0, 0, ALLOW]);
  });
  for (const mode of [1, 2, 3]) {
    program.push([LD_ABS_W, 0, 0, arg(mode)]);
    // Set: to the EPERM return; clear: to the allow.
    program.push([JSET_K, noSetId - (program.length + 1), allow - (program.length + 1), SET_ID_BITS]);
  }
  program.push([RET_K, 0, 0, DENY], [RET_K, 0, 0, NO_RING], [RET_K, 0, 0, NO_SET_ID], [RET_K, 0, 0, ALLOW]);
  return program;
}

const PROGRAM = assemble();

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
// can write), made once (and again by openSeccompProgram if a temp cleaner removed it); undefined where it cannot be
// made.
function newProgramFile(): string | undefined {
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
  // The file made before, opened as it is (one system call per command); made anew when that fails.
  for (const file of [programFile, undefined]) {
    const opened = file ?? newProgramFile();
    if (opened === undefined) return undefined;
    try {
      return fs.openSync(opened, "r");
    } catch {
      programFile = undefined;
    }
  }
  return undefined;
}
