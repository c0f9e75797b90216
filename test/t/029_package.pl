# The Debian package and the PGXN metadata.
#
# - META.json: valid JSON with the PGXN Meta spec's required keys, its
#   version the control file's default_version as semver ("1.2" -> "1.2.0"),
#   provides.zklock.file an existing file, license "postgresql";
#   debian/changelog packages that same version.
# - The files of the repository (what git lists: tracked, or new and not
#   ignored, as they are in the work tree) are copied into a temporary
#   directory, and dpkg-buildpackage -us -uc -b builds
#   postgresql-NN-zklock there (NN: the PostgreSQL major version of the
#   pg_config in PATH).  lintian finds no error or warning that
#   debian/ does not override.
# - The .deb holds zklock.so, zklock.control and every sql/zklock--*.sql;
#   its Depends names libzookeeper-mt2 and postgresql-NN.
# - dpkg -i installs it, and dpkg --purge removes it again, in a private
#   root directory (dpkg --root) that holds a copy of this machine's
#   PostgreSQL installation without any zklock file: the TAP tests run as
#   the postgres user, not as root, and the machine's own installation (the
#   "make install" every other test uses) stays as it is, whatever happens
#   here.  PostgreSQL finds its share and lib directories relative to its
#   binaries, so a server started from the copy sees the package's files
#   and nothing else of zklock.  The private dpkg database has the machine's
#   entries for the packages the .deb depends on, so dpkg checks the
#   dependencies against what is installed here.
# - With the package installed, a server of that copy on a standalone
#   ZooKeeper: CREATE EXTENSION zklock loads the packaged library; a lock
#   taken with zk_lock shows in zk_locks and is released; CREATE EXTENSION
#   zklock VERSION '1.0' followed by ALTER EXTENSION zklock UPDATE reaches
#   the default version with the packaged scripts.
# - After dpkg --purge, every file the package listed (dpkg -L) is gone,
#   and so is every directory of its own, and CREATE EXTENSION zklock in a
#   new database fails.
use strict;
use warnings;

use lib 'lib';
use File::Basename qw(basename dirname);
use File::Copy qw(copy);
use File::Path qw(make_path);
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use ZkTest;

my $root = repo_root();
note "repository: $root";


# run(LOG, DIR, CMD...): run CMD in DIR (undef: here), its output to the
# file LOG; true if it exited 0.  On failure, its last lines as diag.
sub run
{
	my ($log, $dir, @cmd) = @_;
	my $pid = fork() // die "fork: $!";
	if ($pid == 0)
	{
		chdir $dir or die "chdir $dir: $!" if defined $dir;
		open STDIN, '<', '/dev/null';
		open STDOUT, '>>', $log or die "$log: $!";
		open STDERR, '>&', \*STDOUT;
		exec @cmd or die "exec $cmd[0]: $!";
	}
	waitpid $pid, 0;
	my $rc = $?;
	if ($rc != 0)
	{
		my @lines = split /\n/, (-f $log ? slurp_file($log) : '');
		diag("@cmd: exit " . ($rc >> 8) . "; last lines of $log:");
		diag($_) for @lines > 40 ? @lines[-40 .. -1] : @lines;
	}
	return $rc == 0;
}

# the output of a command, which must succeed
sub output
{
	my (@cmd) = @_;
	my ($out, $err) = ('', '');
	IPC::Run::run(\@cmd, '<', \undef, '>', \$out, '2>', \$err)
	  or die "@cmd failed: $err";
	return $out;
}

my $control = slurp_file("$root/zklock.control");
my ($default) = $control =~ /^\s*default_version\s*=\s*'([^']+)'/m;
ok(defined $default, "zklock.control has a default_version");
$default //= '?';

# ---------------------------------------------------------------- META.json

{
	my $meta = eval { decode_json(slurp_file("$root/META.json")) };
	ok($meta, 'META.json is valid JSON') or diag($@);
	$meta //= {};
	for my $key (qw(name abstract version maintainer license provides meta-spec))
	{
		ok(defined $meta->{$key}, "META.json has the required key $key");
	}
	is($meta->{name}, 'zklock', 'META.json: name');
	is(($meta->{'meta-spec'} // {})->{version}, '1.0.0', 'META.json: meta-spec version 1.0.0');
	my $semver = $default =~ /^\d+\.\d+$/ ? "$default.0" : $default;
	is($meta->{version}, $semver,
		"META.json: version is default_version $default as semver");
	my $ext = ($meta->{provides} // {})->{zklock} // {};
	is($ext->{version}, $semver, 'META.json: provides.zklock.version likewise');
	ok(defined $ext->{file} && -f "$root/$ext->{file}",
		'META.json: provides.zklock.file exists (' . ($ext->{file} // 'none') . ')');
	ok(defined $ext->{abstract} && length $ext->{abstract},
		'META.json: provides.zklock has an abstract');
	is($meta->{license}, 'postgresql', 'META.json: license postgresql');
	like($meta->{prereqs}{runtime}{requires}{PostgreSQL} // '', qr/^\d+\.\d+\.\d+$/,
		'META.json: runtime requires a PostgreSQL version, as semver');
}

my ($changelog_version) = slurp_file("$root/debian/changelog") =~ /^zklock \(([^)]+)\)/;
like($changelog_version // '', qr/^\Q$default\E-\d+$/,
	"debian/changelog packages version $default");

# ---------------------------------------------------------------- build

my $pg_bindir = output('pg_config', '--bindir');
chomp $pg_bindir;
my ($major) = output('pg_config', '--version') =~ /PostgreSQL (\d+)/;
my $pkg = "postgresql-$major-zklock";
my $pg_libdir = "/usr/lib/postgresql/$major/lib";
my $pg_extdir = "/usr/share/postgresql/$major/extension";
is(dirname($pg_bindir), "/usr/lib/postgresql/$major",
	"pg_config is Debian's PostgreSQL $major");

for my $tool (qw(dpkg-buildpackage dh pg_buildext lintian))
{
	ok((grep { -x "$_/$tool" } split /:/, $ENV{PATH}),
		"$tool is installed (test/install-deps.sh installs it)");
}

my $work = PostgreSQL::Test::Utils::tempdir('pkg');
my $log = "$PostgreSQL::Test::Utils::log_path/029_package_build.log";
unlink $log;
my $src = "$work/build/zklock-$default";
make_path($src);
my @files = grep { length }
  split /\0/, output('git', '-c', 'safe.directory=*', '-C', $root, 'ls-files',
	'-z', '-c', '-o', '--exclude-standard');
my $copied = 0;
for my $f (@files)
{
	next unless -f "$root/$f";    # deleted in the work tree
	make_path(dirname("$src/$f"));
	copy("$root/$f", "$src/$f") or die "copy $f: $!";
	chmod((stat "$root/$f")[2] & 07777, "$src/$f");
	$copied++;
}
ok(-f "$src/debian/rules" && -x "$src/debian/rules",
	"the repository's files were copied ($copied), debian/rules among them");

ok(run($log, $src, 'dpkg-buildpackage', '-us', '-uc', '-b'),
	'dpkg-buildpackage -us -uc -b succeeds');
my ($deb) = glob("$work/build/${pkg}_*.deb");
ok(defined $deb && -f $deb, "the package $pkg was built") or BAIL_OUT('no package');
note "package: " . basename($deb);
my ($changes) = glob("$work/build/zklock_*.changes");

ok(run("$work/lintian.log", undef, 'lintian', '--fail-on', 'error,warning', $changes),
	'lintian: no error or warning that debian/ does not override');

# ---------------------------------------------------------------- contents

my @contents = map { (split ' ', $_, 6)[5] } split /\n/, output('dpkg-deb', '-c', $deb);
s{^\./}{/} for @contents;
s{ -> .*$}{} for @contents;
my %in_deb = map { $_ => 1 } @contents;
ok($in_deb{"$pg_libdir/zklock.so"}, "the package has $pg_libdir/zklock.so");
ok($in_deb{"$pg_extdir/zklock.control"}, "the package has $pg_extdir/zklock.control");
my @scripts = map { basename($_) } sort glob("$root/sql/zklock--*.sql");
ok(@scripts >= 3, "the repository has extension scripts (@scripts)");
for my $s (@scripts)
{
	ok($in_deb{"$pg_extdir/$s"}, "the package has $pg_extdir/$s");
}
my @deb_scripts = sort map { basename($_) } grep { m{^\Q$pg_extdir\E/zklock--.*\.sql$} } @contents;
is("@deb_scripts", "@scripts", 'and no other extension script');

my $depends = output('dpkg-deb', '-f', $deb, 'Depends');
chomp $depends;
note "Depends: $depends";
my @deps = map { s/^\s+|\s+$//gr } split /[,|]/, $depends;
ok((grep { /^libzookeeper-mt2\b/ } @deps), 'Depends names libzookeeper-mt2');
ok((grep { /^postgresql-$major(\s|$)/ } @deps), "Depends names postgresql-$major");

# ---------------------------------------------------------------- private root

# A copy of this machine's PostgreSQL installation, without zklock's files.
my $proot = "$work/root";
make_path("$proot/usr/lib/postgresql", "$proot/usr/share/postgresql");
ok(run("$work/copy.log", undef, 'cp', '-a', "/usr/lib/postgresql/$major",
		"$proot/usr/lib/postgresql/")
	  && run("$work/copy.log", undef, 'cp', '-a', "/usr/share/postgresql/$major",
		"$proot/usr/share/postgresql/"),
	"a copy of PostgreSQL ${major}'s installation");
system('rm', '-rf', "$proot$pg_libdir/zklock.so", "$proot$pg_libdir/bitcode/zklock",
	"$proot$pg_libdir/bitcode/zklock.index.bc", glob("$proot$pg_extdir/zklock*"));
ok(!-e "$proot$pg_libdir/zklock.so" && !zklock_files(),
	'the copy has no zklock file before the package is installed');

# the zklock files in the copy's extension directory
sub zklock_files
{
	my @f = glob("$proot$pg_extdir/zklock*");
	return scalar @f;
}

# A dpkg database that knows the packages the .deb depends on, as installed
# on this machine (and with empty file lists: their files are not there).
make_path(map { "$proot/var/lib/dpkg/$_" } qw(info updates triggers));
{
	my %names = map { /^([a-z0-9][a-z0-9.+-]*)/ ? ($1 => 1) : () } @deps;
	my $status = '';
	for my $name (sort keys %names)
	{
		my ($out, $err) = ('', '');
		# a virtual package (postgresql-NN-jit-llvm) has no entry: a
		# provider's entry satisfies it
		next unless IPC::Run::run([ 'dpkg-query', '-s', $name ], '>', \$out, '2>', \$err);
		$status .= "$out\n";
		my $full = output('dpkg-query', '-W', '-f', '${binary:Package}', $name);
		open my $fh, '>', "$proot/var/lib/dpkg/info/$full.list" or die $!;
		close $fh;
	}
	open my $fh, '>', "$proot/var/lib/dpkg/status" or die $!;
	print $fh $status;
	close $fh;
	open $fh, '>', "$proot/var/lib/dpkg/available" or die $!;
	close $fh;
}
# the package's status in the private root: "ii" installed, "pn" purged,
# '' unknown
sub pkg_status
{
	my ($out, $err) = ('', '');
	IPC::Run::run([ 'dpkg-query', "--root=$proot", '-W', '-f', '${db:Status-Abbrev}', $pkg ],
		'>', \$out, '2>', \$err);
	return $out =~ s/\s+$//r;
}

sub dir_nonempty
{
	my ($d) = @_;
	opendir my $dh, $d or return 0;
	my @e = grep { $_ ne '.' && $_ ne '..' } readdir $dh;
	closedir $dh;
	return scalar @e;
}

my @dpkg = ('dpkg', "--root=$proot", "--log=$work/dpkg.log", '--force-not-root');

ok(run("$work/dpkg.out", undef, @dpkg, '-i', $deb), "dpkg -i $pkg (in the private root)");
is(pkg_status(), 'ii', "$pkg is installed");
my @listed = grep { length && $_ ne '/.' } split /\n/,
  output('dpkg-query', "--root=$proot", '-L', $pkg);
ok((grep { $_ eq "$pg_libdir/zklock.so" } @listed), 'dpkg -L lists zklock.so');
my %was_dir = map { $_ => -d "$proot$_" } @listed;
my @missing = grep { !-e "$proot$_" } @listed;
is("@missing", '', 'every file dpkg -L lists is there');

# ---------------------------------------------------------------- use it

my $zk = zk_standalone();
my $node = PostgreSQL::Test::Cluster->new('pkg',
	install_path => "$proot/usr/lib/postgresql/$major");
$node->init;
$node->append_conf('postgresql.conf',
	"zklock.hosts = '$zk->{hosts}'\n" . "cluster_name = 'pkg'\n");
$node->start;

is($node->safe_psql('postgres', q{SELECT setting FROM pg_config WHERE name = 'SHAREDIR'}),
	"$proot/usr/share/postgresql/$major",
	"the server is the private copy (its share directory is there)");
my %versions = map { $_ => 1 } map { /^zklock--([\d.]+)(?:--([\d.]+))?\.sql$/ ? grep { defined } ($1, $2) : () } @scripts;
is($node->safe_psql('postgres',
		q{SELECT string_agg(version, ',' ORDER BY version) FROM pg_available_extension_versions WHERE name = 'zklock'}),
	join(',', sort keys %versions),
	'every version of the packaged scripts is available');

$node->safe_psql('postgres', 'CREATE EXTENSION zklock');
is($node->safe_psql('postgres', q{SELECT extversion FROM pg_extension WHERE extname = 'zklock'}),
	$default, "CREATE EXTENSION zklock: version $default");

my $s = $node->background_psql('postgres');
my $token = $s->query_safe(q{SELECT zk_lock('/pkg/test')});
ok($token > 0, "zk_lock returns a fencing token ($token)");
is($s->query_safe(q{SELECT path || ':' || mode || ':' || scope FROM zk_locks}),
	'/pkg/test:exclusive:session', 'the lock is in zk_locks');
my $pid = $s->query_safe(q{SELECT pg_backend_pid()});
my @maps = grep { m{/zklock\.so$} } split /\n/, slurp_file("/proc/$pid/maps");
my %so = map { (split ' ', $_, 6)[5] => 1 } @maps;
is(join(',', sort keys %so), "$proot$pg_libdir/zklock.so",
	"the backend loaded the packaged zklock.so");
is($node->safe_psql('postgres', q{SELECT zk_try_lock('/pkg/test')}), 'f',
	'another backend cannot take it');
is($s->query_safe(q{SELECT zk_unlock('/pkg/test')}), 't', 'zk_unlock releases it');
is($s->query_safe(q{SELECT count(*) FROM zk_locks}), '0', 'zk_locks is empty again');
$s->quit;

$node->safe_psql('postgres', 'CREATE DATABASE upd');
$node->safe_psql('upd', q{CREATE EXTENSION zklock VERSION '1.0'});
is($node->safe_psql('upd', q{SELECT extversion FROM pg_extension WHERE extname = 'zklock'}),
	'1.0', q{CREATE EXTENSION zklock VERSION '1.0'});
$node->safe_psql('upd', 'ALTER EXTENSION zklock UPDATE');
is($node->safe_psql('upd', q{SELECT extversion FROM pg_extension WHERE extname = 'zklock'}),
	$default, "ALTER EXTENSION zklock UPDATE reaches $default");
is($node->safe_psql('upd',
		q{SELECT zk_lock('/pkg/updated') > 0, zk_unlock('/pkg/updated')}),
	't|t', 'the updated extension takes and releases a lock');

# ---------------------------------------------------------------- purge

ok(run("$work/dpkg.out", undef, @dpkg, '--purge', $pkg), "dpkg --purge $pkg");
like(pkg_status(), qr/^(pn|)$/, "$pkg is not installed any more (purged)");
# a directory stays only if something else is in it
my @left = grep { -e "$proot$_" && !($was_dir{$_} && dir_nonempty("$proot$_")) } @listed;
is("@left", '', 'every file (and own directory) the package listed is gone');
ok(!-e "$proot$pg_libdir/zklock.so" && !zklock_files(),
	'no zklock file is left in the private root');

$node->safe_psql('postgres', 'CREATE DATABASE after_purge');
my ($rc, $out, $err) = $node->psql('after_purge', 'CREATE EXTENSION zklock');
isnt($rc, 0, 'CREATE EXTENSION zklock in a new database fails after the purge');
like($err, qr/extension "zklock" is not available|zklock\.control/,
	'because the control file is gone');

$node->stop;
done_testing();
