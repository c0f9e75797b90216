/*-------------------------------------------------------------------------
 *
 * base/paths.c
 *		Validation of user-supplied lock paths.
 *
 * A lock path names a lock, like "/jobs/nightly".  It is appended to
 * zklock.root to form the ZooKeeper path of the lock node, so it must be a
 * path ZooKeeper accepts and must never leave the root: absolute, no empty
 * segment, no "." or ".." segment, no trailing "/", no character ZooKeeper
 * refuses, at most ZK_MAX_PATH_BYTES bytes.  A segment that looks like a
 * queue node is refused too: as a child of another lock's node it would be
 * taken for a contender in that lock's queue.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "mb/pg_wchar.h"

#include "base/contender.h"
#include "base/paths.h"
#include "base/text_encoding.h"
#include "base/vocabulary.h"

static char *zk_path_for_message(const char *path, size_t len);

/*
 * ZkLockPathProblem
 *		Why a UTF-8 lock path is not acceptable, as a translated DETAIL
 *		sentence, or NULL if it is fine.  Also used to check zklock.root.
 */
const char *
ZkLockPathProblem(const char *path)
{
	size_t		len = strlen(path);
	const char *seg;

	if (len == 0)
		return _("The path is empty.");
	if (len > ZK_MAX_PATH_BYTES)
		return psprintf(_("The path is %zu bytes long; the limit is %d bytes."),
						len, ZK_MAX_PATH_BYTES);
	if (path[0] != '/')
		return _("The path must start with \"/\".");
	if (len == 1)
		return _("The root cannot be locked: name a node below it.");
	if (path[len - 1] == '/')
		return _("The path must not end with \"/\".");
	/*
	 * printable ASCII is valid UTF-8 that ZooKeeper accepts: decode the rest
	 * (lock paths are mostly ASCII, and they are checked on every call)
	 */
	if (!ZkPrintableAscii(path))
	{
		if (!pg_verify_mbstr(PG_UTF8, path, len, true))
			return _("The path is not valid UTF-8.");

		for (const unsigned char *p = (const unsigned char *) path; *p;
			 p += pg_utf_mblen(p))
		{
			pg_wchar	c = utf8_to_unicode(p);

			if (c <= 0x1F || (c >= 0x7F && c <= 0x9F))
				return _("The path contains a control character.");
			/*
			 * other characters ZooKeeper's server refuses in a path (its
			 * PathUtils check works on UTF-16 units, so anything beyond
			 * U+FFFF, which needs a surrogate pair, is refused as well)
			 */
			if ((c >= 0xD800 && c <= 0xF8FF) || c >= 0xFFF0)
				return psprintf(_("The path contains the character U+%04X, which ZooKeeper does not accept."),
								(unsigned int) c);
		}
	}

	/* walk the segments: each starts after a '/' */
	seg = path + 1;
	for (;;)
	{
		const char *end = strchr(seg, '/');
		size_t		seglen = end ? (size_t) (end - seg) : strlen(seg);
		ZkContender dummy;
		char	   *segment;

		if (seglen == 0)
			return _("The path contains an empty segment (\"//\").");
		if ((seglen == 1 && seg[0] == '.') ||
			(seglen == 2 && seg[0] == '.' && seg[1] == '.'))
			return _("The path contains a \".\" or \"..\" segment.");

		/* a queue node's name ends in its sequence number's digits */
		if (seg[seglen - 1] >= '0' && seg[seglen - 1] <= '9')
		{
			segment = pnstrdup(seg, seglen);
			if (ZkParseContender(segment, &dummy))
				return psprintf(_("The segment \"%s\" looks like a lock queue node."),
								segment);
			pfree(segment);
		}

		if (end == NULL)
			break;
		seg = end + 1;
	}
	return NULL;
}

/*
 * zk_path_for_message
 *		A refused path (in the database encoding) as it should appear in an
 *		error message: at most about 60 bytes, escaped as every text quoted
 *		in a message is (ZkUtf8ForMessage: a character that does not print
 *		as \xNN or \uXXXX), so that none can hide in the message or break
 *		it (or a log line) apart.
 */
static char *
zk_path_for_message(const char *path, size_t len)
{
	size_t		shown = len > 64 ? (size_t) pg_mbcliplen(path, (int) len, 60) : len;
	const char *utf8 = path;

	/* SQL_ASCII: any bytes, which ZkUtf8ForMessage escapes if not UTF-8 */
	if (GetDatabaseEncoding() != PG_SQL_ASCII)
		utf8 = pg_server_to_any(path, (int) shown, PG_UTF8);
	if (utf8 == path)
		utf8 = pnstrdup(path, shown);
	return psprintf("%s%s", ZkUtf8ForMessage(utf8), shown < len ? "..." : "");
}

/*
 * ZkCheckLockPath
 *		Check a lock path given in the database encoding.  Raises an ERROR
 *		(22023) saying why it is refused; returns the path in UTF-8, which is
 *		what ZooKeeper stores.
 */
char *
ZkCheckLockPath(const char *path)
{
	size_t		len = strlen(path);
	char	   *utf8;
	const char *problem;

	if (len > ZK_MAX_PATH_BYTES)
		utf8 = (char *) path;	/* too long anyway; do not convert */
	else
		utf8 = pg_server_to_any(path, (int) len, PG_UTF8);


	problem = ZkLockPathProblem(utf8);
	if (problem != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid ZooKeeper lock path \"%s\"",
						zk_path_for_message(path, len)),
				 errdetail_internal("%s", problem)));
	return utf8;
}
