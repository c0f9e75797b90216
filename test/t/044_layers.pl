# The source tree's layers point down: test/check_layers.py reads every
# #include of src/ and the symbols of the built objects (nm), and fails on
# a file outside the layer folders, an include of a layer above, a header
# of ours named without its layer, an include circle between units (a .c
# with its .h), a call to a layer above, or a call circle between units;
# it lists the hooks through which a lower layer calls up, which must be
# the expected ones.  Then the same checker on a small planted tree must
# fail, naming what was planted.  Needs no server, but a built tree (the
# suite builds first).
use strict;
use warnings;

use lib 'lib';
use File::Path qw(make_path);
use File::Temp qw(tempdir);
use Test::More;
use ZkTest;

my $root = repo_root();
unless (-f "$root/zklock.so")
{
	system('make', '-s', '-C', $root) == 0 or BAIL_OUT('make failed');
}

my $out = `python3 $root/test/check_layers.py $root 2>&1`;
my $rc = $? >> 8;
is($rc, 0, 'check_layers.py finds no upward include or call and no circle')
  or diag($out);
my ($units, $circles, $levels, $call_circles, $upward, $nhooks) = $out =~
  /units=(\d+) circles=(\d+) levels=(\d+) call_circles=(\d+) upward_calls=(\d+) hooks=(\d+)/;
ok(defined $units && $units > 30, "it read the tree ($units units)");
is($circles, 0, 'no include circle');
ok(defined $levels && $levels <= 8, "at most 8 levels of includes ($levels)");
is($call_circles, 0, 'no call circle');
is($upward, 0, 'no call to a layer above');

# a new way for a lower layer to call up is a decision: add it here
my @hooks = $out =~ /^hook: (.*)$/mg;
is_deeply(
	\@hooks,
	[
		'client/client.h ZkSessionSetHooks <- holds/lost.c',
		'client/client.h ZkSessionSetSettingsHook <- sql/settings.c',
	],
	'the upward hooks are exactly the expected ones') or diag($out);
is($nhooks, scalar @hooks, 'the summary counts the hooks listed');
figure(
	units => $units,
	circles => $circles,
	levels => $levels,
	call_circles => $call_circles,
	upward_calls => $upward,
	hooks => $nhooks);

# A planted tree: two files of one layer that share a header and call each
# other (a call circle with no include circle), a file of the bottom layer
# that calls one of them (an upward call), one that registers a hook of a
# layer below, two headers that include each other, and a source never
# built.  Each .c is compiled to its .o, as make leaves them.
my $plant = tempdir(CLEANUP => 1);
my %files = (
	'holds/internal.h' => "extern void ZkHigh(void);\nextern void ZkLow(void);\n",
	'holds/high.c' => "#include \"holds/internal.h\"\n"
	  . "#include \"client/hook.h\"\n"
	  . "void ZkHigh(void) { ZkLow(); ZkSetPlantHook(ZkHigh); }\n",
	'holds/low.c' => "#include \"holds/internal.h\"\n"
	  . "void ZkLow(void) { ZkHigh(); }\n",
	'base/planted.c' => "extern void ZkHigh(void);\n"
	  . "void ZkBase(void);\nvoid ZkBase(void) { ZkHigh(); }\n",
	'client/hook.h' => "typedef void (*ZkPlantHook) (void);\n"
	  . "extern void ZkSetPlantHook(ZkPlantHook hook);\n",
	'client/hook.c' => "#include \"client/hook.h\"\n"
	  . "static ZkPlantHook zk_hook;\n"
	  . "void ZkSetPlantHook(ZkPlantHook hook) { zk_hook = hook; zk_hook(); }\n",
	'cluster/a.h' => "#include \"cluster/b.h\"\n",
	'cluster/b.h' => "#include \"cluster/a.h\"\n",
	'cluster/unbuilt.c' => "int ZkUnbuilt;\n",);
for my $f (sort keys %files)
{
	my $path = "$plant/src/$f";
	make_path($path =~ s{/[^/]+$}{}r);
	open(my $fh, '>', $path) or die "$path: $!";
	print $fh $files{$f};
	close($fh);
}
for my $f (grep { /\.c$/ && $_ ne 'cluster/unbuilt.c' } sort keys %files)
{
	my $path = "$plant/src/$f";
	system('gcc', '-c', '-I', "$plant/src", '-o', $path =~ s/\.c$/.o/r,
		$path) == 0
	  or die "gcc $f failed";
}
my $planted = `python3 $root/test/check_layers.py $plant 2>&1`;
is($? >> 8, 1, 'the checker fails on the planted tree') or diag($planted);
like(
	$planted,
	qr{^call circle: holds/high\.c holds/low\.c\n  holds/high\.c -> holds/low\.c: ZkLow\n  holds/low\.c -> holds/high\.c: ZkHigh$}m,
	'it names the planted call circle and the calls that close it');
like(
	$planted,
	qr{^upward call: base/planted\.c -> holds/high\.c: ZkHigh$}m,
	'it names the planted upward call');
like(
	$planted,
	qr{^hook: client/hook\.h ZkSetPlantHook <- holds/high\.c$}m,
	'it lists the planted hook');
like(
	$planted,
	qr{^include circle: cluster/a <-> cluster/b$}m,
	'it names the planted include circle');
like(
	$planted,
	qr{^no object, or one older than its source \(run make first\): cluster/unbuilt\.c$}m,
	'it names the source never built');
like(
	$planted,
	qr/circles=1 levels=\d+ call_circles=1 upward_calls=1 hooks=1 problems=4$/m,
	'its summary counts them');

done_testing();
