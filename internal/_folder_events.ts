// A resident watch of one workspace's folders through inotify(7), for the change report (workspace_changes.ts): a
// small Perl program of ours (perl-base is part of every Debian and Ubuntu system; the egress relay is one too) adds
// a watch to every folder, follows folders made, moved and removed, and at each sync answers with every name an
// event named since the last one, or that events were lost (the kernel's queue overflowed) or that it can no longer
// watch (a watch it could not add: the limit of watches, a folder it may not read). Nothing else is needed to know
// what a sandboxed command changed: every change of an entry goes through a folder of the workspace by name, and
// raises an event there (see watchWorkspace's documentation for why none is missed, and how the rest is caught).
//
// Not `Deno.watchFs`: its channel holds 16 events and drops the rest without a word when the program does not read
// fast enough, it drops notify's errors (a watch that could not be added), and it drops the events of a name whose
// path does not resolve (a link to itself, a link out of the workspace). The program reads the kernel's queue
// itself, and an overflow there is reported, never silent.

import { type ChildProcess, spawn } from "node:child_process";
import process from "node:process";
import { hostProgramCandidates } from "./executable.ts";
import { queryRuntimePermission } from "./runtime_permissions.ts";

// inotify_init1, inotify_add_watch and inotify_rm_watch, by architecture (Perl's syscall() takes numbers).
const SYSCALLS: Readonly<Record<string, readonly [number, number, number]>> = {
  x64: [294, 254, 255],
  arm64: [26, 27, 28],
};

// How long the program may take to watch the whole tree, and to answer a sync, before it counts as broken.
const START_MS = 60_000;
const SYNC_MS = 10_000;

// $ARGV: the three syscall numbers, the most watches it may hold (never more than its part, the next argument: a
// fraction of a quarter of the user's, see below; 0: its part), that part, then the roots (real paths). A name is
// reported as "<root's index>:<relative path>". Protocol: it writes "R<its most>\0" once every folder is watched. Each
// "\n" read on stdin is a sync: it drains the kernel's queue (every event of a change made before the sync was asked
// for is in it) and writes "D<name>\0" per name evented since the last sync, "O\0" when events were lost, "B<why>\0"
// when it can no longer watch, then "E\0". Past 100,000 names between syncs it keeps none and says "O" (the caller
// scans instead). It ends when stdin ends, and at once (saying "B" first) when a watch cannot be added or it would hold
// more than its most: its exit gives every watch back. The kernel counts a user's watches across the machine
// (fs.inotify.max_user_watches), and this program runs as the server's user outside every sandbox's namespace, one
// watch per folder a command makes: before, a job that made folders and slept had it hold one for each for as long as
// the job ran (20,005 for 20,000 folders), with nothing past the machine's limit but the next sync to end it, while
// every other program of the user on the machine failed inotify_add_watch with ENOSPC. By default its most is its part
// of a quarter of the user's, the watches every watch of the process holds together (WATCH_SHARE in
// policy/_kernel_objects.ts is a session's sandboxes' share); past it the caller scans. Before, each watch had its own
// quarter, and four sessions with 48,000 folders each held all of root's 192,543. Masks: MODIFY ATTRIB CLOSE_WRITE
// MOVED_FROM MOVED_TO CREATE DELETE DELETE_SELF MOVE_SELF.
const FOLDER_EVENTS_PERL = String.raw`
use strict;
use Fcntl qw(O_RDONLY O_DIRECTORY O_NOFOLLOW);
my ($init1, $add, $rm, $most, $part, @roots) = @ARGV;
my $share = 0;
if (open(my $m, '<', '/proc/sys/fs/inotify/max_user_watches')) { $share = int(<$m> / 4 * $part) }
$most = $share if !$most || $most > $share;
# Fails closed: a part it cannot read is none.
if (!$most) { out("Bno part of the user's inotify watches\0E\0"); exit 0 }
binmode STDOUT;
sub out { my $s = shift; while (length $s) { my $n = syswrite(STDOUT, $s); exit 0 unless defined $n; substr($s, 0, $n) = '' } }
my $fd = syscall($init1 + 0, 04000 | 02000000);
if ($fd < 0) { out("Binotify_init1: $!\0E\0"); exit 0 }
open(my $ev, '<&=', $fd) or do { out("Bopen: $!\0E\0"); exit 0 };
my $MASK = 0x2 | 0x4 | 0x8 | 0x40 | 0x80 | 0x100 | 0x200 | 0x400 | 0x800;
my $FOLDER = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;
my (%dir, %wd, %dirty);
my ($overflow, $broken) = (0, '');
# A folder is opened one name at a time from its root, never through a link (a folder a command swaps for a link
# meanwhile fails to open, and its name's own event brings it back), and watched through its open descriptor: the
# watch is on the very folder that was listed, never on one a link leads to.
sub open_folder {
  my ($i, $rel) = @_;
  sysopen(my $h, $roots[$i], O_RDONLY | O_DIRECTORY) or return undef;
  for my $part (split m{/}, $rel) {
    chdir($h) or return undef;
    sysopen(my $c, $part, $FOLDER) or return undef;
    $h = $c;
  }
  return $h;
}
sub watch {
  my ($i, $rel) = @_;
  my $h = open_folder($i, $rel);
  watch_open($i, $rel, $h, 0) if defined $h;
}
sub watch_open {
  my ($i, $rel, $h, $depth) = @_;
  if ($depth > 400) { $broken ||= "folders nested deeper than 400 below $roots[$i]"; return }
  my $w = syscall($add + 0, $fd + 0, '/proc/self/fd/' . fileno($h), $MASK + 0);
  if ($w < 0) { out("Binotify_add_watch $roots[$i]/$rel: $!\0"); exit 0 }
  my $key = "$i:$rel";
  if ($most && !defined $dir{$w} && keys(%dir) >= $most) { out("Bmore than $most folders to watch\0"); exit 0 }
  my $old = $dir{$w};
  delete $wd{$old} if defined $old && $old ne $key;
  $dir{$w} = $key;
  $wd{$key} = $w;
  chdir($h) or return;
  opendir(my $dh, '.') or return;
  my @names = grep { $_ ne '.' && $_ ne '..' } readdir($dh);
  closedir($dh);
  for my $name (@names) {
    chdir($h) or return;
    sysopen(my $c, $name, $FOLDER) or next;
    watch_open($i, $rel eq '' ? $name : "$rel/$name", $c, $depth + 1);
  }
}
sub unwatch {
  my ($key) = @_;
  for my $k (keys %wd) {
    next unless $k eq $key || index($k, "$key/") == 0;
    my $w = delete $wd{$k};
    delete $dir{$w};
    syscall($rm + 0, $fd + 0, $w + 0);
  }
}
# A folder renamed within the watch keeps its watches (they are on the folder, not its name): only their names move.
sub rename_keys {
  my ($from, $to) = @_;
  for my $k (grep { $_ eq $from || index($_, "$from/") == 0 } keys %wd) {
    my $w = delete $wd{$k};
    my $new = $to . substr($k, length $from);
    $wd{$new} = $w;
    $dir{$w} = $new;
  }
}
my %moving;
sub drain {
  while (1) {
    my $n = sysread($ev, my $buf, 262144);
    if (!defined $n) {
      my $e = $! + 0;
      next if $e == 4;
      $broken ||= "read: $!" unless $e == 11;
      return;
    }
    return if $n == 0;
    my $off = 0;
    while ($off + 16 <= $n) {
      my ($w, $mask, $cookie, $len) = unpack('iIII', substr($buf, $off, 16));
      my $name = $len ? unpack('Z*', substr($buf, $off + 16, $len)) : '';
      $off += 16 + $len;
      if ($mask & 0x4000) { $overflow = 1; next }
      my $key = $dir{$w};
      if ($mask & 0x8000) {
        if (defined $key) { delete $dir{$w}; delete $wd{$key} if ($wd{$key} // -1) == $w }
        next;
      }
      next unless defined $key;
      if ($name eq '') {
        $broken ||= 'a watched folder was moved or removed' if $key =~ /:$/ && ($mask & 0xC00);
        next;
      }
      my $child = $key =~ /:$/ ? "$key$name" : "$key/$name";
      $dirty{$child} = 1 unless $overflow;
      if (keys(%dirty) > 100000) { $overflow = 1; %dirty = () }
      if ($mask & 0x40000000) {
        if ($mask & 0x40) { $moving{$cookie} = $child }
        elsif ($mask & 0x200) { unwatch($child) }
        my $from = ($mask & 0x80) ? delete $moving{$cookie} : undef;
        rename_keys($from, $child) if defined $from;
        # Made or moved in: watched, with what is in it (each folder's watch added before it is listed). A folder
        # moved within keeps its watches, and is walked as well: one made in it before its watch was added, whose
        # walk found it already gone from its earlier name, is watched now.
        if ($mask & 0x180) { my ($i, $rel) = split(/:/, $child, 2); watch($i, $rel) }
      }
    }
  }
}
sub reply {
  drain();
  # A folder moved out of the watch (its new name never came): its watches go. A rename's two events are queued by
  # one system call, so every other has both by now.
  unwatch($_) for values %moving;
  %moving = ();
  if ($overflow) { %dirty = (); watch($_, '') for 0 .. $#roots; drain() }
  my $s = '';
  $s .= "D$_\0" for keys %dirty;
  $s .= "O\0" if $overflow;
  $s .= "B$broken\0" if $broken ne '';
  %dirty = ();
  $overflow = 0;
  out($s . "E\0");
}
watch($_, '') for 0 .. $#roots;
out("R$most\0");
my $rin = '';
vec($rin, fileno(STDIN), 1) = 1;
vec($rin, $fd, 1) = 1;
while (1) {
  my $ready = select(my $rout = $rin, undef, undef, undef);
  next if $ready < 0;
  drain() if vec($rout, $fd, 1);
  if (vec($rout, fileno(STDIN), 1)) {
    my $r = sysread(STDIN, my $in, 4096);
    exit 0 unless $r;
    reply() for 1 .. ($in =~ tr/\n//);
  }
}
`;

// At most this many watches run in one process (each is an inotify instance, of the 128 a user has by default on
// Linux, shared with the user's editors and tools); past it, a session's commands are compared by scans.
const MAX_WATCHES = 32;
let watches = 0;
// The quarter of the user's watches every watch of the process may hold together, in 32nds: each watch takes half of
// what is free (at least one part) and gives it back when it ends; with none free, a session's commands are scanned.
const PARTS = 32;
let freeParts = PARTS;

/** What a sync found: the names evented since the last one (relative, by root), or that it cannot say. */
export type FolderSync =
  | { kind: "names"; names: string[][] }
  | { kind: "lost" }
  | { kind: "broken"; reason: string };

/**
 * The watch of the folders below some roots. `sync()` answers with every name
 * below each root that an event named since the last sync (or since the
 * watch started).
 */
export class FolderEvents {
  readonly #child: ChildProcess;
  #buffer = "";
  #waiting: ((records: string[] | undefined) => void) | undefined;
  #records: string[] = [];
  #closed = false;
  readonly #roots: number;
  // Its part of the process's watches, given back when it ends.
  readonly #parts: number;
  /** The most folders it watches before it ends (see {@linkcode FolderEvents.start}). */
  most = 0;

  private constructor(child: ChildProcess, roots: number, parts: number) {
    this.#child = child;
    this.#roots = roots;
    this.#parts = parts;
    watches++;
    freeParts -= parts;
    child.stdout!.setEncoding("utf8");
    child.stdout!.on("data", (chunk: string) => this.#read(chunk));
    child.on("exit", () => this.#end());
    child.on("error", () => this.#end());
    child.stdin!.on("error", () => this.#end());
  }

  /**
   * Starts the watch of `roots` (real paths), or undefined where it cannot
   * run here: no Perl in the system's folders, an architecture whose syscall
   * numbers it does not know, a runtime that may not start it, as many
   * watches running as a process keeps, or a first answer that is not a ready
   * watch, or no part of the process's watches free. `most`: the most folders it watches before it ends (see
   * FOLDER_EVENTS_PERL), never more than its part of the quarter of the user's inotify watches that the watches of
   * the process share (half of what is free, at least a 32nd). Requires `--allow-run` of perl (without it: undefined, never a prompt).
   */
  static async start(roots: readonly string[], most = 0): Promise<FolderEvents | undefined> {
    const numbers = SYSCALLS[process.arch];
    if (numbers === undefined || process.platform !== "linux") return undefined;
    const known = ["/usr/bin/perl", "/bin/perl"];
    const perl = (await hostProgramCandidates("perl", known)).find((file) => known.includes(file));
    // Asked first: a runtime that would prompt for it (Deno without --allow-run of perl) gets scans instead.
    if (perl === undefined || !queryRuntimePermission("run", perl).allowed) return undefined;
    // Counted and taken with no wait between (the constructor): watches starting at once never take the same part,
    // nor one past MAX_WATCHES.
    const parts = Math.max(1, Math.floor(freeParts / 2));
    if (watches >= MAX_WATCHES || parts > freeParts) return undefined;
    let child: ChildProcess;
    try {
      // No inherited environment (PERL5LIB, PERL5OPT could point perl at modules in a workspace) and no workspace cwd.
      child = spawn(perl, [
        "-e",
        FOLDER_EVENTS_PERL,
        ...numbers.map(String),
        String(most),
        String(parts / PARTS),
        ...roots,
      ], {
        stdio: ["pipe", "pipe", "ignore"],
        env: {},
        cwd: "/",
      });
    } catch {
      return undefined;
    }
    // It never keeps the process alive: it ends when its stdin does, with the process.
    child.unref();
    (child.stdin as unknown as { unref?: () => void }).unref?.();
    (child.stdout as unknown as { unref?: () => void }).unref?.();
    const events = new FolderEvents(child, roots.length, parts);
    const first = await events.#next(START_MS);
    if (first === undefined || first[0][0] !== "R") {
      events.close();
      return undefined;
    }
    events.most = Number(first[0].slice(1));
    return events;
  }

  /**
   * Every name evented since the last sync. One at a time: the caller awaits each before the next (the session's
   * looks at its workspace are serial).
   */
  async sync(): Promise<FolderSync> {
    // Its last words, where it ended by itself (a watch it could not add, or past its most).
    const said = this.#records.find((record) => record[0] === "B")?.slice(1);
    if (this.#closed) return { kind: "broken", reason: said ?? "the watch has ended" };
    try {
      this.#child.stdin!.write("\n");
    } catch {
      this.close();
      return { kind: "broken", reason: "the watch has ended" };
    }
    const names: string[][] = Array.from({ length: this.#roots }, () => []);
    let lost = false;
    for (;;) {
      const records = await this.#next(SYNC_MS);
      if (records === undefined) {
        this.close();
        return { kind: "broken", reason: "the watch did not answer" };
      }
      for (const record of records) {
        const tag = record[0];
        if (tag === "D") {
          const colon = record.indexOf(":");
          names[Number(record.slice(1, colon))]?.push(record.slice(colon + 1));
        } else if (tag === "O") lost = true;
        else if (tag === "B") {
          this.close();
          return { kind: "broken", reason: record.slice(1) };
        } else if (tag === "E") return lost ? { kind: "lost" } : { kind: "names", names };
      }
    }
  }

  // The records read so far (at least one), or undefined once the watch ended or `ms` passed without one.
  #next(ms: number): Promise<string[] | undefined> {
    if (this.#records.length > 0) return Promise.resolve(this.#records.splice(0));
    if (this.#closed) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#waiting = undefined;
        resolve(undefined);
      }, ms);
      this.#waiting = (records) => {
        clearTimeout(timer);
        resolve(records);
      };
    });
  }

  #read(chunk: string): void {
    this.#buffer += chunk;
    const end = this.#buffer.lastIndexOf("\0");
    if (end < 0) return;
    const records = this.#buffer.slice(0, end).split("\0");
    this.#buffer = this.#buffer.slice(end + 1);
    this.#records.push(...records);
    const waiting = this.#waiting;
    this.#waiting = undefined;
    waiting?.(this.#records.splice(0));
  }

  #end(): void {
    if (!this.#closed) {
      watches--;
      freeParts += this.#parts;
    }
    this.#closed = true;
    const waiting = this.#waiting;
    this.#waiting = undefined;
    waiting?.(undefined);
  }

  /** Ends the watch (its program ends with its stdin). */
  close(): void {
    if (this.#closed) return;
    this.#end();
    try {
      this.#child.stdin!.end();
      this.#child.kill("SIGKILL");
    } catch {
      // already gone
    }
  }
}
