/**
 * The resident relay inside a sandbox's network namespace, as a Perl program
 * (`perl -e`): it listens on 127.0.0.1:PORT, then forks; the parent execs the
 * command (so the command keeps the process's place and exit status, and
 * starts only once the listener exists), and the child relays every
 * connection to the proxy's unix socket from one process, with no fork per
 * connection (socat's `fork`, which costs tens of milliseconds per
 * connection on a loaded machine). Non-blocking sockets, one `select` loop,
 * a pending buffer per direction (nothing more is read from a side while
 * its peer's buffer is unsent), half-close passed on.
 *
 * The relay runs inside the sandbox with the command's own rights, so it
 * decides nothing: every connection is still judged by the proxy on the host.
 *
 * Arguments: the port, the socket's path, then the command's argv. Exit 125
 * with a reason when the listener cannot be made, 127 when the command
 * cannot be run.
 *
 * @module
 */

/**
 * What the program needs of this system's socket and `fcntl` interface, as
 * numbers: passed in as its first argument, so that the program loads no
 * module (Perl's Socket, Fcntl and Errno modules more than double its start,
 * tens of milliseconds per command on a loaded machine). Probed once per
 * process by running {@linkcode PROBE_PERL}.
 */
export const RELAY_CONSTANTS = [
  "PF_INET",
  "PF_UNIX",
  "SOCK_STREAM",
  "SOL_SOCKET",
  "SO_REUSEADDR",
  "SOMAXCONN",
  "F_GETFL",
  "F_SETFL",
  "O_NONBLOCK",
  "EAGAIN",
  "EINTR",
  "IPPROTO_TCP",
  "TCP_NODELAY",
] as const;

/** Prints {@linkcode RELAY_CONSTANTS} in order, space-separated (for `perl -e`). */
export const PROBE_PERL =
  "use Socket qw(:DEFAULT IPPROTO_TCP TCP_NODELAY); use Fcntl; use Errno qw(EAGAIN EINTR); print join(' ', " +
  RELAY_CONSTANTS.join(", ") + ");";

/** The program, for `perl -e`. Arguments: the constants, the port, the socket's path, the command's argv. */
export const RELAY_PERL = String.raw`
my ($PF_INET, $PF_UNIX, $SOCK_STREAM, $SOL_SOCKET, $SO_REUSEADDR, $SOMAXCONN, $F_GETFL, $F_SETFL, $O_NONBLOCK,
  $EAGAIN, $EINTR, $IPPROTO_TCP, $TCP_NODELAY) = split / /, shift @ARGV;
my ($port, $path) = splice(@ARGV, 0, 2);
sub fail { print STDERR "toolfence: the egress relay did not start ($_[0]); the command has no network\n"; exit 125 }
socket(my $listener, $PF_INET, $SOCK_STREAM, 0) or fail("socket: $!");
setsockopt($listener, $SOL_SOCKET, $SO_REUSEADDR, 1);
bind($listener, pack("S n C4 x8", $PF_INET, $port, 127, 0, 0, 1)) or fail("bind 127.0.0.1:$port: $!");
listen($listener, $SOMAXCONN) or fail("listen: $!");
my $pid = fork() // fail("fork: $!");
if ($pid) {
  close $listener;
  exec { $ARGV[0] } @ARGV;
  print STDERR "toolfence: cannot run $ARGV[0]: $!\n";
  exit 127;
}
open(STDIN, "<", "/dev/null");
open(STDOUT, ">", "/dev/null");
open(STDERR, ">", "/dev/null");
$SIG{PIPE} = "IGNORE";
sub nonblocking { fcntl($_[0], $F_SETFL, fcntl($_[0], $F_GETFL, 0) | $O_NONBLOCK) }
sub again { $! == $EAGAIN || $! == $EINTR }
nonblocking($listener);
my (%handle, %peer, %pending, %ended);
sub drop {
  my @fds = @_;
  for my $n (@fds) {
    next unless $handle{$n};
    close $handle{$n};
    delete $_->{$n} for \%handle, \%peer, \%pending, \%ended;
  }
}
sub flush {
  my ($n) = @_;
  while (length $pending{$n}) {
    my $w = syswrite($handle{$n}, $pending{$n});
    if (!defined $w) { return 1 if again(); drop($n, $peer{$n}); return 0 }
    substr($pending{$n}, 0, $w, "");
  }
  shutdown($handle{$n}, 1) if $ended{$peer{$n}};
  drop($n, $peer{$n}) if $ended{$n} && $ended{$peer{$n}};
  return 1;
}
my $unix = pack("S a*", $PF_UNIX, $path);
while (1) {
  my ($r, $w) = ("", "");
  vec($r, fileno($listener), 1) = 1;
  for my $n (keys %handle) {
    vec($r, $n, 1) = 1 unless $ended{$n} || length $pending{$peer{$n}};
    vec($w, $n, 1) = 1 if length $pending{$n};
  }
  next unless select($r, $w, undef, undef) > 0;
  if (vec($r, fileno($listener), 1)) {
    while (1) {
      accept(my $client, $listener) or last;
      socket(my $upstream, $PF_UNIX, $SOCK_STREAM, 0) or next;
      connect($upstream, $unix) or next;
      nonblocking($client);
      nonblocking($upstream);
      # What arrives is passed on at once: no waiting for the client's acknowledgement of the last piece.
      setsockopt($client, $IPPROTO_TCP, $TCP_NODELAY, 1);
      my ($c, $u) = (fileno($client), fileno($upstream));
      @handle{$c, $u} = ($client, $upstream);
      @peer{$c, $u} = ($u, $c);
      @pending{$c, $u} = ("", "");
    }
  }
  for my $n (keys %handle) {
    next unless $handle{$n};
    if (vec($w, $n, 1)) { flush($n) or next }
    next unless $handle{$n} && vec($r, $n, 1);
    my $to = $peer{$n};
    my $got = sysread($handle{$n}, $pending{$to}, 262144, length $pending{$to});
    if (!defined $got) { drop($n, $to) unless again(); next }
    $ended{$n} = 1 if $got == 0;
    flush($to);
  }
}
`;
