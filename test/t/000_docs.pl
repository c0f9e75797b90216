# Documentation checks, no server needed.
#
# - every function and view created by the extension scripts
#   (sql/zklock--*.sql) has an entry in doc/reference.md, with the same
#   argument types and return type;
# - every setting defined in src/*/*.c (DefineCustom*Variable "zklock.*") has
#   an entry in doc/reference.md;
# - every SQLSTATE raised in src/*/*.c (ERRCODE_* names, mapped to codes with
#   PostgreSQL's errcodes.txt or errcodes.h; errcode_for_file_access) is in
#   the SQLSTATE column of doc/reference.md's error table;
# - every message quoted in that table, and every ERROR/WARNING/DETAIL/HINT/
#   LOG line shown in doc/*.md, matches a message of the C source (or one
#   of PostgreSQL's own messages listed below);
# - README.md has the two commands, byte for byte;
# - every relative link in README.md and doc/*.md points to a file that
#   exists, and to a heading that exists when it names one;
# - no text file of the repository refers to documents outside it or to
#   our own ticket numbers (an upstream project's, named, is fine);
# - RELIABILITY.md is what test/reliability.sh renders from
#   test/reliability/template.md and the figures it recorded.
#
# Each rule is one check per document it applies to (doc/reference.md for
# the first four, each of README.md and doc/*.md for the messages shown and
# the links, the repository as a whole for the references; README.md and
# RELIABILITY.md for their own rule), whose failure
# lists every offending place: the count says how many (document, rule)
# pairs hold, not how many files or lines were read.
#
# The repository is found by repo_root (ZkTest.pm): ZKLOCK_SRCDIR (set by
# test/run-tests.sh), else the parent of test/.
use strict;
use warnings;

use File::Basename qw(dirname);
use File::Find;
use IPC::Run;
use Test::More;
use PostgreSQL::Test::Utils;
use ZkTest;

my $root = repo_root();
note "repository: $root";

# rule_ok(NAME, PROBLEMS): one check, passing when PROBLEMS (a reference to
# a list of offending places, each a line of text) is empty; on failure
# every place is listed.
sub rule_ok
{
	my ($name, $problems) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my $ok = ok(!@$problems, $name);
	diag(join("\n", map { "  $_" } @$problems)) unless $ok;
	return $ok;
}


sub glob_sorted { return sort glob($_[0]); }

my $reference_path = "$root/doc/reference.md";
my $reference = -f $reference_path ? slurp_file($reference_path) : '';
my @no_reference = -f $reference_path ? () : ('doc/reference.md does not exist');

# Markdown lines outside fenced code blocks, and the code lines inside them.
sub split_markdown
{
	my ($text) = @_;
	my (@prose, @code);
	my $fence;
	for my $line (split /\n/, $text)
	{
		if ($line =~ /^\s*(```+|~~~+)/)
		{
			if (!defined $fence) { $fence = $1; next; }
			if (substr($1, 0, 1) eq substr($fence, 0, 1)) { undef $fence; next; }
		}
		if (defined $fence) { push @code, $line; }
		else { push @prose, $line; }
	}
	return (\@prose, \@code);
}

my ($ref_prose) = split_markdown($reference);
my @ref_headings = grep { /^#{1,6}\s/ } @$ref_prose;

# ---------------------------------------------------------------- functions

sub strip_sql_comments
{
	my ($s) = @_;
	$s =~ s{/\*.*?\*/}{}gs;
	$s =~ s{--[^\n]*}{}g;
	return $s;
}

# the text between the parenthesis at $pos and its match
sub balanced
{
	my ($s, $pos) = @_;
	my $depth = 0;
	for (my $i = $pos; $i < length $s; $i++)
	{
		my $c = substr($s, $i, 1);
		$depth++ if $c eq '(';
		$depth-- if $c eq ')';
		return substr($s, $pos + 1, $i - $pos - 1) if $depth == 0;
	}
	return undef;
}

sub split_top_level
{
	my ($s) = @_;
	my (@parts, $depth, $cur);
	$depth = 0;
	$cur = '';
	for my $c (split //, $s)
	{
		$depth++ if $c eq '(' || $c eq '[';
		$depth-- if $c eq ')' || $c eq ']';
		if ($c eq ',' && $depth == 0) { push @parts, $cur; $cur = ''; next; }
		$cur .= $c;
	}
	push @parts, $cur if $cur =~ /\S/;
	return @parts;
}

my %type_alias = (
	int => 'integer', int4 => 'integer', integer => 'integer',
	int8 => 'bigint', bigint => 'bigint', int2 => 'smallint',
	bool => 'boolean', boolean => 'boolean',
	varchar => 'character varying', timestamptz => 'timestamp with time zone');

sub norm_type
{
	my ($t) = @_;
	$t = lc $t;
	$t =~ s/^\s+|\s+$//g;
	$t =~ s/\s+/ /g;
	$t =~ s/^\w+\.//;    # schema
	my $array = $t =~ s/\s*\[\s*\]$// ? '[]' : '';
	$t = $type_alias{$t} // $t;
	return $t . $array;
}

# the IN argument types of an argument list, as "type, type"
sub in_types
{
	my ($args) = @_;
	my @types;
	for my $a (split_top_level($args))
	{
		$a =~ s/\s+(DEFAULT\b|=).*$//is;
		my @w = split ' ', $a;
		next unless @w;
		my $mode = 'IN';
		if ($w[0] =~ /^(IN|OUT|INOUT|VARIADIC)$/i) { $mode = uc shift @w; }
		next if $mode eq 'OUT';
		shift @w if @w > 1 && !($w[0] =~ /^(double|character|timestamp|time|bit)$/i);
		push @types, norm_type(join ' ', @w);
	}
	return join ', ', @types;
}

my @scripts = glob_sorted("$root/sql/zklock--*.sql");
my (@functions, @views);
for my $script (@scripts)
{
	my $sql = strip_sql_comments(slurp_file($script));
	while ($sql =~ /CREATE\s+(?:OR\s+REPLACE\s+)?FUNCTION\s+([\w."]+)\s*\(/gi)
	{
		my $name = $1;
		my $open = pos($sql) - 1;
		my $args = balanced($sql, $open);
		my $rest = substr($sql, $open + length($args) + 2);
		my ($ret) = $rest =~ /^\s*RETURNS\s+((?:SETOF\s+)?[\w.]+(?:\s*\[\s*\])?)/i;
		$name =~ s/"//g;
		$name =~ s/^\w+\.//;
		push @functions,
		  { name => $name, types => in_types($args),
			returns => norm_ret($ret // '?'), file => $script };
	}
	while ($sql =~ /CREATE\s+(?:OR\s+REPLACE\s+)?VIEW\s+([\w."]+)/gi)
	{
		my $v = $1;
		$v =~ s/"//g;
		$v =~ s/^\w+\.//;
		push @views, $v;
	}
}

sub norm_ret
{
	my ($r) = @_;
	my $setof = $r =~ s/^\s*SETOF\s+//i ? 'setof ' : '';
	return $setof . norm_type($r);
}

# documented signatures: "name(args) → returns" in headings
my %documented;
for my $h (@ref_headings)
{
	(my $plain = $h) =~ s/`//g;
	while ($plain =~ /\b(\w+)\(([^()]*)\)(?:\s*(?:→|->)\s*((?:SETOF\s+)?[\w.]+(?:\s*\[\s*\])?))?/gi)
	{
		my ($n, $a, $r) = ($1, $2, $3);
		push @{ $documented{ $n . '(' . in_types($a) . ')' } },
		  defined $r ? norm_ret($r) : undef;
	}
}

{
	my @problems = @no_reference;
	push @problems, 'no function found in sql/zklock--*.sql' unless @functions;
	for my $f (@functions)
	{
		my $sig = "$f->{name}($f->{types})";
		my $rets = $documented{$sig};
		if (!$rets)
		{
			push @problems, "function $sig has no heading";
		}
		elsif (!grep { defined $_ && $_ eq $f->{returns} } @$rets)
		{
			push @problems, "function $sig: no heading gives the return type $f->{returns}";
		}
	}
	rule_ok('doc/reference.md: every function of sql/zklock--*.sql has a heading with its '
		  . 'argument types and return type (' . scalar(@functions) . ' functions)',
		\@problems);
}
{
	my @problems = @no_reference;
	push @problems, 'no view found in sql/zklock--*.sql' unless @views;
	for my $v (@views)
	{
		push @problems, "view $v has no heading"
		  unless grep { /view\s+`?\Q$v\E`?/i } @ref_headings;
	}
	rule_ok('doc/reference.md: every view of sql/zklock--*.sql has a heading ('
		  . scalar(@views) . ' views)', \@problems);
}

# ---------------------------------------------------------------- settings

my @c_files = glob_sorted("$root/src/*/*.c");
my %c_text = map { $_ => slurp_file($_) } @c_files;
my @gucs;
for my $c (@c_files)
{
	while ($c_text{$c} =~ /DefineCustom\w+Variable\s*\(\s*"(zklock\.[\w.]+)"/g)
	{
		push @gucs, $1;
	}
}
{
	my @problems = @no_reference;
	push @problems, 'no DefineCustom*Variable("zklock.*") found in src/*/*.c' unless @gucs;
	for my $g (@gucs)
	{
		push @problems, "setting $g has no heading"
		  unless grep { /`\Q$g\E`/ } @ref_headings;
	}
	rule_ok('doc/reference.md: every setting defined in src/*/*.c has a heading ('
		  . scalar(@gucs) . ' settings)', \@problems);
}

# ---------------------------------------------------------------- SQLSTATEs

# PostgreSQL's list of error codes: errcodes.txt in the share directory,
# else errcodes.h among the server headers.
my %sqlstate;
{
	my @candidates;
	for my $opt ('--sharedir', '--includedir-server')
	{
		my $dir = `pg_config $opt 2>/dev/null`;
		chomp $dir;
		next unless $dir;
		push @candidates, "$dir/errcodes.txt", "$dir/utils/errcodes.h";
	}
	push @candidates, glob_sorted('/usr/share/postgresql/*/errcodes.txt'),
	  glob_sorted('/usr/include/postgresql/*/server/utils/errcodes.h');
	for my $file (grep { -f $_ } @candidates)
	{
		my $text = slurp_file($file);
		while ($text =~ /^([0-9A-Z]{5})\s+[EWS]\s+(ERRCODE_\w+)/mg)
		{
			$sqlstate{$2} = $1;
		}
		while ($text =~ /^#define\s+(ERRCODE_\w+)\s+MAKE_SQLSTATE\('(.)',\s*'(.)',\s*'(.)',\s*'(.)',\s*'(.)'\)/mg)
		{
			$sqlstate{$1} = "$2$3$4$5$6";
		}
		if (%sqlstate)
		{
			note "error codes from $file";
			last;
		}
	}
}

my %raised;    # SQLSTATE => where
my @sqlstate_problems = @no_reference;
push @sqlstate_problems,
  "PostgreSQL's error code list was not found (errcodes.txt or errcodes.h)"
  unless %sqlstate;
for my $c (@c_files)
{
	(my $short = $c) =~ s{^\Q$root\E/}{};
	while ($c_text{$c} =~ /\b(?:GUC_check_)?errcode\s*\(\s*(ERRCODE_\w+)\s*\)/g)
	{
		my $name = $1;
		my $code = $sqlstate{$name};
		push @sqlstate_problems, "$name ($short) is not a known error code"
		  if !defined $code && %sqlstate;
		$raised{$code} //= "$name in $short" if defined $code;
	}
	if ($c_text{$c} =~ /\berrcode_for_file_access\s*\(/)
	{
		# the codes of a missing file and of a refused access
		$raised{'58P01'} //= "errcode_for_file_access (ENOENT) in $short";
		$raised{'42501'} //= "errcode_for_file_access (EACCES) in $short";
	}
}

# the error table: rows of the "## Errors" section
my @error_rows;
{
	my $in = 0;
	for my $line (@$ref_prose)
	{
		if ($line =~ /^##\s/) { $in = $line =~ /^##\s+Errors\b/; next; }
		push @error_rows, $line if $in && $line =~ /^\|/ && $line !~ /^\|\s*-/;
	}
}
push @sqlstate_problems, 'no error table under "## Errors"' unless @error_rows > 1;
my @row_cells = map { [ map { s/^\s+|\s+$//gr } split /(?<!\\)\|/, substr($_, 1) ] } @error_rows;
for my $code (sort keys %raised)
{
	push @sqlstate_problems, "SQLSTATE $code ($raised{$code}) is not in the SQLSTATE column"
	  unless grep { defined $_->[1] && $_->[1] =~ /(?<![0-9A-Z])\Q$code\E(?![0-9A-Z])/ } @row_cells;
}
rule_ok('doc/reference.md: every SQLSTATE raised in src/*/*.c is in the error table ('
	  . scalar(keys %raised) . ' SQLSTATEs)', \@sqlstate_problems);

# ---------------------------------------------------------------- messages

# Every string literal of the C source (adjacent literals joined) as a
# pattern: printf conversions match anything.
my @message_patterns;
for my $c (@c_files)
{
	my $text = $c_text{$c};
	$text =~ s{/\*.*?\*/}{}gs;
	while ($text =~ /((?:"(?:[^"\\\n]|\\.)*"\s*)+)/g)
	{
		my $lits = $1;
		my $s = '';
		while ($lits =~ /"((?:[^"\\\n]|\\.)*)"/g) { $s .= $1; }
		next unless $s =~ / /;
		# some words besides conversions ("%s %s" would match anything)
		next unless ($s =~ s/%[-#0-9.*]*[a-zA-Z%]//gr) =~ /[A-Za-z]{3}/;
		$s =~ s/\\(["\\])/$1/g;
		$s =~ s/\\n/\n/g;
		push @message_patterns, format_to_regex($s);
	}
}

# PostgreSQL's own messages that the documentation quotes
push @message_patterns, map { format_to_regex($_) } (
	'permission denied to set parameter "%s"',
	'invalid value for parameter "%s": "%s"',
	'invalid value for parameter "%s": %d',
	'%d%s%s is outside the valid range for parameter "%s" (%d .. %d)',
	'canceling statement due to statement timeout',
	'canceling statement due to user request',
	'must be superuser or have privileges of pg_read_all_settings to examine "%s"',
	'cannot execute %s in a read-only transaction',
	'out of memory');

sub format_to_regex
{
	my ($fmt) = @_;
	my $re = '';
	for my $part (split /(%[-#0-9.*]*(?:hh|h|ll|l|z|j|t)?[a-zA-Z%])/, $fmt)
	{
		if ($part =~ /^%/)
		{
			$re .= $part eq '%%' ? '%' : '.*?';
		}
		else { $re .= quotemeta $part; }
	}
	return qr/^$re$/s;
}

sub is_source_message
{
	my ($msg) = @_;
	return scalar grep { $msg =~ $_ } @message_patterns;
}

# messages quoted in the error table's example column
{
	my @problems = @no_reference;
	my $n = 0;
	for my $cells (@row_cells)
	{
		my $example = $cells->[3] // '';
		while ($example =~ /`((?:ERROR|WARNING|DETAIL|HINT|LOG):  [^`]*)`/g)
		{
			my $quoted = $1;
			(my $msg = $quoted) =~ s/^\w+:  //;
			$n++;
			push @problems, "not a message of the source: $quoted"
			  unless is_source_message($msg);
		}
	}
	rule_ok("doc/reference.md: every message quoted in the error table is one the source "
		  . "raises ($n messages)", \@problems);
}

# server messages shown in code blocks of the documents: one check per
# document
my @doc_files = ("$root/README.md", glob_sorted("$root/doc/*.md"));
for my $file (@doc_files)
{
	(my $short = $file) =~ s{^\Q$root\E/}{};
	my (undef, $code) = split_markdown(slurp_file($file));
	my @problems;
	my $n = 0;
	for my $line (@$code)
	{
		next unless $line =~ /^(?:--\s*)?((?:ERROR|WARNING|DETAIL|HINT|LOG):  (.*))$/;
		my ($quoted, $msg) = ($1, $2);
		$n++;
		push @problems, "not a message of the source: $quoted"
		  unless is_source_message($msg);
	}
	rule_ok("$short: every server message shown in a code block is a real one ($n "
		  . ($n == 1 ? 'message' : 'messages') . ')',
		\@problems);
}

# ---------------------------------------------------------------- README

my $readme = slurp_file("$root/README.md");
my $two_commands = <<'EOF';
## Two commands

On a fresh Debian 12 machine, from a clone of this repository:

```sh
test/demo.sh        # installs what is missing, builds, installs, starts ZooKeeper and PostgreSQL, shows two sessions contending
test/run-tests.sh   # runs the whole test suite against real servers; ends with "N passed, M failed"
```
EOF
ok(index($readme, $two_commands) >= 0, 'README.md: the two commands, byte for byte');

# ---------------------------------------------------------------- RELIABILITY.md

# RELIABILITY.md is generated (test/reliability.sh): it must be what its
# template and the recorded figures give, so that nobody edits the output
# (the next regeneration would lose it) or a template change goes unrendered
{
	my $out = "$PostgreSQL::Test::Utils::tmp_check/RELIABILITY.md";
	my ($stdout, $stderr) = ('', '');
	IPC::Run::run(
		[
			'perl', "$root/test/reliability/render.pl",
			"$root/test/reliability/template.md",
			"$root/test/reliability/figures.tsv", $out
		],
		'>', \$stdout, '2>', \$stderr);
	my @problems = map { "  $_" } grep { /\S/ } split /\n/, $stderr;
	if (!-f $out)
	{
		push @problems, "test/reliability/render.pl wrote nothing: $stderr";
	}
	elsif (slurp_file($out) ne slurp_file("$root/RELIABILITY.md"))
	{
		my @want = split /\n/, slurp_file($out);
		my @have = split /\n/, slurp_file("$root/RELIABILITY.md");
		for my $i (0 .. ($#want > $#have ? $#want : $#have))
		{
			next if ($want[$i] // '') eq ($have[$i] // '');
			push @problems, 'line ' . ($i + 1) . ' differs: run test/reliability.sh --render '
			  . '(and edit test/reliability/template.md, not RELIABILITY.md)';
			last;
		}
	}
	rule_ok('RELIABILITY.md: is what test/reliability.sh renders from its template and the '
		  . 'recorded figures', \@problems);
}

# and its figures come from the code under test: every run recorded ran on
# the code (test/reliability.sh --code: src/, sql/, zklock.control and
# Makefile) of HEAD, with no margin
{
	my ($code, $err) = ('', '');
	IPC::Run::run([ 'bash', "$root/test/reliability.sh", '--code' ],
		'>', \$code, '2>', \$err);
	chomp $code;
	my @problems;
	push @problems, "test/reliability.sh --code failed: $err" unless $code =~ /^[0-9a-f]{12}$/;
	my (%code_of, %commit_of);
	for my $line (split /\n/, slurp_file("$root/test/reliability/figures.tsv"))
	{
		my ($file, $name, $value) = split /\t/, $line, 3;
		next if $line =~ /^#/ || !defined $value;
		$code_of{$file} = $value if $name eq '@code';
		$commit_of{$file} = $value if $name eq '@commit';
	}
	for my $file (sort keys %commit_of)
	{
		my $ran = $code_of{$file} // 'no code recorded';
		push @problems, "$file ran at $commit_of{$file} on code $ran, not HEAD's $code: "
		  . "run test/reliability.sh"
		  if $code && $ran ne $code;
	}
	rule_ok('RELIABILITY.md: every row ran on the code of the commit under test',
		\@problems);
}

# ---------------------------------------------------------------- links

# GitHub's anchors for the headings of a Markdown file
my %anchor_cache;
sub anchors
{
	my ($file) = @_;
	return $anchor_cache{$file} if $anchor_cache{$file};
	my ($prose) = split_markdown(slurp_file($file));
	my (%seen, %set);
	for my $line (@$prose)
	{
		next unless $line =~ /^#{1,6}\s+(.*?)\s*#*\s*$/;
		my $slug = lc $1;
		$slug =~ s/\[([^\]]*)\]\([^)]*\)/$1/g;    # a link: its text
		$slug =~ s/[^\w\- ]//g;
		$slug =~ s/ /-/g;
		my $n = $seen{$slug}++;
		$set{ $n ? "$slug-$n" : $slug } = 1;
	}
	return $anchor_cache{$file} = \%set;
}

# one check per document
for my $file (@doc_files)
{
	(my $short = $file) =~ s{^\Q$root\E/}{};
	my ($prose) = split_markdown(slurp_file($file));
	my @problems;
	my $n = 0;
	for my $line (@$prose)
	{
		(my $l = $line) =~ s/`[^`]*`//g;    # no links in code spans
		while ($l =~ /\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)
		{
			my $target = $1;
			next if $target =~ /^[a-z][a-z0-9+.-]*:/i;    # a URL
			$n++;
			my ($path, $anchor) = split /#/, $target, 2;
			my $dest = $path eq '' ? $file : dirname($file) . "/$path";
			if (!-e $dest)
			{
				push @problems, "link to $target: no such file";
			}
			elsif (defined $anchor && $dest =~ /\.md$/ && !anchors($dest)->{$anchor})
			{
				push @problems, "link to $target: no such heading";
			}
		}
	}
	rule_ok("$short: every relative link resolves, to a file and to a heading ($n "
		  . ($n == 1 ? 'link' : 'links') . ')',
		\@problems);
}

# ---------------------------------------------------------------- references

# Text files of the repository: what git knows (tracked, or new and not
# ignored), else a walk that skips build and test output.
my @files;
{
	my @git = `git -c safe.directory='*' -C '$root' ls-files -z -c -o --exclude-standard 2>/dev/null`;
	if ($? == 0 && @git)
	{
		@files = grep { length && -f "$root/$_" } split /\0/, join '', @git;
	}
	else
	{
		my %skip = map { $_ => 1 } qw(.git results output_iso tmp_check log test/tmp bench/out);
		find(
			{
				no_chdir => 1,
				wanted => sub {
					(my $rel = $File::Find::name) =~ s{^\Q$root\E/?}{};
					if (-d $_ && $skip{$rel}) { $File::Find::prune = 1; return; }
					return unless -f $_;
					return if $rel =~ /\.(o|so|bc)$/ || $rel =~ /^regression\./;
					push @files, $rel;
				}
			},
			$root);
	}
}

# built from pieces so that this file does not match itself
my $outside_word = 'con' . 'tract';
my $ticket_word = 'iss' . 'ue';
my $ticket_re = qr/\b(\Q$ticket_word\Es?\s*#?\s*\d+)/i;
my $upstream = qr/\b(?:kazoo|curator|zookeeper|go-zookeeper|libzookeeper|postgresql|postgres|pgxs)\s+$/i;
my (@outside, @tickets);
my $text_files = 0;
for my $rel (sort @files)
{
	my $path = "$root/$rel";
	next if -B $path;
	$text_files++;
	my $n = 0;
	for my $line (split /\n/, slurp_file($path))
	{
		$n++;
		push @outside, "$rel:$n: " . substr($line =~ s/^\s+//r, 0, 100)
		  if $line =~ /\Q$outside_word\E/i;
		while ($line =~ /$ticket_re/g)
		{
			my $before = substr($line, 0, $-[1]);
			push @tickets, "$rel:$n: $1" unless $before =~ $upstream;
		}
	}
}
my @unlisted = @files > 10 ? () : ('the repository files could not be listed (' . scalar(@files) . ')');
rule_ok("the repository: no text file refers to a document outside it ($text_files files)",
	[ @unlisted, @outside ]);
rule_ok("the repository: no text file cites a ticket number of ours ($text_files files)",
	[ @unlisted, @tickets ]);

done_testing();
