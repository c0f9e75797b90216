# ZkInterop.pm: the interoperability checks that t/010 (Curator) and t/011
# (kazoo) both make: another ZooKeeper client program (a "peer") and
# zklock's backends take locks on one lock node, in both directions.
#
# A peer is a hash:
#   pg, h1, h2  the zklock side: a cluster named "a" and two background_psql
#               sessions on its database postgres
#   c           the peer's client (ZkTest's curator_client, kazoo_client),
#               kept by the test for the whole run
#   who         its name in test names ("Curator", "kazoo")
#   data        the data of its nodes, as zk_lock_queue shows them
#   write, read the commands of its exclusive and shared locks
#   lock        its exclusive lock in test names, after a verb ("the write
#               lock", "its Lock")
#   rlock       its shared lock in test names, after "the" ("read lock",
#               "ReadLock")
#   write_node  a regex that the names of its exclusive lock's nodes match
#
# Each check keeps the name it had in the test it came from; PATH is a
# zklock path (the peer's lock node is /zklock PATH).
package ZkInterop;

use strict;
use warnings;

use Exporter 'import';
use Test::More;
use Time::HiRes qw(time);
use ZkTest;

our @EXPORT = qw(peer_write_excludes_zklock peer_waits_for_zklock
  peer_reads_with_zklock peer_reader_excludes_zklock_writer
  peer_writer_queues_between_readers peer_writer_granted_before_reader
  peer_holder_closes peer_holder_dies peer_close);

sub _sql
{
	my ($p, $sql) = @_;
	return $p->{pg}->safe_psql('postgres', $sql);
}

# the marker of a statement that session h1 or h2 runs in the background
sub _marker
{
	my ($h, $path) = @_;
	(my $m = "${h}_got$path") =~ s/\W/_/g;
	return $m;
}

# peer_write_excludes_zklock(PEER, PATH): the peer takes its exclusive lock
# on PATH (its client is on it); zk_try_lock and zk_try_rlock fail and
# leave nothing behind; zk_lock_queue shows the peer's node; zk_lock (in h1)
# queues behind it and gets the lock once the peer released it.  h1 holds
# PATH afterwards.
sub peer_write_excludes_zklock
{
	my ($p, $path) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my ($c, $who, $data, $write) = @$p{qw(c who data write)};
	is(client_ask($c, "$write 5000"), "acquired $write", "$who takes $p->{lock}");
	is(_sql($p, qq{SELECT zk_try_lock('$path')}),
		'f', "zk_try_lock fails while $who holds $p->{lock}");
	is(_sql($p, qq{SELECT zk_try_rlock('$path', 200)}),
		'f', 'so does zk_try_rlock, after waiting 200 ms');
	queue_is($p->{pg}, $path, "1:exclusive:t:$data",
		'the failed tries left nothing behind');
	is( _sql(
			$p,
			qq{SELECT znode ~ '$p->{write_node}', mode, granted, data,
			          cluster_name IS NULL AND pid IS NULL
			   FROM zk_lock_queue('$path')}),
		"t|exclusive|t|$data|t",
		"zk_lock_queue shows $who\'s node: exclusive, granted, $who\'s data, no zklock owner"
	);

	my $m = _marker('h1', $path);
	bg_begin($p->{h1}, qq{SELECT zk_lock('$path') > 0 AS got}, $m);
	ok(wait_queue_len($p->{pg}, $path, 2, 15, "zk_lock queued behind $who"),
		"zk_lock queues behind $who");
	queue_is($p->{pg}, $path, "1:exclusive:t:$data,2:exclusive:f:a",
		"the queue: $who holding, zklock waiting");
	ok(!bg_done($p->{h1}, $m), 'zk_lock is still waiting');

	my $t0 = time();
	is(client_ask($c, "release $write"), "released $write", "$who releases");
	my ($out) = bg_finish($p->{h1}, $m);
	my $ms = 1000 * (time() - $t0);
	like($out, qr/^t$/m, "zk_lock gets the lock once $who released it");
	note(sprintf('%s release -> zk_lock handoff: %.1f ms', $who, $ms));
	return;
}

# peer_waits_for_zklock(PEER, PATH): while h1 holds PATH exclusively, the
# peer asks for its exclusive lock, queues behind zklock and is still
# waiting; it gets the lock when h1 releases it, then releases it.
sub peer_waits_for_zklock
{
	my ($p, $path) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my ($c, $who, $data, $write) = @$p{qw(c who data write)};
	client_queues($c, $write, $p->{pg}, $path, 2, "$who waits for $p->{lock}",
		"$who queues behind zklock");
	queue_is($p->{pg}, $path, "1:exclusive:t:a,2:exclusive:f:$data",
		"the queue: zklock holding, $who waiting");
	is(client_poll($c), undef, "$who is still waiting");

	my $t0 = time();
	$p->{h1}->query_safe(qq{SELECT zk_unlock('$path')});
	is(client_next($c, 10), "acquired $write",
		"$who gets $p->{lock} once zklock released it");
	note(sprintf('zk_unlock -> %s handoff: %.1f ms', $who, 1000 * (time() - $t0)));
	is(client_ask($c, "release $write"), "released $write", "$who releases");
	return;
}

# peer_reads_with_zklock(PEER, PATH): the peer's client switches to PATH;
# h1 takes zk_rlock, the peer's shared lock shares with it and another
# zklock reader gets in too.  Both readers hold PATH afterwards (h1's, the
# peer's; the other reader's backend is gone).
sub peer_reads_with_zklock
{
	my ($p, $path) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my ($c, $who, $read) = @$p{qw(c who read)};
	is(client_ask($c, "path /zklock$path"), "path /zklock$path",
		"$who client switches to $path");
	$p->{h1}->query_safe(qq{SELECT zk_rlock('$path')});
	is(client_ask($c, "$read 3000"), "acquired $read",
		"$who\'s $p->{rlock} shares with zklock's read lock (zklock first)");
	is(_sql($p, qq{SELECT zk_try_rlock('$path')}),
		't', 'another zklock reader gets in too');
	return;
}

# peer_reader_excludes_zklock_writer(PEER, PATH): after
# peer_reads_with_zklock, a zklock writer cannot get in; once h1 released,
# the peer's reader remains, a zklock reader shares with it and a zklock
# writer is still kept out; then the peer releases.
sub peer_reader_excludes_zklock_writer
{
	my ($p, $path) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my ($c, $who, $data, $read) = @$p{qw(c who data read)};
	is(_sql($p, qq{SELECT zk_try_lock('$path', 200)}),
		'f', 'a zklock writer cannot get in');
	$p->{h1}->query_safe(qq{SELECT zk_unlock('$path')});
	queue_is($p->{pg}, $path, "1:shared:t:$data", "the $who reader remains");
	is(_sql($p, qq{SELECT zk_try_rlock('$path', 2000)}),
		't', "zk_rlock shares with $who\'s $p->{rlock} ($who first)");
	is(_sql($p, qq{SELECT zk_try_lock('$path')}),
		'f', "zk_try_lock fails while $who holds the $p->{rlock}");
	is(client_ask($c, "release $read"), "released $read", "$who releases");
	return;
}

# peer_writer_queues_between_readers(PEER, PATH): the peer's client switches
# to PATH; h1 takes zk_rlock, the peer asks for its exclusive lock and
# queues second; later zklock readers do not overtake it (a try, a try that
# waits 300 ms) and leave nothing behind; a second zklock reader (h2) queues
# third.
sub peer_writer_queues_between_readers
{
	my ($p, $path) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my ($c, $who, $data, $write) = @$p{qw(c who data write)};
	is(client_ask($c, "path /zklock$path"), "path /zklock$path",
		"$who client switches to $path");
	$p->{h1}->query_safe(qq{SELECT zk_rlock('$path')});
	client_queues($c, $write, $p->{pg}, $path, 2, "$who asks for $p->{lock}",
		"the $who writer queues behind the zklock reader");
	is( _sql(
			$p,
			qq{SELECT position, mode, granted, data FROM zk_lock_queue('$path')
			   WHERE znode ~ '$p->{write_node}'}),
		"2|exclusive|f|$data",
		"zk_lock_queue: the $who node, exclusive, waiting in position 2");
	is(_sql($p, qq{SELECT zk_try_rlock('$path')}),
		'f', "a later zklock reader does not overtake the $who writer");
	is(_sql($p, qq{SELECT zk_try_rlock('$path', 300)}),
		'f', 'not even after waiting 300 ms');
	queue_is($p->{pg}, $path, "1:shared:t:a,2:exclusive:f:$data",
		'the failed tries left nothing behind');

	bg_begin($p->{h2}, qq{SELECT zk_rlock('$path') > 0 AS got},
		_marker('h2', $path));
	ok(wait_queue_len($p->{pg}, $path, 3, 15, 'second zklock reader queued'),
		"the second zklock reader queues behind the $who writer");
	return;
}

# peer_writer_granted_before_reader(PEER, PATH): after
# peer_writer_queues_between_readers, h1 leaves: the peer's writer gets the
# lock, the second reader still waits; the writer releases and the second
# reader gets the lock, then releases it.
sub peer_writer_granted_before_reader
{
	my ($p, $path) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my ($c, $who, $data, $write) = @$p{qw(c who data write)};
	my $m = _marker('h2', $path);
	$p->{h1}->query_safe(qq{SELECT zk_unlock('$path')});
	is(client_next($c, 10), "acquired $write",
		"the $who writer gets the lock when the first reader leaves");
	ok(!bg_done($p->{h2}, $m), 'the second reader still waits');
	queue_is($p->{pg}, $path, "1:exclusive:t:$data,2:shared:f:a",
		"the queue: $who writer holding, zklock reader waiting");
	is(client_ask($c, "release $write"), "released $write",
		"the $who writer releases");
	my ($out) = bg_finish($p->{h2}, $m);
	like($out, qr/^t$/m, 'then the second zklock reader gets the lock');
	$p->{h2}->query_safe(qq{SELECT zk_unlock('$path')});
	return;
}

# _holder_queued(PEER, C, NAME, PATH): client C of the peer (NAME in test
# names), on PATH, takes its exclusive lock and zk_lock (in h1) queues
# behind it; returns h1's marker.
sub _holder_queued
{
	my ($p, $c, $name, $path) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my $write = $p->{write};
	is(client_ask($c, "$write 3000"), "acquired $write", "$name holds the lock");
	my $m = _marker('h1', $path);
	bg_begin($p->{h1}, qq{SELECT zk_lock('$path') > 0 AS got}, $m);
	ok(wait_queue_len($p->{pg}, $path, 2, 15, "zk_lock queued behind $name"),
		"zk_lock waits for $name");
	return $m;
}

# peer_holder_closes(PEER, C, NAME, PATH, SESSION_S): client C of the peer
# (NAME in test names, a session of SESSION_S seconds), on PATH, holds the
# lock zk_lock waits for, and closes its client: zk_lock gets the lock well
# before the session could have expired.  h1 releases it.
sub peer_holder_closes
{
	my ($p, $c, $name, $path, $session_s) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my $m = _holder_queued($p, $c, $name, $path);
	my $t0 = time();
	is(client_ask($c, 'close'), 'closed', "$name closes its client");
	my ($out) = bg_finish($p->{h1}, $m);
	my $ms = 1000 * (time() - $t0);
	like($out, qr/^t$/m, "zk_lock gets the lock when the $p->{who} session closes");
	note(sprintf('%s close -> zk_lock handoff: %.1f ms (session timeout %d s)',
			$p->{who}, $ms, $session_s));
	cmp_ok($ms, '<', 2000,
		'well before the session could have expired: the close deleted the node');
	$p->{h1}->query_safe(qq{SELECT zk_unlock('$path')});
	return;
}

# peer_holder_dies(PEER, C, NAME, PATH, SESSION_S, HOW, KILL): client C of
# the peer (NAME in test names, a session of SESSION_S seconds), on PATH,
# holds the lock zk_lock waits for; KILL (code) ends it without releasing
# anything, HOW (for the log) says how, and checks that it is gone: zk_lock
# gets the lock when the session expires, not before 1.5 s, before 9 s.
# h1 releases it.
sub peer_holder_dies
{
	my ($p, $c, $name, $path, $session_s, $how, $kill) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my $m = _holder_queued($p, $c, $name, $path);
	my $t0 = time();
	$kill->();
	my ($out) = bg_finish($p->{h1}, $m);
	my $ms = 1000 * (time() - $t0);
	like($out, qr/^t$/m,
		"zk_lock gets the lock after the dead client's session expired");
	note(sprintf('%s %s -> zk_lock handoff: %.1f ms (session timeout %d s)',
			$p->{who}, $how, $ms, $session_s));
	cmp_ok($ms, '>', 1500, 'not before the session could expire');
	cmp_ok($ms, '<', 9000, 'but soon after the session timeout');
	$p->{h1}->query_safe(qq{SELECT zk_unlock('$path')});
	return;
}

# peer_close(PEER, PATHS): the peer's client closes, h1 and h2 quit, and no
# queue node is left on any of the zklock paths in the array PATHS.
sub peer_close
{
	my ($p, $paths) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	is(client_ask($p->{c}, 'close'), 'closed', "the $p->{who} client closes");
	$p->{h1}->quit;
	$p->{h2}->quit;
	ok(wait_queues_empty($p->{pg}, $paths, 10, 'empty queues'),
		'no queue node is left');
	return;
}

1;
