# ZkHistory.pm: the checker of the histories that zklock's Jepsen-style
# TAP tests (t/037_nemesis.pl, t/046_fence_nemesis.pl) record: workers that
# take a lock, read a value from a resource and write it back, under a
# nemesis.  It only reads the history it is given.
package ZkHistory;

use strict;
use warnings;

use Exporter 'import';

our @EXPORT = qw(check_history overlapping_holders);

# check_history(WRITES, GRANTS): WRITES are the applied writes as
# [write_seq, token, old_value, new_value], GRANTS the grants as
# [grant_time, token]; returns a hash of counts: fencing (an applied token
# not greater than the one applied before it), lost (an applied write whose
# old value is not the previous applied write's new value, or a gap in the
# sequence), grant_order (a grant whose token is not greater than the
# token of the grant before it in time).
sub check_history
{
	my ($writes, $grants) = @_;
	my %v = (fencing => 0, lost => 0, grant_order => 0);
	my ($prev_tok, $prev_new, $prev_seq) = (0, 0, 0);
	for my $w (sort { $a->[0] <=> $b->[0] } @$writes)
	{
		my ($seq, $tok, $old, $new) = @$w;
		$v{fencing}++ if $tok <= $prev_tok;
		$v{lost}++ if $old != $prev_new || $new != $old + 1 || $seq != $prev_seq + 1;
		($prev_tok, $prev_new, $prev_seq) = ($tok, $new, $seq);
	}
	my $prev = 0;
	for my $g (sort { $a->[0] <=> $b->[0] } @$grants)
	{
		$v{grant_order}++ if $g->[1] <= $prev;
		$prev = $g->[1];
	}
	return \%v;
}

# overlapping_holders(SPANS): SPANS are [token, start, end], a holder's span
# at the resource (its applied read to its applied write); returns the pairs
# [older token, newer token] whose spans overlap, each once, found in one
# pass over the spans sorted by start (the span ending last so far is the
# one a later start can fall into; every open span it falls into is listed).
sub overlapping_holders
{
	my ($spans) = @_;
	my (@pairs, @open);
	for my $s (sort { $a->[1] <=> $b->[1] } @$spans)
	{
		@open = grep { $_->[2] > $s->[1] } @open;
		for my $o (@open)
		{
			push @pairs,
			  $o->[0] < $s->[0] ? [ $o->[0], $s->[0] ] : [ $s->[0], $o->[0] ];
		}
		push @open, $s;
	}
	return \@pairs;
}

1;
