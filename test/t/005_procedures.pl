# Coordinating work across database servers with stored procedures, and
# fencing tokens.
#
# import_batches() (doc/reference.md's procedure example) holds a shared session
# lock for the whole run, so that maintenance (the exclusive lock) waits
# for every importer, and takes an exclusive transaction lock per batch,
# committing between batches.  Run with CALL on two servers at once: the
# session lock survives the procedure's COMMITs, each COMMIT releases the
# batch lock, and no two batches overlap in time, whichever server runs
# them.  The fencing tokens of successive batch holders strictly increase
# across both servers.
use strict;
use warnings;

use lib 'lib';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use ZkTest;

my $zk = zk_standalone();
my $na = pg_with_zklock('a', $zk);
my $nb = pg_with_zklock('b', $zk);
my $nbatches = 8;

my $setup = <<'SQL';
CREATE TABLE batches (
	server text,
	batch int,
	token bigint,
	started timestamptz,
	finished timestamptz);

CREATE PROCEDURE import_batches(n int)
LANGUAGE plpgsql AS $$
DECLARE
	token bigint;
BEGIN
	-- held for the whole run, across the COMMITs below
	PERFORM zk_rlock('/jobs/import');
	FOR i IN 1 .. n LOOP
		-- one batch at a time in the whole cluster, released by COMMIT
		token := zk_xact_lock('/jobs/import/batch');
		INSERT INTO batches VALUES (current_setting('cluster_name'), i, token,
									clock_timestamp(), NULL);
		PERFORM pg_sleep(0.05);		-- the batch's work
		UPDATE batches SET finished = clock_timestamp() WHERE batch = i;
		COMMIT;
	END LOOP;
	PERFORM zk_unlock('/jobs/import');
END
$$;
SQL
$_->safe_psql('postgres', $setup) for ($na, $nb);

# The test holds the batch lock until it has checked that maintenance
# waits, so both importers still hold their shared lock then, however
# slowly this machine runs the check.
my $cg = $na->background_psql('postgres');
$cg->query_safe(q{SELECT zk_lock('/jobs/import/batch')});
my $ca = $na->background_psql('postgres');
my $cb = $nb->background_psql('postgres');
bg_begin($ca, "CALL import_batches($nbatches)", 'a_done');
bg_begin($cb, "CALL import_batches($nbatches)", 'b_done');

ok( wait_for(
		sub {
			$na->safe_psql('postgres',
				q{SELECT string_agg(cluster_name || ':' || mode || ':' || granted, ','
				         ORDER BY cluster_name)
				  FROM zk_lock_queue('/jobs/import')}) eq 'a:shared:true,b:shared:true';
		},
		20,
		'both importers to hold the shared lock'),
	'both importers hold the shared session lock at once');
is($na->safe_psql('postgres', q{SELECT zk_try_lock('/jobs/import', 100)}),
	'f', 'maintenance cannot take the exclusive lock while they run');
$cg->query_safe(q{SELECT zk_unlock('/jobs/import/batch')});
$cg->quit;

my ($oa, $ea) = bg_finish($ca, 'a_done');
my ($ob, $eb) = bg_finish($cb, 'b_done');
is($ea . $eb, '', 'both CALLs completed without error');

my @rows;
for my $node ($na, $nb)
{
	push @rows,
	  map { [ split /\|/ ] } split /\n/,
	  $node->safe_psql('postgres',
		q{SELECT server, batch, token,
		         extract(epoch FROM started), extract(epoch FROM finished)
		  FROM batches});
}
is(scalar(@rows), 2 * $nbatches, 'every batch of both servers ran and committed');
@rows = sort { $a->[3] <=> $b->[3] } @rows;

my $overlaps = 0;
my $token_order = 0;
for my $i (1 .. $#rows)
{
	$overlaps++ if $rows[$i][3] < $rows[ $i - 1 ][4];
	$token_order++ if $rows[$i][2] > $rows[ $i - 1 ][2];
}
is($overlaps, 0, 'no two batches overlapped in time, across both servers');
is($token_order, $#rows,
	'fencing tokens strictly increase from one batch holder to the next');
my %servers = map { $_->[0] => 1 } @rows[ 0 .. $nbatches ];
is(scalar(keys %servers), 2, 'the servers took turns (both appear in the first half)');

for my $node ($na, $nb)
{
	is($node->safe_psql('postgres', 'SELECT count(*) FROM zk_locks'),
		'0', $node->name . ': no lock left after the CALL');
}
is($na->safe_psql('postgres', q{SELECT zk_try_lock('/jobs/import', 1000)}),
	't', 'maintenance gets the exclusive lock once the importers are done');

# --- fencing tokens across servers, session locks
my @tokens;
for my $i (1 .. 10)
{
	my $node = $i % 2 ? $na : $nb;
	my ($token) = split /\n/,
	  $node->safe_psql('postgres',
		q{SELECT zk_lock('/fence'); SELECT zk_unlock('/fence')});
	push @tokens, $token;
}
my $increasing = grep { $tokens[$_] > $tokens[ $_ - 1 ] } 1 .. $#tokens;
is($increasing, $#tokens,
	'tokens of successive holders on alternating servers strictly increase');

$_->quit for ($ca, $cb);
$na->stop;
$nb->stop;
done_testing();
