# Upgrades: every released version of the extension, updated with
# ALTER EXTENSION zklock UPDATE, must end up as a fresh install of the
# newest version, and locks held across the update stay held.
#
# - For each older version (1.0, 1.1, 1.2, 1.3, 1.4): a database with that version, a
#   session lock and a transaction lock taken in it, then ALTER EXTENSION
#   UPDATE in the same session (inside the lock's transaction): the locks
#   are still held (zk_locks, and another backend's try fails), the new
#   version's functions work, and the catalog objects (members, function
#   signatures, properties, bodies, privileges, comments, view
#   definitions) are exactly those of a fresh install of the default
#   version in another database.
# - Step by step (1.0 -> 1.1 -> 1.2 -> 1.3 -> 1.4 -> 1.5) gives the same as one step.
# - An install in another schema than public (which CREATE EXTENSION no
#   longer makes: the control file names public) is updated in place.
use strict;
use warnings;

use lib 'lib';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use ZkTest;

my $zk = zk_standalone();
my $node = pg_with_zklock('a', $zk);

my $default = $node->safe_psql('postgres',
	q{SELECT default_version FROM pg_available_extensions WHERE name = 'zklock'});
my @older = grep { $_ ne $default } split /\n/,
  $node->safe_psql('postgres',
	q{SELECT version FROM pg_available_extension_versions
	  WHERE name = 'zklock' ORDER BY string_to_array(version, '.')::int[]});
ok(@older >= 2, "older versions are installable: @older (default $default)");

# everything of the extension a user or a dump can see, one line each
my $catalog_sql = q{
WITH ext AS (SELECT oid FROM pg_extension WHERE extname = 'zklock'),
members AS (
	SELECT classid, objid, objsubid FROM pg_depend
	WHERE refclassid = 'pg_extension'::regclass
	  AND refobjid = (SELECT oid FROM ext) AND deptype = 'e')
SELECT line FROM (
	SELECT 'member ' || pg_describe_object(classid, objid, objsubid) AS line
	FROM members
	UNION ALL
	SELECT format('function %s(%s) returns %s vol=%s strict=%s parallel=%s secdef=%s src=%s bin=%s acl=%s comment=%s',
		p.proname, pg_get_function_arguments(p.oid), pg_get_function_result(p.oid),
		p.provolatile, p.proisstrict, p.proparallel, p.prosecdef, p.prosrc,
		p.probin, p.proacl, obj_description(p.oid, 'pg_proc'))
	FROM pg_proc p JOIN members m ON m.classid = 'pg_proc'::regclass AND m.objid = p.oid
	UNION ALL
	SELECT format('relation %s kind=%s acl=%s comment=%s def=%s', c.relname, c.relkind,
		c.relacl, obj_description(c.oid, 'pg_class'),
		CASE WHEN c.relkind = 'v' THEN pg_get_viewdef(c.oid) END)
	FROM pg_class c JOIN members m ON m.classid = 'pg_class'::regclass AND m.objid = c.oid
	UNION ALL
	SELECT format('column %s.%s %s', c.relname, a.attname, format_type(a.atttypid, a.atttypmod))
	FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
	JOIN members m ON m.classid = 'pg_class'::regclass AND m.objid = c.oid
	WHERE a.attnum > 0 AND NOT a.attisdropped
	UNION ALL
	SELECT 'version ' || extversion FROM pg_extension WHERE extname = 'zklock'
) s ORDER BY line};

$node->safe_psql('postgres', 'CREATE DATABASE fresh');
$node->safe_psql('fresh', 'CREATE EXTENSION zklock');
my $fresh = $node->safe_psql('fresh', $catalog_sql);
like($fresh, qr/^version \Q$default\E$/m, "the fresh install is version $default");
cmp_ok(scalar(split /\n/, $fresh), '>', 40, 'the catalog listing is not empty');

for my $from (@older)
{
	(my $db = "upg_$from") =~ s/\./_/g;
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	my $s = $node->background_psql($db, on_error_stop => 0);
	$s->query_safe("CREATE EXTENSION zklock VERSION '$from'");
	is($s->query_safe(q{SELECT extversion FROM pg_extension WHERE extname = 'zklock'}),
		$from, "$from installed");

	my $token = $s->query_safe("SELECT zk_lock('/upg/$from/session')");
	$s->query_safe('BEGIN');
	$s->query_safe("SELECT zk_xact_lock('/upg/$from/xact')");
	$s->query_safe('ALTER EXTENSION zklock UPDATE');
	is($s->query_safe(q{SELECT extversion FROM pg_extension WHERE extname = 'zklock'}),
		$default, "$from updated to $default inside the lock's transaction");
	is($s->query_safe(
			"SELECT string_agg(path || ':' || scope, ',' ORDER BY path) FROM zk_locks"),
		"/upg/$from/session:session,/upg/$from/xact:transaction",
		"$from: both locks still held after the update");
	is($node->safe_psql($db,
			"SELECT zk_try_lock('/upg/$from/session'), zk_try_lock('/upg/$from/xact')"),
		'f|f', "$from: another backend cannot take them");
	$s->query_safe('COMMIT');
	is($node->safe_psql($db, "SELECT zk_try_lock('/upg/$from/xact')"),
		't', "$from: the transaction lock went at COMMIT");

	# the newest version's functions, in the updated database
	my $lease = $s->query_safe("SELECT zk_lease_lock('/upg/$from/lease', '1 min')");
	is($s->query_safe("SELECT zk_lease_unlock('/upg/$from/lease', $lease)"), 't',
		"$from: a lease (version 1.2) works after the update");
	is($s->query_safe("SELECT zk_barrier_set('/upg/$from/b'), zk_barrier_remove('/upg/$from/b')"),
		"t|t", "$from: a barrier (version 1.2) works after the update");
	is($s->query_safe(q{SELECT count(*) >= 1 FROM zk_cluster_locks WHERE path LIKE '/upg/%'}),
		't', "$from: zk_cluster_locks (version 1.1) works after the update");
	is($s->query_safe("SELECT zk_unlock('/upg/$from/session')"), 't',
		"$from: the session lock taken before the update is released after it");
	ok($token > 0, "$from: its token was positive");
	$s->quit;

	my $upgraded = $node->safe_psql($db, $catalog_sql);
	is($upgraded, $fresh, "$from -> $default: catalog objects equal a fresh install");
	if ($upgraded ne $fresh)
	{
		my %f = map { $_ => 1 } split /\n/, $fresh;
		my %u = map { $_ => 1 } split /\n/, $upgraded;
		diag("only after the update: $_") for grep { !$f{$_} } sort keys %u;
		diag("only in a fresh install: $_") for grep { !$u{$_} } sort keys %f;
	}
}

# step by step
{
	$node->safe_psql('postgres', 'CREATE DATABASE steps');
	$node->safe_psql('steps', "CREATE EXTENSION zklock VERSION '$older[0]'");
	for my $to (@older[1 .. $#older], $default)
	{
		$node->safe_psql('steps', "ALTER EXTENSION zklock UPDATE TO '$to'");
	}
	is($node->safe_psql('steps', $catalog_sql), $fresh,
		'updated one version at a time: the same as a fresh install');
}

# an install in another schema, as CREATE EXTENSION could make before the
# control file fixed the schema public: updated in place, it stays there
{
	$node->safe_psql('postgres', 'CREATE DATABASE elsewhere');
	$node->safe_psql('elsewhere', qq{
		CREATE SCHEMA tools;
		CREATE EXTENSION zklock VERSION '$older[0]';
		UPDATE pg_extension SET extrelocatable = true WHERE extname = 'zklock';
		ALTER EXTENSION zklock SET SCHEMA tools;
		UPDATE pg_extension SET extrelocatable = false WHERE extname = 'zklock';
	});
	is($node->safe_psql('elsewhere',
			q{SELECT extnamespace::regnamespace FROM pg_extension WHERE extname = 'zklock'}),
		'tools', "$older[0] installed in the schema tools");
	my ($rc, $out, $err) = $node->psql('elsewhere', 'ALTER EXTENSION zklock UPDATE');
	is($rc . $err, '0', "ALTER EXTENSION zklock UPDATE of $older[0] in the schema tools");
	is($node->safe_psql('elsewhere',
			q{SELECT extnamespace::regnamespace || ' ' || extversion FROM pg_extension WHERE extname = 'zklock'}),
		"tools $default", "it is at $default, still in tools");
	is($node->safe_psql('elsewhere', q{SELECT tools.zk_try_lock('/upg/elsewhere')}),
		't', 'and its functions work there');
}

$node->stop;
done_testing();
