# What every command of a `sandbox: container` task runs under, inside the task's container
# (src/run/container/): warren's exec client (src/run/container/exec-client.ts) starts it through
# podman's API as `perl container-init.pl RUN_ID SETSID KEEP_BADLANG [--ref GIT_DIR REF COMMIT] -- CMD…`,
# the host's perl (in /usr) and this file bound in read-only. It is the run's process-tree keeper
# there, as the PID namespace is outside:
#
# - the command leads a process group and a session of its own (SETSID: the system call's number
#   on this machine's architecture), and carries WARREN_RUN_ID; PERL_BADLANG, set for the two
#   perls alone (a locale the machine lacks would make them warn), is taken out unless
#   KEEP_BADLANG is 1 (the run's own environment had it);
# - its standard input arrives in frames (4-byte length, then bytes; length 0: end of input),
#   so that the end of the connection itself — the client ended, killed or cut off — is told
#   apart from the end of the input, and ends the run; none arrives when the client had none
#   (WARREN_NO_INPUT=1 in the environment, taken out: the command's input ends at once);
# - when the command exits, or the connection ends, everything of the run is killed: its group,
#   every process carrying its WARREN_RUN_ID, and every process left to the container's init
#   that carries no run's mark at all (it cleared its environment to escape). A process of
#   another, live run keeps its mark and is left alone.
#
# perl with no module (as the exec client): it starts with every command, and node's start-up
# was a fifth of an exec's cost. bin/container-init.mjs is the same for a task in a cluster, whose
# pod has node but maybe no perl. Linux's numbers shared by the architectures warren runs on:
# F_SETFL 4, O_NONBLOCK 2048, WNOHANG 1, EINTR 4, EAGAIN 11.
use strict;

my ($run_id, $setsid, $keep) = splice @ARGV, 0, 3;
# `--ref GIT_DIR REF COMMIT`: where the task's branch is on the host (see sync_branch).
my @ref = $ARGV[0] && $ARGV[0] eq '--ref' ? (splice @ARGV, 0, 4)[1, 2, 3] : ();
my $sep = shift @ARGV;
unless ($run_id && $setsid && $setsid =~ /^\d+$/ && defined $keep && defined $sep && $sep eq '--' && @ARGV && (!@ref || ($ref[0] && $ref[1] && $ref[2]))) {
  print STDERR "usage: container-init.pl RUN_ID SETSID KEEP_BADLANG [--ref GIT_DIR REF COMMIT] -- CMD [ARG...]\n";
  exit 125;
}
$SIG{PIPE} = 'IGNORE';
my $no_input = (delete($ENV{WARREN_NO_INPUT}) // '') eq '1';
sync_branch(@ref) if @ref;
my $mark = "WARREN_RUN_ID=$run_id";

pipe(my $to_child, my $input) or die "warren: pipe: $!\n";
my $child = fork() // die "warren: fork: $!\n";
if (!$child) {
  close $input;
  open(STDIN, '<&', $to_child) or die "warren: stdin: $!\n";
  close $to_child;
  syscall($setsid + 0);
  $SIG{PIPE} = 'DEFAULT';
  $ENV{WARREN_RUN_ID} = $run_id;
  delete $ENV{PERL_BADLANG} unless $keep;
  exec { $ARGV[0] } @ARGV;
  print STDERR "warren: $ARGV[0]: ", ($! == 2 ? 'command not found' : "$!"), "\n";
  exit 127;
}
close $to_child;
fcntl($input, 4, 2048);
# SIGCHLD interrupts the wait below (a handler, so it is not ignored); the wait's own timeout
# covers one that lands just before it starts.
$SIG{CHLD} = sub { };

my ($pending, $queued, $input_open, $end) = ('', '', 1, 0);
if ($no_input) { close $input; ($input_open, $end) = (0, 1) }
while (1) {
  if (waitpid($child, 1) == $child) {
    my $status = $?;
    finish($status & 127 ? 128 + ($status & 127) : $status >> 8);
  }
  my ($read, $write) = ('', '');
  vec($read, 0, 1) = 1;
  vec($write, fileno($input), 1) = 1 if $input_open && length $queued;
  next if select($read, $write, undef, 0.25) <= 0;
  if (vec($read, 0, 1)) {
    # The connection is gone: the client was ended (a timeout, a cancel) or cut off. So is the run.
    sysread(STDIN, $pending, 65536, length $pending) or finish(137);
    while (length($pending) >= 4) {
      my $length = unpack('N', $pending);
      last if length($pending) < 4 + $length;
      my $data = substr($pending, 4, $length);
      substr($pending, 0, 4 + $length) = '';
      next if !$input_open || $end;
      if ($length == 0) { $end = 1 } else { $queued .= $data }
    }
  }
  next unless $input_open;
  # Written as the command reads it (never blocking: the connection's end must be seen meanwhile).
  if (length $queued) {
    my $wrote = syswrite($input, $queued);
    if (defined $wrote) { substr($queued, 0, $wrote) = '' }
    elsif ($! != 11) { ($queued, $end) = ('', 1) } # the command closed its input
  }
  if ($end && !length $queued) { close $input; $input_open = 0 }
}

# The container sees the repository's common git directory through an overlay whose upper folder
# holds what git wrote inside (src/run/container/task-container.ts). When warren moved the
# branch on the host since (a checkpoint, a sync), the container's copy of the ref is behind:
# it is moved forward here, before the command, so the agent's next commit builds on the
# branch's real tip. Only forward: a tip the host does not have yet (a commit of a run still
# going) is left for warren to take after that run. No hook runs. GIT_DIR is the common git
# directory, where the overlay is: the ref's own file there holding the commit already (every
# command's case but the first after a move) is what git would answer, without a git process.
sub sync_branch {
  my ($common, $name, $commit) = @_;
  return if loose_ref("$common/$name") eq $commit;
  my ($seen, $out) = git('rev-parse', '--verify', '--quiet', $name);
  my $inside = $seen == 0 ? (split /\s+/, $out)[0] : undef;
  return if defined $inside && $inside eq $commit;
  return if defined $inside && (git('merge-base', '--is-ancestor', $inside, $commit))[0] != 0;
  my ($moved, undef, $err) =
    git('update-ref', '-m', 'warren: the branch as it is on the host', $name, $commit, defined $inside ? $inside : ());
  if ($moved != 0) {
    $err =~ s/\s+\z//;
    print STDERR "warren: could not move $name to $commit in the container: $err\n";
  }
}

# A loose ref's commit, as git reads it before any packed one: a regular file (a link, a
# missing file or anything else is '': git is asked).
sub loose_ref {
  my ($file) = @_;
  return '' if -l $file || !-f _;
  open(my $fh, '<', $file) or return '';
  my $line = <$fh> // '';
  $line =~ /\A([0-9a-f]{40}(?:[0-9a-f]{24})?)\n?\z/ ? $1 : '';
}

# git, hooks off: its status, stdout and stderr (each small here).
sub git {
  pipe(my $out_r, my $out_w) && pipe(my $err_r, my $err_w) or return (-1, '', "pipe: $!");
  my $pid = fork() // return (-1, '', "fork: $!");
  if (!$pid) {
    close $out_r;
    close $err_r;
    open(STDIN, '<', '/dev/null');
    open(STDOUT, '>&', $out_w);
    open(STDERR, '>&', $err_w);
    exec 'git', '-c', 'core.hooksPath=/dev/null', @_;
    exit 127;
  }
  close $out_w;
  close $err_w;
  my $out = do { local $/; <$out_r> } // '';
  my $err = do { local $/; <$err_r> } // '';
  waitpid($pid, 0);
  ($? >> 8, $out, $err);
}

sub finish {
  my ($status) = @_;
  kill 'KILL', -$child;
  # Again until a pass finds nothing to kill: a doomed process may fork between a pass's read
  # of /proc and its kill. When one finds none, what is left belongs to other, live runs.
  for (my $pass = 0; $pass < 100 && sweep() > 0; $pass++) { select(undef, undef, undef, 0.01) }
  exit $status;
}

# Kills what belongs to this run, and what escaped every run's mark, in the container's PID
# namespace: walking up from each process, the first marked one decides (ours: killed; another
# live run's: left); a chain that reaches the container's init unmarked escaped (killed).
sub sweep {
  my %table;
  opendir(my $proc, '/proc') or return 0;
  for my $pid (grep { /^\d+$/ } readdir $proc) {
    open(my $e, '<', "/proc/$pid/environ") or next;
    my $environ = do { local $/; <$e> } // '';
    open(my $s, '<', "/proc/$pid/stat") or next;
    my $stat = <$s> // next;
    my ($state, $ppid) = split / /, substr($stat, rindex($stat, ')') + 2);
    my ($found) = grep { /^WARREN_RUN_ID=/ } split /\0/, $environ;
    $table{$pid} = { ppid => $ppid, mark => $found, zombie => $state eq 'Z' };
  }
  my $doomed = sub {
    my $p = shift;
    for (my $hops = 0; $hops < 4096; $hops++) {
      return 1 if $p == 1 || $p == 0;  # reached the init unmarked: escaped
      return 1 if $p == $$;            # below this init: the run's own
      my $row = $table{$p} or return 1; # its parent is gone already: an orphan on its way to the init
      return $row->{mark} eq $mark if defined $row->{mark};
      $p = $row->{ppid};
    }
    return 0;
  };
  my $killed = 0;
  for my $pid (keys %table) {
    next if $pid == 1 || $pid == $$ || $table{$pid}{zombie} || !$doomed->($pid);
    $killed++ if kill 'KILL', $pid;
  }
  return $killed;
}
