# The readers of node data (src/base/node_formats.c on src/base/json_reader.c) under
# a fuzz driver (test/fuzz/fuzz_node_data.c), no server needed:
#
# - the driver builds, as frontend code against PostgreSQL's libpgcommon
#   and libpgport, with AddressSanitizer and UndefinedBehaviorSanitizer
#   (every report aborts), without a compiler warning;
# - it runs every reader on 100 000 inputs generated from a fixed seed
#   (mutations and truncations of valid data of every format, random
#   documents of the known fields, deep nesting, huge numbers, strings and
#   lists at and past their bounds, \u escapes, invalid UTF-8, 1 MB data)
#   and checks each result against what the reader promises: it reports
#   100 000 inputs and 0 findings, and exits with status 0;
# - every reader accepted some of those inputs (the generation reaches
#   valid data of every format, so the checks of accepted results ran);
# - a second seed, 20 000 inputs: 0 findings too; the same seed twice gives
#   the same checksum of verdicts (the inputs are deterministic);
# - planted bugs are found: the driver built on a copy of node_formats.c
#   whose lease ttl check admits 0, and on one whose list bound lets one
#   element past its array, finds each on the first seed (a finding, or a
#   sanitizer's abort).
#
# ZKLOCK_FUZZ_SEED sets the first seed (outside CI, see run-tests.sh) to
# explore further; the default is fixed, so that a run is repeatable.
use strict;
use warnings;

use lib 'lib';
use IPC::Run;
use PostgreSQL::Test::Utils;
use Test::More;
use ZkTest;

my $root = repo_root();
my $out = PostgreSQL::Test::Utils::tempdir('fuzz');
my $seed = $ENV{ZKLOCK_FUZZ_SEED} // 20261126;

# build
my ($bout, $berr) = ('', '');
my $built = IPC::Run::run(
	[ 'make', '-s', '-C', "$root/test/fuzz", "OUT=$out", 'PG_CONFIG=pg_config' ],
	'>', \$bout, '2>', \$berr);
ok($built && -x "$out/fuzz_node_data",
	'the fuzz driver builds with AddressSanitizer and UndefinedBehaviorSanitizer')
  or diag("make said:\n$bout$berr");
unlike("$bout$berr", qr/warning:/i, 'without a compiler warning')
  or diag("$bout$berr");

# run(SEED, INPUTS): (exit status, stdout, stderr) of one run
sub run_driver
{
	my ($s, $n) = @_;
	my ($o, $e) = ('', '');
	IPC::Run::run([ "$out/fuzz_node_data", $s, $n ], '>', \$o, '2>', \$e);
	return ($? >> 8 | ($? & 127), $o, $e);
}

SKIP:
{
	skip 'the driver did not build', 7 unless -x "$out/fuzz_node_data";

	my ($rc, $o, $e) = run_driver($seed, 100000);
	note("seed $seed: $o");
	is($rc, 0, "seed $seed: the driver exits with status 0")
	  or diag(substr($e, 0, 4000));
	my ($n, $findings, $sum) =
	  $o =~ /^inputs: (\d+), bytes: \d+, findings: (\d+) .*checksum (\d+)\)$/m;
	is($n, 100000, 'it ran every reader on 100 000 inputs');
	is($findings, 0, 'with 0 findings');
	my @read = $o =~
	  /^read: owner (\d+), lease (\d+), record (\d+), limit (\d+), round (\d+)$/m;
	ok(@read == 5 && !grep({ $_ == 0 } @read),
		'every reader accepted some of the inputs: owner, lease, wait record, limit, round'
	) or diag($o);

	my ($rc2, $o2, $e2) = run_driver($seed + 1, 20000);
	note('seed ' . ($seed + 1) . ": $o2");
	ok($rc2 == 0 && $o2 =~ /^inputs: 20000, bytes: \d+, findings: 0 /m,
		'another seed, 20 000 inputs: 0 findings')
	  or diag(substr($e2, 0, 4000));

	my ($rc3, $o3) = run_driver($seed + 1, 20000);
	my ($c2) = $o2 =~ /checksum (\d+)\)$/m;
	my ($c3) = $o3 =~ /checksum (\d+)\)$/m;
	ok($rc3 == 0 && defined $c2 && defined $c3 && $c2 eq $c3,
		'the same seed gives the same verdicts again');
	ok(defined $sum, 'the first run printed its checksum');
}

# planted bugs: each mutation of node_formats.c (FROM -> TO, which must
# occur in the file) makes the driver fail on the first seed
my @plants = (
	[
		'a lease ttl of 0 accepted',
		'ZkJsonInteger(v, 1, ZK_MAX_TTL_MS, &n)',
		'ZkJsonInteger(v, 0, ZK_MAX_TTL_MS, &n)'
	],
	[
		'a list one element past its bound',
		'if (vec->n >= (target_list ? ZK_MAX_SET_LOCKS : ZK_MAX_RECORD_BLOCKERS))',
		'if (vec->n > (target_list ? ZK_MAX_SET_LOCKS : ZK_MAX_RECORD_BLOCKERS))'
	]);
my $original = slurp_file("$root/src/base/node_formats.c");
for my $i (0 .. $#plants)
{
	my ($what, $from, $to) = @{ $plants[$i] };
	my $dir = "$out/plant$i";
	mkdir $dir;
	my $copy = $original;
	my $n = ($copy =~ s/\Q$from\E/$to/g);
	is($n, 1, "planted bug ($what): the mutation applies once");
	open my $fh, '>', "$dir/node_formats.c" or die $!;
	print $fh $copy;
	close $fh;
	my ($pout, $perr) = ('', '');
	my $ok = IPC::Run::run(
		[
			'make', '-s', '-C', "$root/test/fuzz", "OUT=$dir",
			"NODE_FORMATS=$dir/node_formats.c", 'PG_CONFIG=pg_config'
		],
		'>', \$pout, '2>', \$perr);
	ok($ok && -x "$dir/fuzz_node_data", "planted bug ($what): the driver builds")
	  or diag("$pout$perr");
	my ($prc, $po) = ('', '');
	IPC::Run::run([ "$dir/fuzz_node_data", $seed, 100000 ], '>', \$po, '2>', \my $pe);
	$prc = $? >> 8 | ($? & 127);
	my ($found) = $po =~ /findings: (\d+)/;
	my ($report) = ($pe // '') =~ /^(FINDING: [^\n]*|[^\n]*(?:AddressSanitizer|runtime error)[^\n]*)/m;
	note("planted bug ($what): exit status $prc: " . ($report // 'no report'));
	ok($prc != 0 && defined $report, "planted bug ($what): the driver finds it");
}

done_testing();
