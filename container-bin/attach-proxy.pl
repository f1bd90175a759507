# `jackin-capsule attach-proxy` in a container started by `jackin run --image`, when the image has perl
# (every Debian- or Ubuntu-based image does: perl-base is Essential there). The relay only moves bytes
# between stdio and the capsule socket, and each `--via` attach and export starts one: perl starts in a few
# milliseconds where Node takes 40 to 60, and that start-up is on the path to the first prompt.
#
# Run by ./jackin-capsule as: perl attach-proxy.pl NODE CAPSULE_JS ARGS... Anything this relay does not
# handle itself goes to the Node relay (`NODE CAPSULE_JS ARGS...`), which then does everything as usual:
# arguments other than `attach-proxy [--socket PATH]`, stdio that is not a pipe or socket, a socket that
# cannot be reached (its error line and exit status are the Node relay's). It loads only Fcntl and Errno.
# Once connected it behaves as src/capsule/attach-proxy.ts: each direction half-closes on its own, a
# capsule that goes away ends both, a reader that goes away stops only the capsule-to-stdout direction,
# and the exit status is 0.
#
# The container is untrusted either way: the host checks every byte that comes back, whichever relay ran.
use strict;

my ($node, $capsule_js, @args) = @ARGV;

sub node_relay {
    exec { $node } $node, $capsule_js, @args;
    print STDERR "jackin-capsule: E_INTERNAL: cannot start $node: $!\n";
    exit 1;
}

# The forms bin/jackin-capsule.js's fast path takes (src/cli/attach-proxy-main.ts), and nothing else.
my $path;
if (@args == 1 && $args[0] eq 'attach-proxy') {
    my $dir = defined $ENV{JACKIN_RUN_DIR} && $ENV{JACKIN_RUN_DIR} ne '' ? $ENV{JACKIN_RUN_DIR} : '/jackin/run';
    $path = "$dir/jackin.sock";
} elsif (@args == 3 && $args[0] eq 'attach-proxy' && $args[1] eq '--socket' && $args[2] ne '' && $args[2] !~ /^-/) {
    $path = $args[2];
} elsif (@args == 2 && $args[0] eq 'attach-proxy' && $args[1] =~ /^--socket=(.+)$/s) {
    $path = $1;
}
node_relay() unless defined $path;
node_relay() unless (-p STDIN || -S STDIN) && (-p STDOUT || -S STDOUT);
node_relay() unless eval { require Fcntl; require Errno; 1 };

# Linux's AF_UNIX and SOCK_STREAM, and its struct sockaddr_un (a native short, then 108 bytes of path),
# written out: Socket.pm would load warnings and Carp, about 10 ms of a relay that otherwise starts in 5.
# Where SOCK_STREAM differs (MIPS), socket() or connect() fails and the Node relay takes over; so does a
# path too long for sun_path.
my ($AF_UNIX, $SOCK_STREAM, $SUN_PATH_MAX) = (1, 1, 108);
node_relay() unless length($path) < $SUN_PATH_MAX;
my $sock;
node_relay() unless socket($sock, $AF_UNIX, $SOCK_STREAM, 0) && connect($sock, pack('S a108', $AF_UNIX, $path));

$SIG{PIPE} = 'IGNORE';
for my $fh (\*STDIN, \*STDOUT, $sock) {
    my $flags = fcntl($fh, Fcntl::F_GETFL(), 0);
    fcntl($fh, Fcntl::F_SETFL(), $flags | Fcntl::O_NONBLOCK()) if defined $flags;
}

my $sfd = fileno($sock);
my $up = 1;        # stdin -> socket still open
my $down = 1;      # socket -> stdout still open
my $in_eof = 0;    # stdin ended: half-close the socket once $ub is written
my $sock_eof = 0;  # the socket ended: close stdout once $db is written
my $ub = '';       # read from stdin, not yet written to the socket
my $db = '';       # read from the socket, not yet written to stdout
my $CHUNK = 65536;

sub again { return $!{EAGAIN} || $!{EWOULDBLOCK} || $!{EINTR} }

# The capsule went away: nothing more can go up; what was read from it still goes down.
sub capsule_gone { $up = 0; $ub = ''; $sock_eof = 1 }

while ($up || $down) {
    if ($up && $in_eof && $ub eq '') {
        shutdown($sock, 1);
        $up = 0;
    }
    if ($down && $sock_eof && $db eq '') {
        close(STDOUT);
        $down = 0;
    }
    last unless $up || $down;

    my ($rin, $win) = ('', '');
    vec($rin, 0, 1) = 1 if $up && !$in_eof && $ub eq '';
    vec($rin, $sfd, 1) = 1 if $down && !$sock_eof && $db eq '';
    vec($win, $sfd, 1) = 1 if $up && $ub ne '';
    vec($win, 1, 1) = 1 if $down && $db ne '';
    my $n = select(my $rout = $rin, my $wout = $win, undef, undef);
    if ($n < 0) {
        next if $!{EINTR};
        last;
    }

    if (vec($rout, 0, 1)) {
        my $got = sysread(STDIN, $ub, $CHUNK);
        if (!defined $got) { $in_eof = 1 unless again() }
        elsif ($got == 0) { $in_eof = 1 }
    }
    if (vec($rout, $sfd, 1)) {
        my $got = sysread($sock, $db, $CHUNK);
        if (!defined $got) { capsule_gone() unless again() }
        elsif ($got == 0) { $sock_eof = 1 }
    }
    if (vec($wout, $sfd, 1) && $up) {
        my $put = syswrite($sock, $ub);
        if (defined $put) { substr($ub, 0, $put) = '' }
        elsif (!again()) { capsule_gone() }
    }
    if (vec($wout, 1, 1) && $down) {
        my $put = syswrite(STDOUT, $db);
        if (defined $put) { substr($db, 0, $put) = '' }
        elsif (!again()) {
            # Nobody reads our output any more: stop reading the socket, keep the upstream direction.
            $db = '';
            $down = 0;
        }
    }
}
exit 0;
