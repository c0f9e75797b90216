# Queue order across the wrap of ZooKeeper's sequence counter.
#
# The counter of a parent is a signed 32-bit number: after 2147483647 the
# next child gets -2147483648.  A test cannot drive a server's counter
# there, so the queue is built from nodes with those names, created
# explicitly (kazoo), and read through zk_lock_queue, which orders and
# grants them with zklock's own rule: the newer, negative numbers come
# after the older, positive ones, and readers and writers are granted in
# that order.
use strict;
use warnings;

use lib 'lib';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use ZkTest;

my $zk = zk_standalone();
my $pg = pg_with_zklock('a', $zk);

my $lock = '/zklock/wrap/x';
my @nodes = (
	[ 'aaaaaaaa', '__WRIT__', '2147483646' ],
	[ 'bbbbbbbb', '__READ__', '2147483647' ],
	[ 'cccccccc', '__READ__', '-2147483648' ],
	[ 'dddddddd', '__WRIT__', '-2147483647' ],
	[ 'eeeeeeee', '__READ__', '-2147483646' ],);
my %name;
for my $n (@nodes)
{
	my ($tag, $marker, $seq) = @$n;
	$name{$seq} = "_c_$tag-0000-4000-8000-000000000000-$marker$seq";
}

# created in an order that is not the queue order
kazoo_run($zk,
	"c.ensure_path('$lock')\n"
	  . join('', map { "c.create('$lock/$name{$_}', b'')\n" } reverse sort keys %name));

sub queue
{
	return $pg->safe_psql('postgres',
		q{SELECT string_agg(format('%s:%s:%s', substring(znode from '(-?[0-9]+)$'), mode,
		                           CASE WHEN granted THEN 'granted' ELSE 'waits' END),
		                    ',' ORDER BY position)
		  FROM zk_lock_queue('/wrap/x')});
}

is( queue(),
	'2147483646:exclusive:granted,2147483647:shared:waits,-2147483648:shared:waits,'
	  . '-2147483647:exclusive:waits,-2147483646:shared:waits',
	'the wrapped (negative) numbers queue after the positive ones');

kazoo_run($zk, "c.delete('$lock/$name{2147483646}')");
is( queue(),
	'2147483647:shared:granted,-2147483648:shared:granted,'
	  . '-2147483647:exclusive:waits,-2147483646:shared:waits',
	'the writer gone, both readers across the wrap are granted; the writer after them waits');

kazoo_run($zk,
	"c.delete('$lock/$name{2147483647}')\nc.delete('$lock/$name{-2147483648}')");
is( queue(),
	'-2147483647:exclusive:granted,-2147483646:shared:waits',
	'then the writer, and the reader behind it waits');

# far from the wrap the order is the plain numeric one, and a queue that
# only wrapped long ago sorts as negative numbers do
kazoo_run($zk,
	"c.delete('$lock/$name{-2147483647}')\nc.delete('$lock/$name{-2147483646}')\n"
	  . "c.create('$lock/_c_ffffffff-0000-4000-8000-000000000000-__WRIT__-0000000012', b'')\n"
	  . "c.create('$lock/_c_99999999-0000-4000-8000-000000000000-__WRIT__-0000000009', b'')\n"
	  . "c.create('$lock/_c_88888888-0000-4000-8000-000000000000-__WRIT__0000000003', b'')\n");
is( queue(),
	'-0000000012:exclusive:granted,-0000000009:exclusive:waits,0000000003:exclusive:waits',
	'numbers on both sides of zero, far from the wrap, keep their numeric order');

kazoo_run($zk, "c.delete('$lock', recursive=True)");
$pg->stop;
done_testing();
