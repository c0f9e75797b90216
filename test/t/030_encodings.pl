# Lock paths in a LATIN1 database next to a UTF-8 one.
#
# ZooKeeper stores paths as UTF-8.  A LATIN1 database converts a lock path
# to UTF-8 on the way in, so that it meets a UTF-8 database (or kazoo) on
# the same node, and converts every path, node name and owner text back on
# the way out: in zk_locks, zk_lock_queue, zk_cluster_locks and
# zk_blocking_pids, and in messages (a WARNING, a lock timeout's DETAIL, a
# deadlock report).  What LATIN1 cannot hold is an escape (\uXXXX) in a
# value (the row is shown: another client's node takes no view away) as
# in a message; never bytes of the wrong encoding, never an error.  The
# owner data written into nodes is UTF-8.  A character that does not print
# is escaped in a message even where LATIN1 holds it (U+0085 as \x85).
#
# Every session uses client_encoding UTF8, so this file's strings (UTF-8)
# compare with psql's output byte for byte.
use strict;
use warnings;

use lib 'lib';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use ZkTest;

my $zk = zk_standalone();
my $node = pg_with_zklock('enc', $zk, "deadlock_timeout = '200ms'\n");
$node->safe_psql('postgres',
	q{CREATE DATABASE lat1 ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0});
$node->safe_psql('lat1', 'CREATE EXTENSION zklock');
is($node->safe_psql('lat1', 'SHOW server_encoding'), 'LATIN1',
	'the second database is LATIN1');
is($node->safe_psql('postgres', 'SHOW server_encoding'), 'UTF8',
	'the first one is UTF8');

sub session
{
	my ($db) = @_;
	my $s = verbose_session($node, $db);
	$s->query_safe("SET client_encoding = 'UTF8'");
	return $s;
}

# waits(SESSION, PATH, MARK, NAME): SESSION asks for the exclusive lock on
# PATH in the background (bg_finish with MARK collects it); test NAME: its
# node is second in the queue, behind the holder
sub waits
{
	my ($s, $path, $mark, $name) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	bg_begin($s, "SELECT zk_lock('$path') > 0 AS got", $mark);
	return ok(wait_for(sub { queue_len($node, $path) == 2 }, 10, "$mark waits"),
		$name);
}

# reports_wait(ERR, PATH, NAME): test NAME: the deadlock report ERR shows a
# member waiting for the exclusive lock PATH, as the report writes it
sub reports_wait
{
	my ($err, $path, $name) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	return like($err,
		qr{waits for exclusive ZooKeeper lock "\Q$path\E"; blocked by process},
		$name);
}

my $lat = session('lat1');
my $utf = session('postgres');

# --- a path LATIN1 can hold, taken in the LATIN1 database
my $token = $lat->query_safe(q{SELECT zk_lock('/enc/café')});
like($token, qr/^\d+$/, 'LATIN1: zk_lock on /enc/café');
is($lat->query_safe(q{SELECT path FROM zk_locks}), '/enc/café',
	'LATIN1: zk_locks shows the path as given');
is($lat->query_safe(q{SELECT path = '/enc/caf' || chr(233) FROM zk_locks}),
	't', 'LATIN1: and it is the LATIN1 text, not UTF-8 bytes read as LATIN1');
like($lat->query_safe(q{SELECT znode FROM zk_locks}), qr{^/zklock/enc/café/},
	'LATIN1: zk_locks shows the node under the path');
is($lat->query_safe(q{SELECT count(*) FROM zk_lock_queue('/enc/café') q, zk_locks l WHERE l.znode = '/zklock/enc/café/' || q.znode}),
	'1', 'LATIN1: zk_lock_queue finds the queue of the path, with the node zk_locks names');
is($lat->query_safe(q{SELECT path || ' ' || database FROM zk_cluster_locks('/enc')}),
	'/enc/café lat1', 'LATIN1: zk_cluster_locks shows the path and owner right');

# --- the UTF-8 database meets it on the same node, and so does kazoo
is($utf->query_safe(q{SELECT zk_try_lock('/enc/café')}), 'f',
	'UTF8: the same path is held (one node for both encodings)');
is($utf->query_safe(q{SELECT path || ' ' || database || ' ' || fencing_token FROM zk_cluster_locks('/enc/café')}),
	"/enc/café lat1 $token", 'UTF8: zk_cluster_locks shows the LATIN1 holder');
my $kids = kazoo_run($zk,
	q{import json
for k in c.get_children('/zklock/enc/caf\u00e9'):
    d, _ = c.get('/zklock/enc/caf\u00e9/' + k)
    print(json.loads(d.decode('utf-8'))['database'])});
is($kids, 'lat1', 'kazoo: the node is at the UTF-8 path, its data UTF-8 JSON');

# --- messages in the LATIN1 database
{
	my ($out, $err) = bg_query($lat, q{SELECT zk_unlock('/enc/naïve')});
	like($err,
		qr{WARNING:  01000: you don't own a session lock on ZooKeeper path "/enc/naïve"},
		'LATIN1: the WARNING for a lock not held names the path right');

	$utf->query_safe(q{SELECT zk_lock('/enc/über')});
	($out, $err) = bg_query($lat,
		q{SET lock_timeout = '200ms'; SELECT zk_lock('/enc/über'); RESET lock_timeout});
	like($err, qr{ERROR:  55P03: canceling statement due to lock timeout\nDETAIL:  Waiting for ZooKeeper lock "/enc/über"\.},
		'LATIN1: a lock timeout names the path right');
	$utf->query_safe(q{SELECT zk_unlock('/enc/über')});
}

# --- a path LATIN1 cannot hold, from a session of the UTF-8 database: the
# LATIN1 database's views show the row, what LATIN1 cannot hold escaped as
# \uXXXX, beside the other rows (one stranger's node does not take the view
# away)
$utf->query_safe(q{SELECT zk_lock('/enc/日本')});
$utf->query_safe(q{SELECT zk_lock('/enc/ça')});
{
	my ($out, $err) = bg_query($lat,
		q{SELECT path || ' ' || holders FROM zk_cluster_locks('/enc') ORDER BY path});
	is($err, '', 'LATIN1: zk_cluster_locks over a path LATIN1 cannot hold raises nothing');
	is($out, "/enc/\\u65E5\\u672C 1\n/enc/café 1\n/enc/ça 1",
		'LATIN1: its row shows the path escaped, beside the other rows');
	($out, $err) = bg_query($lat, q{SELECT count(*) FROM zk_cluster_locks('/enc') WHERE path = '/enc/ça'});
	is($out . $err, '1', 'LATIN1: and the other row is right');

	($out, $err) = bg_query($lat, q{SELECT zk_lock('/enc/日本')});
	like($err, qr{ERROR:  22P05: character with byte sequence 0xe6 0x97 0xa5 in encoding "UTF8" has no equivalent in encoding "LATIN1"},
		'LATIN1: such a path cannot even be given (PostgreSQL refuses it on input)');
	is($utf->query_safe(q{SELECT path FROM zk_locks WHERE path <> '/enc/ça'}), "/enc/日本",
		'UTF8: its own view shows it');
}
$utf->query_safe(q{SELECT zk_unlock('/enc/日本'), zk_unlock('/enc/ça')});

# --- characters that do not print, which LATIN1 can hold, are escaped in
# a message all the same: \xNN below U+0100
{
	my ($out, $err) = bg_query($lat, q{SELECT zk_lock(E'/enc/c1\u0085')});
	error_is($err, '22023', qr{invalid ZooKeeper lock path "/enc/c1\\x85"},
		'LATIN1: a C1 control in a refused path is written \x85');
	($out, $err) = bg_query($lat, q{SELECT zk_unlock(E'/enc/soft\u00ADhyphen')});
	warning_is($err, '01000',
		qr{you don't own a session lock on ZooKeeper path "/enc/soft\\xADhyphen"},
		'LATIN1: a soft hyphen in a path a WARNING names is written \xAD');
}

# --- zk_blocking_pids from the LATIN1 database
{
	my $waiter = session('lat1');
	my $pid = $waiter->query_safe('SELECT pg_backend_pid()');
	$utf->query_safe(q{SELECT zk_lock('/enc/façade')});
	bg_begin($waiter, q{SELECT zk_lock('/enc/façade') > 0 AS got}, 'w_done');
	ok(wait_for(sub { $lat->query_safe("SELECT count(*) FROM zk_blocking_pids($pid)") eq '1' },
			10, 'the waiter blocked'),
		'LATIN1: zk_blocking_pids sees the waiter');
	is($lat->query_safe("SELECT path FROM zk_blocking_pids($pid)"),
		'/enc/façade', 'LATIN1: its path is right');
	$utf->query_safe(q{SELECT zk_unlock('/enc/façade')});
	my ($out) = bg_finish($waiter, 'w_done');
	like($out, qr/\bt\b/, 'LATIN1: the waiter got it when released');
	$waiter->quit;
}

is($lat->query_safe(q{SELECT zk_unlock('/enc/café')}), 't', 'LATIN1: unlock');

# --- deadlock reports across the two encodings: the victim (the member
# that waited last) reads the others' wait records, UTF-8 JSON
{
	# 2-cycle, the UTF-8 member is the victim
	$lat->query_safe(q{SELECT zk_lock('/dl/é1')});
	$utf->query_safe(q{SELECT zk_lock('/dl/ö2')});
	waits($lat, '/dl/ö2', 'dl_lat', '2-cycle: the LATIN1 member waits');
	my (undef, $err) = bg_query($utf, q{SELECT zk_lock('/dl/é1')});
	like($err, qr/ERROR:  40P01: deadlock detected/, 'UTF8 victim: 40P01');
	reports_wait($err, '/dl/ö2',
		'UTF8 victim: the LATIN1 member, read from its record, waits for "/dl/ö2"');
	reports_wait($err, '/dl/é1',
		'UTF8 victim: and itself for "/dl/é1"');
	$utf->query_safe('SELECT zk_unlock_all()');
	bg_finish($lat, 'dl_lat');
	$lat->query_safe('SELECT zk_unlock_all()');

	# 3-cycle, the LATIN1 member is the victim, and one of the others
	# waits for a path LATIN1 cannot hold: the report escapes it
	my $utf2 = session('postgres');
	$lat->query_safe(q{SELECT zk_lock('/dl/é1')});
	$utf->query_safe(q{SELECT zk_lock('/dl/日2')});
	$utf2->query_safe(q{SELECT zk_lock('/dl/ö3')});
	waits($utf2, '/dl/日2', 'dl_utf2', '3-cycle: the second UTF-8 member waits');
	waits($utf, '/dl/é1', 'dl_utf', '3-cycle: the first UTF-8 member waits');
	(undef, $err) = bg_query($lat, q{SELECT zk_lock('/dl/ö3')});
	like($err, qr/ERROR:  40P01: deadlock detected/, 'LATIN1 victim: 40P01');
	reports_wait($err, '/dl/\u65E52',
		'LATIN1 victim: a path LATIN1 cannot hold is escaped in the report');
	reports_wait($err, '/dl/é1',
		'LATIN1 victim: the others are shown right ("/dl/é1")');
	reports_wait($err, '/dl/ö3',
		'LATIN1 victim: and its own wait ("/dl/ö3")');
	$lat->query_safe('SELECT zk_unlock_all()');
	bg_finish($utf, 'dl_utf');
	$utf->query_safe('SELECT zk_unlock_all()');
	bg_finish($utf2, 'dl_utf2');
	$utf2->query_safe('SELECT zk_unlock_all()');
	$utf2->quit;
}

ok(wait_for(sub { $lat->query_safe(q{SELECT count(*) FROM zk_cluster_locks('/')}) eq '0' }, 10, 'empty'),
	'nothing is left');

$lat->quit;
$utf->quit;
done_testing();
