# The SQL examples of README.md and doc/reference.md, run against a live
# install as a new user would run them.
#
# Every ```sql block of the two files runs in a new psql session: the
# README's on a database made as test/demo.sh makes zklock_demo (the
# extension and nothing else: the tour runs as printed on the demo), the
# reference's on a scratch database holding the objects its examples
# assume (the tables, procedures, role and database its introduction
# names).  A
# block must run without an ERROR, except for the SQLSTATEs listed for it
# below, each of which must then occur: the errors the text itself
# describes, and a statement_timeout (57014) where the text says the
# statement waits (for other servers, or for a lock held by a line marked
# "(in another backend)", which runs in a second session that holds the
# lock meanwhile).  A block whose line says it runs "in each of three
# sessions at once" (a double barrier's members) runs so, each session
# without an error.  The cluster has the demo's configuration
# (test/demo-postgresql.conf, which test/demo.sh installs), so that the
# README's tour runs as on the demo.  An example that changes, or a new
# one, is run too; one whose expectations below no longer match fails
# until this file and the text agree.
use strict;
use warnings;

use lib 'lib';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use ZkTest;

my $root = repo_root();

my $zk = zk_standalone();
# the demo's configuration (test/demo.sh installs the same file into the
# cluster it makes), so that the README's tour runs as on the demo
my $node = pg_with_zklock('docs', $zk,
	slurp_file("$root/test/demo-postgresql.conf"));
like($node->safe_psql('postgres', 'SHOW shared_preload_libraries'), qr/\bzklock\b/,
	"the cluster runs with the demo's settings (zklock preloaded)");

# the objects the examples assume (see the introduction of doc/reference.md)
$node->safe_psql('postgres', 'CREATE DATABASE payments');
$node->safe_psql('postgres', 'CREATE DATABASE scratch');
# where an example creates the extension itself
$node->safe_psql('postgres', 'CREATE DATABASE fresh');
# the README's tour: as test/demo.sh makes zklock_demo
$node->safe_psql('postgres', 'CREATE DATABASE tour');
$node->safe_psql('tour', 'CREATE EXTENSION IF NOT EXISTS zklock');
$node->safe_psql('scratch', q{
CREATE EXTENSION zklock;
CREATE ROLE batch;
CREATE TABLE accounts (id int PRIMARY KEY, balance numeric NOT NULL);
INSERT INTO accounts VALUES (17, 1000), (42, 1000);
CREATE TABLE job_runs (job text PRIMARY KEY, lease bigint);
CREATE PROCEDURE nightly_job() LANGUAGE sql AS $$ SELECT 1 $$;
CREATE PROCEDURE import_one_batch(i int, token bigint) LANGUAGE sql AS $$ SELECT 1 $$;
});

# Expected SQLSTATEs per block, keyed by a line that only that block has.
my %expect = (
	# the second line runs "(in another backend)" and waits for the reader
	q{SELECT zk_lock('/config/pricing');    -- (in another backend) waits for every reader} =>
	  [ '57014' ],
	# no lease 4711 holds the lock: the text says so (55000)
	q{SELECT zk_lease_renew('/jobs/nightly', 4711);} => [ '55000' ],
	# three servers start together: alone, it waits (both forms; the
	# second would give up after 30 s, statement_timeout ends it first)
	q{SELECT zk_double_barrier_enter('/etl/run', 3);           -- three servers start together} =>
	  [ '57014', '57014' ],
);

# A block marked so runs, as its text says, in three sessions at once; each
# must run it without an error.
my $three_sessions = '-- in each of three sessions at once';

# the ```sql blocks of a file: [ [first line number, text], ... ]
sub sql_blocks
{
	my ($file) = @_;
	open(my $fh, '<', $file) or die "$file: $!";
	my (@blocks, $cur, $start);
	my $n = 0;
	while (my $line = <$fh>)
	{
		$n++;
		if (!defined $cur && $line =~ /^```sql\s*$/)
		{
			$cur = '';
			$start = $n + 1;
		}
		elsif (defined $cur && $line =~ /^```\s*$/)
		{
			push @blocks, [ $start, $cur ];
			undef $cur;
		}
		elsif (defined $cur)
		{
			$cur .= $line;
		}
	}
	close $fh;
	return @blocks;
}

# the SQLSTATEs of the ERRORs in psql's verbose stderr
sub error_codes
{
	my ($err) = @_;
	return sort(($err =~ /^(?:psql:[^\n]*?)?ERROR:  ([0-9A-Z]{5}):/mg));
}

my %used;
my $nblocks = 0;
for my $file ('README.md', 'doc/reference.md')
{
	for my $b (sql_blocks("$root/$file"))
	{
		my ($line, $sql) = @$b;
		$nblocks++;
		my ($key) = grep { index($sql, $_) >= 0 } keys %expect;
		$used{$key} = 1 if defined $key;
		my @want = defined $key ? sort @{ $expect{$key} } : ();

		# a line "(in another backend)" runs in a second session, which
		# holds what it takes while the rest of the block runs
		my @other = grep { /\(in another backend\)/ } split /\n/, $sql;
		$sql = join("\n", grep { !/\(in another backend\)/ } split /\n/, $sql) . "\n";

		my $pre = "\\set VERBOSITY verbose\nSET statement_timeout = '3s';\n";
		my $db =
		    $sql =~ /CREATE EXTENSION zklock/ ? 'fresh'
		  : $file eq 'README.md' ? 'tour'
		  : 'scratch';
		my ($out, $err) = ('', '');
		if (index($sql, $three_sessions) >= 0)
		{
			# the three wait for each other: a longer statement_timeout
			# (from a file: the three run at once, none waits to be fed)
			my $file = "$PostgreSQL::Test::Utils::tmp_check/three_sessions.sql";
			open(my $fh, '>', $file) or die "$file: $!";
			print $fh "\\set VERBOSITY verbose\nSET statement_timeout = '30s';\n"
			  . $sql;
			close $fh;
			my @runs;
			for my $i (1 .. 3)
			{
				my $r = { out => '', err => '' };
				$r->{h} = IPC::Run::start(
					[ 'psql', '-X', '-q', '-d', $node->connstr($db), '-f', $file ],
					'<', \undef, '>', \$r->{out}, '2>', \$r->{err});
				push @runs, $r;
			}
			for my $r (@runs)
			{
				$r->{h}->finish;
				$err .= $r->{err};
			}
			$used{$three_sessions} = 1;
		}
		elsif (@other)
		{
			# this block's statements first (they take the lock), then the
			# other backend's, which must wait while they hold it
			$sql .= "SET statement_timeout = '10s';\nSELECT pg_sleep(4);\n";
			my $h = IPC::Run::start(
				[ 'psql', '-X', '-q', '-d', $node->connstr($db), '-f', '-' ],
				'<', \($pre . $sql), '>', \$out, '2>', \$err);
			# its statements have run once it sleeps
			wait_for(
				sub {
					$h->pump_nb;
					$node->safe_psql('postgres',
						q{SELECT count(*) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(4);'})
					  eq '1';
				},
				10, 'the block holds what it took');
			my ($o2, $e2) = ('', '');
			IPC::Run::run(
				[ 'psql', '-X', '-q', '-d', $node->connstr($db), '-f', '-' ],
				'<', \($pre . join("\n", @other) . "\n"), '>', \$o2, '2>', \$e2);
			$h->finish;
			$err .= $e2;
		}
		else
		{
			IPC::Run::run(
				[ 'psql', '-X', '-q', '-d', $node->connstr($db), '-f', '-' ],
				'<', \($pre . $sql), '>', \$out, '2>', \$err);
		}
		$node->safe_psql('fresh', 'DROP EXTENSION IF EXISTS zklock');
		# a lease outlives the session that took it: release what an
		# example left (a lock's or barrier's row gives false, a WARNING)
		$node->psql('scratch',
			'SELECT zk_lease_unlock(path, fencing_token) FROM zk_cluster_locks() WHERE holders > 0');

		my @got = error_codes($err);
		is("@got", "@want", "$file:$line runs"
			  . (@want ? " with the errors its text describes (@want)" : ' without an error'))
		  or diag("SQL:\n$sql\nstderr:\n$err");
	}
}
cmp_ok($nblocks, '>=', 40, "the files have their examples ($nblocks blocks)");
for my $key (sort(keys %expect), $three_sessions)
{
	ok($used{$key}, "the example \"$key\" still exists");
}

# nothing the examples took is left (leases included), but the barrier
# the barrier examples set and removed
ok(wait_for(sub { $node->safe_psql('scratch', q{SELECT count(*) FROM zk_cluster_locks()}) eq '0' },
		10, 'no locks left'),
	'the examples leave no lock behind');

done_testing();
