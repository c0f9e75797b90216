# ZkHistory.pm: the checker of the histories that zklock's Jepsen-style
# TAP tests (t/037_nemesis.pl, t/046_fence_nemesis.pl,
# t/058_combined_nemesis.pl) record: workers that take a lock, read a value
# from a resource and write it back, under a nemesis.  It only reads the
# history it is given.
package ZkHistory;

use strict;
use warnings;

use Exporter 'import';

our @EXPORT = qw(check_history overlapping_holders max_concurrent
  check_fenced_history late_stops);

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

# max_concurrent(SPANS): SPANS are [id, start, end] (what ran from start
# to end, e.g. a semaphore's holders); returns the largest number of spans
# open at one instant (a span that ends when another starts does not
# overlap it).
sub max_concurrent
{
	my ($spans) = @_;
	my ($depth, $max) = (0, 0);
	my @events = map { ([ $_->[1], 1 ], [ $_->[2], -1 ]) } @$spans;
	for my $ev (sort { $a->[0] <=> $b->[0] || $a->[1] <=> $b->[1] } @events)
	{
		$depth += $ev->[1];
		$max = $depth if $depth > $max;
	}
	return $max;
}

# check_fenced_history(%h): the whole check of a resource fenced by
# zk_fence (or not), from what the resource recorded:
#   writes  => [ [token, old_value, new_value, at], ... ]: the applied
#              writes, in the resource's commit order;
#   reads   => [ [token, at], ... ]: the applied reads;
#   refused => [ [token, at], ... ]: the writes the resource refused, each
#              with the time the refusal was known (after its rollback);
#   grants  => [ [grant_time, token], ... ].
# Times are the resource's clock.  Returns check_history's counts (fencing,
# lost, grant_order) plus overlaps (pairs of holders whose spans at the
# resource, from the first applied read to the applied write of a token,
# overlap) and refused_not_stale (a refused write with no larger token
# applied before the refusal, as a read or a write: a refusal no newer
# holder explains).
sub check_fenced_history
{
	my (%h) = @_;
	my $i = 0;
	my $v = check_history([ map { [ ++$i, @$_[ 0 .. 2 ] ] } @{ $h{writes} } ],
		$h{grants} // []);
	my %read_at;
	for my $r (@{ $h{reads} })
	{
		$read_at{ $r->[0] } = $r->[1]
		  if !defined $read_at{ $r->[0] } || $r->[1] < $read_at{ $r->[0] };
	}
	my @spans = map { [ $_->[0], $read_at{ $_->[0] } // $_->[3], $_->[3] ] } @{ $h{writes} };
	$v->{overlaps} = scalar(@{ overlapping_holders(\@spans) });
	# the applied tokens, as reads and writes, with their times
	my @applied = ((map { [ $_->[0], $_->[3] ] } @{ $h{writes} }), @{ $h{reads} });
	$v->{refused_not_stale} = 0;
	for my $f (@{ $h{refused} })
	{
		my ($tok, $at) = @$f;
		$v->{refused_not_stale}++
		  unless grep { $_->[0] > $tok && $_->[1] <= $at } @applied;
	}
	return $v;
}

# late_stops(STOPS): STOPS are [what, from, to, bound]: a holder told that
# its lock was lost (its statement ended with the loss's ERROR) at time TO,
# by a fault that began (or ended, for a pause: the holder ran again) at
# FROM, and the bound the documentation gives for FROM to TO; returns the
# list of those later than their bound, and the longest delay seen.
sub late_stops
{
	my ($stops) = @_;
	my (@late, $longest);
	for my $s (@$stops)
	{
		my $d = $s->[2] - $s->[1];
		$longest = $d if !defined $longest || $d > $longest;
		push @late, $s if $d > $s->[3];
	}
	return (\@late, $longest);
}

1;
