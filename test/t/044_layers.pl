# The source tree's layers point down: test/check_layers.py reads every
# #include of src/ and fails on a file outside the layer folders, an
# include of a layer above, a header of ours named without its layer, or
# an include circle between units (a .c with its .h).  Needs no server.
use strict;
use warnings;

use lib 'lib';
use Test::More;
use ZkTest;

my $root = repo_root();
my $out = `python3 $root/test/check_layers.py $root 2>&1`;
my $rc = $? >> 8;
is($rc, 0, 'check_layers.py finds no upward include and no circle')
  or diag($out);
my ($units, $circles, $levels) =
  $out =~ /units=(\d+) circles=(\d+) levels=(\d+)/;
ok(defined $units && $units > 30, "it read the tree ($units units)");
is($circles, 0, 'no include circle');
ok(defined $levels && $levels <= 8, "at most 8 levels of includes ($levels)");
figure(units => $units, circles => $circles, levels => $levels);

done_testing();
