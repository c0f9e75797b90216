# A lock queue whose list of children is bigger than one ZooKeeper packet
# (jute.maxbuffer, 0xfffff bytes by default).
#
# Another client (kazoo, in transactions of 1000 creates) fills the queue
# of one lock path with 20 000 Curator-style write nodes
# (_c_<uuid>-__WRIT__<seq>, 58 bytes a name; persistent, so that they
# outlive the script: zklock reads them as other clients' leases, and
# zk_lock_queue warns about their data): a getChildren of the path is then
# about 1.24 MB.  ZooKeeper 3.8 sends such an answer (it checks the
# length of what it reads, never of what it sends; mntr's
# zk_max_client_response_size shows it went out) and the C client takes
# any length (a Java client with the default jute.maxbuffer drops the
# connection instead).  So zklock must simply work on such a queue:
# - zk_try_lock returns false (the first foreign node holds the lock),
#   with and without wait_ms; zk_lock ends with 57014 on
#   statement_timeout and 55P03 on lock_timeout, and none of them leaves
#   a node behind;
# - zk_lock_queue lists the whole queue and zk_cluster_locks counts it
#   (one holder, the rest waiters);
# - the backend's ZooKeeper session is never lost meanwhile (same session
#   id, connected since before the first big read): no reconnect loop;
# - a backend waiting in zk_lock is not granted while one foreign node is
#   still ahead of it, and is granted once the queue is drained;
# - the backend and another one on the same ZooKeeper server go on taking
#   other locks;
# - a ZooKeeper server started with a larger -Djute.maxbuffer changes
#   nothing for zklock (the limit bounds what a server reads, and zklock's
#   requests stay far below it).
use strict;
use warnings;

use lib 'lib';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use ZkTest;

my $n = 20_000;
my $path = '/big/q';
my $znode = "/zklock$path";
my $jute_max = 0xfffff;

# fill(ZK, N): N persistent Curator write nodes in the queue of $path,
# with Curator's data (the client's address), created in transactions of
# 1000; returns the seconds it took
sub fill
{
	my ($zk, $count) = @_;
	my $t0 = time;
	kazoo_run($zk, <<"PY");
import uuid
c.ensure_path('$znode')
left = $count
while left > 0:
    t = c.transaction()
    for i in range(min(left, 1000)):
        t.create('$znode/_c_%s-__WRIT__' % uuid.uuid4(), b'10.0.0.7', sequence=True)
    left -= min(left, 1000)
    t.commit()
PY
	return time - $t0;
}

# drain(ZK, KEEP): delete the nodes fill() created (sequence numbers 0 to
# N - 1: every node after them is another client's) but the last KEEP, in
# transactions of 1000
sub drain
{
	my ($zk, $keep) = @_;
	kazoo_run($zk, <<"PY");
ch = [x for x in c.get_children('$znode') if int(x[-10:]) < $n - $keep]
for i in range(0, len(ch), 1000):
    t = c.transaction()
    for x in ch[i:i + 1000]:
        t.delete('$znode/' + x)
    t.commit()
PY
	return;
}

sub response_max
{
	my ($zk) = @_;
	return zk_mntr($zk->{ports}[0])->{zk_max_client_response_size};
}

# the checks a backend makes on the full queue, against server ZK through
# session S (a backend with no session yet, or one about to open a new
# one); LABEL names the server in the checks.  Returns the seconds
# zk_lock_queue took.
sub full_queue_checks
{
	my ($s, $zk, $label) = @_;
	my ($out, $err);

	($out, $err) = bg_query($s, "SELECT zk_try_lock('$path')");
	is("$out|" . error_code($err), 'f|', "$label: zk_try_lock on the full queue: false, no ERROR");
	cmp_ok(response_max($zk), '>', $jute_max,
		"$label: the getChildren answer went out past jute.maxbuffer");
	($out, $err) = bg_query($s, "SELECT zk_try_lock('$path', 300)");
	is("$out|" . error_code($err), 'f|', "$label: zk_try_lock with wait_ms: false, no ERROR");
	my $t0 = time;
	($out, $err) = bg_query($s,
		"SELECT count(*), count(*) FILTER (WHERE granted), min(position) FILTER (WHERE granted)
		 FROM zk_lock_queue('$path')");
	is($out, "$n|1|1", "$label: zk_lock_queue lists the whole queue, the first node granted");
	return time - $t0;
}

my $zk = zk_standalone();
# a statement that hung on the big queue ends after 20 s (57014), and fails
# its check
my $na = pg_with_zklock('a', $zk, "statement_timeout = '20s'\n");

my $fill_s = fill($zk, $n);
figure(fill_seconds => sprintf('%.1f', $fill_s));

my $s = verbose_session($na);
$s->query_safe("SELECT zk_try_lock('/big/warm'), zk_unlock('/big/warm')");
my $sid = $s->query_safe('SELECT session_id FROM zk_session()');
my $t0 = time;

my $queue_s = full_queue_checks($s, $zk, 'default server');
figure(answer_bytes => response_max($zk), queue_read_seconds => sprintf('%.1f', $queue_s));

my ($out, $err) = bg_query($s, "SET statement_timeout = '2s'; SELECT zk_lock('$path')");
is(error_code($err), '57014', 'zk_lock on the full queue ends with statement_timeout (57014)');
($out, $err) = bg_query($s,
	"RESET statement_timeout; SET lock_timeout = '1s'; SELECT zk_lock('$path')");
is(error_code($err), '55P03', 'and with lock_timeout (55P03)');
$s->query_safe('RESET lock_timeout');
is(queue_len($na, $path), $n, 'no attempt left a node behind');

my $t_cv = time;
is( $na->safe_psql('postgres',
		"SELECT holders || '|' || waiters FROM zk_cluster_locks() WHERE path = '$path'"),
	'1|' . ($n - 1), 'zk_cluster_locks counts one holder and the waiters');
figure(cluster_locks_seconds => sprintf('%.1f', time - $t_cv));

is( $s->query_safe(
		"SELECT session_id || '|' || (connected_for >= interval '"
		  . sprintf('%.3f', time - $t0) . " s') FROM zk_session()"),
	"$sid|true", 'the same ZooKeeper session throughout, never reconnected');

# a waiter behind the whole queue: still waiting with one foreign node
# ahead of it, granted once that one goes
my $w = verbose_session($na);
bg_begin($w, "SELECT zk_lock('$path') > 0 AS granted", 'w_done');
ok(wait_queue_len($na, $path, $n + 1, 30, 'the waiter to join'), 'a backend waits in zk_lock');
drain($zk, 1);
ok(wait_queue_len($na, $path, 2, 30, 'the queue to drain to one foreign node'),
	'the queue drained to one foreign node and the waiter');
is( $na->safe_psql('postgres',
		"SELECT string_agg(granted::text, ',' ORDER BY position) FROM zk_lock_queue('$path')"),
	'true,false', 'the remaining foreign node holds, the waiter waits');
ok(!bg_done($w, 'w_done'), 'the waiter is not granted while a foreign node is ahead');
drain($zk, 0);
my ($wout, $werr) = bg_finish($w, 'w_done');
is("$wout|" . error_code($werr), 't|', 'then it is granted');

# the backends and the server go on
($out, $err) = bg_query($s, "SELECT zk_try_lock('$path')");
is("$out|" . error_code($err), 'f|', 'the first backend sees the lock held by the waiter');
$w->query_safe("SELECT zk_unlock('$path')");
is($s->query_safe("SELECT zk_try_lock('$path'), zk_unlock('$path'), zk_try_lock('/big/other')"),
	't|t|t', 'the first backend takes it, and another path');
is($na->safe_psql('postgres', "SELECT zk_try_lock('/big/another')"),
	't', 'a new backend on the same ZooKeeper server takes a lock');
$w->quit;

# the same against a server whose jute.maxbuffer is raised to 4 MB
my $zk4 = zk_standalone(jvm => '-Djute.maxbuffer=4194304');
fill($zk4, $n);
$s->query_safe("SELECT zk_unlock_all(); SET zklock.hosts = '$zk4->{hosts}'");
full_queue_checks($s, $zk4, 'jute.maxbuffer=4194304');

$s->quit;
done_testing();
