import { findCommand } from '../command-lookup.js';
import { API } from './api.js';

/**
 * warren's exec client for a `sandbox: container` task: the process the runner supervises on
 * the host for one command that runs in the task's container. It asks podman's API (its socket)
 * to exec the command there, attached: standard input goes in frames (4-byte length, then bytes;
 * length 0: end of input; bin/container-init.mjs reads them, and the end of the connection is
 * the end of the run), stdout and stderr come back demultiplexed from Docker's 8-byte frame
 * headers, and it exits with the command's status (125 when it could not run it). Ended (a
 * timeout, a cancel: HUP, INT, TERM) or killed, its connection closes, and the init inside ends
 * everything of the run.
 *
 * perl with no module, not node: the client starts with every command of a container task, and
 * node's start-up (40 ms idle, 300–700 ms on a loaded machine) was a third of the exec's cost;
 * perl's is a tenth of it (src/system/sandbox-uid.ts makes the same choice). System calls by
 * Linux's numbers that every architecture warren runs on shares: AF_UNIX 1, SOCK_STREAM 1, EINTR 4, EAGAIN 11.
 *
 *   perl -e EXEC_CLIENT SOCKET CONTAINER CWD CMD [ARG…]
 *
 * The command's environment is the client's own (the runner gave it the boundary's, and
 * PERL_BADLANG=0 so that a locale this machine lacks makes neither perl warn on the run's
 * stderr: the init inside takes it out again, execClientEnv).
 */
const EXEC_CLIENT = String.raw`use strict;
my ($path, $container, $cwd, @cmd) = @ARGV;
my $API = '${API}';
sub fail { print STDERR "warren: could not run in the task's container: $_[0]\n"; exit 125 }
@cmd && $container =~ /^[\w.-]+$/ or fail('usage: SOCKET CONTAINER CWD CMD [ARG...]');
$SIG{PIPE} = 'IGNORE';
my $conn;
for (['HUP', 1], ['INT', 2], ['TERM', 15]) { my $n = $_->[1]; $SIG{$_->[0]} = sub { close $conn if $conn; exit 128 + $n } }
sub js { my $s = shift; $s =~ s/(["\\])/\\$1/g; $s =~ s/([\x00-\x1f\x7f])/sprintf('\\u%04x', ord $1)/ge; qq("$s") }
sub list { '[' . join(',', map { js($_) } @_) . ']' }
sub dial {
  socket(my $s, 1, 1, 0) or fail("socket: $!");
  length($path) < 108 && connect($s, pack('S Z108', 1, $path)) or fail("podman's API at $path: $!");
  $s;
}
sub put { my ($fh, $data) = @_; while (length $data) { my $n = syswrite($fh, $data); return 0 unless $n; substr($data, 0, $n) = '' } 1 }
sub send_request {
  my ($s, $method, $url, $body, @headers) = @_;
  put($s, join('', "$method $url HTTP/1.1\r\nHost: podman\r\nContent-Type: application/json\r\n",
    map({ "$_\r\n" } @headers), 'Content-Length: ', length($body), "\r\n\r\n", $body)) or fail("writing to podman: $!");
}
# The status line and headers; what came after them stays in $$rest.
sub read_head {
  my ($s, $rest) = @_;
  my $all = '';
  until ($all =~ /\r\n\r\n/) { sysread($s, $all, 65536, length $all) or fail('podman closed the connection'); }
  my ($head, $after) = split /\r\n\r\n/, $all, 2;
  $$rest = $after;
  my ($status) = $head =~ m{^HTTP/1\.\d (\d{3})} or fail("podman answered: $head");
  ($status, $head);
}
sub request {
  my ($method, $url, $body) = @_;
  my $s = dial();
  send_request($s, $method, $url, $body // '', 'Connection: close');
  my ($status, $head) = read_head($s, \my $body_in);
  1 while sysread($s, $body_in, 65536, length $body_in);
  close $s;
  if ($head =~ /^transfer-encoding:\s*chunked/im) {
    my $out = '';
    while ($body_in =~ s/^([0-9a-fA-F]+)[^\r\n]*\r\n//) { my $n = hex $1; last unless $n; $out .= substr($body_in, 0, $n, ''); $body_in =~ s/^\r\n// }
    $body_in = $out;
  }
  ($status, $body_in);
}
sub said { my ($status, $body) = @_; $body =~ /"message"\s*:\s*"((?:[^"\\]|\\.)*)"/ ? $1 : "HTTP $status" . ($body =~ /\S/ ? ": $body" : '') }

# Input that has ended before the command starts (/dev/null, a closed pipe, none) is not sent:
# the init is told in the environment (WARREN_NO_INPUT=1, which it takes out), and nothing goes
# on the connection. conmon closes an exec's attach socket when the command ends, and input on
# it not read yet makes podman lose the output still on its way (containers/podman#11446): a
# command that ends at once, before the end-of-input frame got through, printed nothing.
my $input = defined fileno(STDIN);
my $first = '';
if ($input) {
  my $ready = '';
  vec($ready, fileno(STDIN), 1) = 1;
  if (select($ready, undef, undef, 0) > 0) {
    my $got = sysread(STDIN, $first, 65536);
    $input = 0 if defined $got ? $got == 0 : $! != 11;
  }
}
delete $ENV{WARREN_NO_INPUT};
$ENV{WARREN_NO_INPUT} = '1' unless $input;
my ($made, $answer) = request('POST', "$API/containers/$container/exec", join('',
  '{"AttachStdin":true,"AttachStdout":true,"AttachStderr":true,"Cmd":', list(@cmd),
  ',"Env":', list(map { "$_=$ENV{$_}" } sort keys %ENV), ',"WorkingDir":', js($cwd), '}'));
$made == 201 or fail("exec in $container: " . said($made, $answer));
my ($id) = $answer =~ /"Id"\s*:\s*"([0-9a-f]+)"/ or fail("exec in $container: podman answered $answer");
$conn = dial();
send_request($conn, 'POST', "$API/exec/$id/start", '{"Detach":false,"Tty":false}', 'Connection: Upgrade', 'Upgrade: tcp');
my ($status, $head) = read_head($conn, \my $pending);
if ($status != 101) { 1 while sysread($conn, $pending, 65536, length $pending); fail("exec start: HTTP $status: $pending") }
sub demultiplex {
  while (length($pending) >= 8) {
    my ($kind, $n) = unpack('C x3 N', $pending);
    last if length($pending) < 8 + $n;
    put($kind == 2 ? \*STDERR : \*STDOUT, substr($pending, 8, $n));
    substr($pending, 0, 8 + $n) = '';
  }
}
demultiplex();
put($conn, pack('N', length $first) . $first) if length $first;
while (1) {
  my $want = '';
  vec($want, fileno($conn), 1) = 1;
  vec($want, fileno(STDIN), 1) = 1 if $input;
  my $ready = $want;
  if (select($ready, undef, undef, undef) < 0) { next if $! == 4; last }
  if ($input && vec($ready, fileno(STDIN), 1)) {
    my $got = sysread(STDIN, my $chunk, 65536);
    if ($got) { put($conn, pack('N', $got) . $chunk) } else { $input = 0; put($conn, pack('N', 0)) }
  }
  if (vec($ready, fileno($conn), 1)) { sysread($conn, $pending, 65536, length $pending) or last; demultiplex() }
}
close $conn;
undef $conn;
my ($seen, $inspected) = request('GET', "$API/exec/$id/json");
my ($code) = $inspected =~ /"ExitCode"\s*:\s*(-?\d+)/;
exit(defined $code ? $code : 125);
`;

/** The client's environment: the run's, with PERL_BADLANG=0 for the two perls; `keep` tells the init whether the run's own had it (else it takes it out). */
export function execClientEnv(env: NodeJS.ProcessEnv): { env: NodeJS.ProcessEnv; keep: boolean } {
  const keep = env.PERL_BADLANG !== undefined;
  return { env: keep ? env : { ...env, PERL_BADLANG: '0' }, keep };
}

/** The argv prefix of one exec in `container` through podman's API at `socket`; what follows it runs in the container, in `cwd`. */
export function execClientArgv(socket: string, container: string, cwd: string): string[] {
  const perl = findCommand('perl', process.env.PATH ?? '', '/') ?? 'perl';
  return [perl, '-e', EXEC_CLIENT, socket, container, cwd];
}
