# The owner description and the name of every queue node a backend creates
# stay right when a backend creates many: the owner follows SET
# application_name, SET ROLE, RESET ROLE, a role renamed by another session
# and the mode and scope of each lock; node names carry a canonical
# version 8 UUID whose last byte is the shape of the wait (01: one lock,
# 02: a set of two, whose nodes share it), that no two attempts share, in
# one backend or across
# backends.
use strict;
use warnings;

use lib 'lib';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use ZkTest;

my $zk = zk_standalone();
my $node = pg_with_zklock('owner', $zk);
my $super = $node->safe_psql('postgres', 'SELECT current_user');
$node->safe_psql('postgres', q{CREATE ROLE zk_owner_a LOGIN});

# owner(PATH): "user|application_name|mode|scope" of PATH's one node
sub owner
{
	my ($path) = @_;
	return queue_rows($node, $path,
		q{format('%s|%s|%s|%s', user_name, application_name,
		         data::json->>'mode', data::json->>'scope')});
}

my $s = $node->background_psql('postgres');
$s->query_safe(q{SET application_name = 'first'});
$s->query_safe(q{SELECT zk_lock('/owner/1')});
is(owner('/owner/1'), "$super|first|exclusive|session", 'the first node');

$s->query_safe(q{SET application_name = 'second'});
$s->query_safe(q{SELECT zk_lock('/owner/2')});
is(owner('/owner/2'), "$super|second|exclusive|session",
	'a new application_name is in the next node');

$s->query_safe(q{SELECT zk_rlock('/owner/3')});
$s->query_safe(q{BEGIN});
$s->query_safe(q{SELECT zk_xact_lock('/owner/4')});
is(owner('/owner/3'), "$super|second|shared|session", 'a shared lock');
is(owner('/owner/4'), "$super|second|exclusive|transaction",
	'a transaction lock');
$s->query_safe(q{COMMIT});

$s->query_safe(q{SET ROLE zk_owner_a});
$s->query_safe(q{SELECT zk_lock('/owner/5')});
is(owner('/owner/5'), "zk_owner_a|second|exclusive|session",
	'SET ROLE: the role is the owner');

# another session renames the role while this one has it set
$node->safe_psql('postgres', q{ALTER ROLE zk_owner_a RENAME TO zk_owner_b});
$s->query_safe(q{SELECT zk_lock('/owner/6')});
is(owner('/owner/6'), "zk_owner_b|second|exclusive|session",
	'a renamed role: its new name');

$s->query_safe(q{RESET ROLE});
$s->query_safe(q{SELECT zk_lock('/owner/7')});
is(owner('/owner/7'), "$super|second|exclusive|session",
	'RESET ROLE: the session user again');

# node names: a v4 UUID each, all different, also from another backend
my $t = $node->background_psql('postgres');
for my $i (1 .. 20)
{
	$t->query_safe("SELECT zk_rlock('/owner/n/$i')");
	$s->query_safe("SELECT zk_rlock('/owner/n/$i')") if $i <= 5;
}
my $names = $node->safe_psql('postgres',
	q{SELECT string_agg(znode, ',') FROM generate_series(1, 20) AS i,
	  LATERAL zk_lock_queue('/owner/n/' || i)});
my @names = split /,/, $names;
is(scalar @names, 25, 'all nodes listed');
is(scalar(grep { /^_c_[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{10}01-__READ__[0-9]{10}$/ } @names),
	25, 'every name carries a canonical version 8 UUID, its last byte the shape of a one-lock wait');
my %prefixes = map { substr($_, 0, 40) => 1 } @names;
is(scalar keys %prefixes, 25, 'no two attempts share a UUID');

# a set of two locks taken at once: one prefix for both nodes, shape 02
$t->query_safe(q{SELECT zk_lock(ARRAY['/owner/set/a', '/owner/set/b'])});
my @set = split /,/,
  $node->safe_psql('postgres',
	q{SELECT string_agg(znode, ',' ORDER BY p) FROM unnest(ARRAY['/owner/set/a', '/owner/set/b']) AS p,
	  LATERAL zk_lock_queue(p)});
is(scalar(grep { /^_c_[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{10}02-__WRIT__[0-9]{10}$/ } @set),
	2, "a set of two locks: both names carry the shape 02");
is(substr($set[0], 0, 40), substr($set[1] // '', 0, 40), 'and one prefix');

$s->quit;
$t->quit;
done_testing();
