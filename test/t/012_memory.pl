# Memory: one backend, 40000 lock/unlock cycles (ZKLOCK_MEMORY_CYCLES to
# change).  After a warm-up of 10000 cycles, the backend's resident set
# may not grow by more than 2 MB, its zklock memory context not at all
# beyond its block size, and no release may be left pending.  Then 20000
# lease cycles: the same for leases.
use strict;
use warnings;

use lib 'lib';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use ZkTest;

my $cycles = $ENV{ZKLOCK_MEMORY_CYCLES} // 40_000;
my $warmup = 10_000;
my $batch = 10_000;

my $zk = zk_standalone();
my $node = pg_with_zklock('a', $zk);
my $s = $node->background_psql('postgres', timeout => 600);
my $pid = $s->query_safe('SELECT pg_backend_pid()');

sub rss_kb
{
	open my $fh, '<', "/proc/$pid/status" or die "no /proc/$pid: $!";
	while (<$fh>) { return $1 if /^VmRSS:\s+(\d+) kB/; }
	die "no VmRSS";
}

sub zklock_context_bytes
{
	return $s->query_safe(
		q{SELECT coalesce(sum(total_bytes), 0) FROM pg_backend_memory_contexts
		  WHERE name = 'zklock' OR parent = 'zklock'});
}

sub run_cycles
{
	my ($n) = @_;
	return $s->query_safe(
		"SELECT sum(CASE WHEN zk_lock('/memory/x') > 0
		                 THEN zk_unlock('/memory/x')::int END)
		 FROM generate_series(1, $n)");
}

# warm up, with a few other paths and modes so that every structure exists
$s->query_safe(q{SELECT zk_rlock('/memory/r'), zk_xact_lock('/memory/t'), zk_unlock('/memory/r')});
is(run_cycles($warmup), $warmup, "$warmup warm-up cycles");
my $rss0 = rss_kb();
my $ctx0 = zklock_context_bytes();

my $done = $warmup;
my $t0 = time();
while ($done < $cycles)
{
	my $n = $cycles - $done < $batch ? $cycles - $done : $batch;
	is(run_cycles($n), $n, "cycles " . ($done + 1) . " to " . ($done + $n));
	$done += $n;
}
my $secs = time() - $t0;
my $rss1 = rss_kb();
my $ctx1 = zklock_context_bytes();
my $growth = $rss1 - $rss0;
note(sprintf('%d cycles after warm-up in %.1f s (%.0f us per lock+unlock); '
	  . 'RSS %d kB -> %d kB (%+d kB); zklock context %d -> %d bytes',
		$cycles - $warmup, $secs, 1e6 * $secs / ($cycles - $warmup),
		$rss0, $rss1, $growth, $ctx0, $ctx1));
figure(
	cycles => $cycles - $warmup,
	rss_before_kb => $rss0,
	rss_after_kb => $rss1,
	rss_growth_kb => sprintf('%+d', $growth),
	context_before => $ctx0,
	context_after => $ctx1,
	us_per_cycle => sprintf('%.0f', 1e6 * $secs / ($cycles - $warmup)));
cmp_ok($growth, '<', 2048, 'RSS grows by less than 2 MB from cycle 10000 on');
cmp_ok($ctx1, '<=', $ctx0 + 8192, 'the zklock memory context does not grow');
ok( wait_for(
		sub { $s->query_safe('SELECT releases_pending FROM zk_session()') eq '0' },
		10, 'pending releases'),
	'no release is left pending');
is($s->query_safe('SELECT releases_failed FROM zk_session()'), '0', 'none failed');
is($s->query_safe(q{SELECT count(*) FROM zk_lock_queue('/memory/x')}), '0',
	'and no node is left');

# leases: 20000 lease/unlock cycles (each lease taken and released in one
# statement, so one transaction records and forgets 20000 of them) after a
# warm-up; the table of lease names stays as it was
sub run_lease_cycles
{
	my ($n) = @_;
	return $s->query_safe(
		"SELECT sum(zk_lease_unlock('/memory/l', zk_lease_lock('/memory/l', '1 min'))::int)
		 FROM generate_series(1, $n)");
}

sub lease_context_bytes
{
	return $s->query_safe(
		q{SELECT coalesce(sum(total_bytes), 0) FROM pg_backend_memory_contexts
		  WHERE name IN ('zklock', 'zklock lease names') OR parent = 'zklock'});
}

is(run_lease_cycles(2000), 2000, '2000 warm-up lease cycles');
my $lrss0 = rss_kb();
my $lctx0 = lease_context_bytes();
$t0 = time();
for my $i (1 .. 2)
{
	is(run_lease_cycles(10_000), 10_000, "lease cycles batch $i");
}
$secs = time() - $t0;
my $lrss1 = rss_kb();
my $lctx1 = lease_context_bytes();
note(sprintf('20000 lease cycles in %.1f s (%.0f us per lease+unlock); '
	  . 'RSS %d kB -> %d kB (%+d kB); zklock contexts %d -> %d bytes',
		$secs, 1e6 * $secs / 20000, $lrss0, $lrss1, $lrss1 - $lrss0, $lctx0, $lctx1));
cmp_ok($lrss1 - $lrss0, '<', 1024, 'RSS grows by less than 1 MB over 20000 lease cycles');
cmp_ok($lctx1, '<=', $lctx0 + 8192, 'the zklock memory contexts do not grow');
is($s->query_safe(q{SELECT count(*) FROM zk_lock_queue('/memory/l')}), '0',
	'no lease node is left');

$s->quit;
$node->stop;
done_testing();
