/*-------------------------------------------------------------------------
 *
 * common/text_encoding.c
 *		Texts between ZooKeeper's UTF-8 and the database encoding.
 *
 * ZooKeeper stores paths and node data as UTF-8, whatever the encoding of
 * the database a backend is connected to, so that a LATIN1 database and a
 * UTF-8 one (or a Java or Python client) meet on the same node for the
 * same lock.  Inside zklock every path, node name and owner text is UTF-8:
 * lock paths are converted once, when a user gives them (pg_server_to_any,
 * which cannot fail for valid input), and node data is written as UTF-8.
 * On the way out they go back to the database encoding:
 *
 *	- a value returned to SQL (a column of a view, a function's result)
 *	  with ZkUtf8ToServer, which raises an error (22P05) for a character
 *	  the database encoding cannot hold, as PostgreSQL's own conversions
 *	  do, rather than return bytes of the wrong encoding;
 *	- a text quoted in a message with ZkUtf8ForMessage, which never raises
 *	  an error (it is called while building one) and writes a character
 *	  the database encoding cannot hold as \uXXXX.
 *
 * With a UTF-8 or SQL_ASCII database both return their argument.  The
 * conversion function is looked up once per backend, the first time one
 * is needed inside a transaction, and kept, so that messages can be
 * converted later outside one (at backend exit, say); before that, a
 * message shows every non-ASCII character as \uXXXX.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "utils/memutils.h"

#include "common/text_encoding.h"

/* UTF-8 to the database encoding, once looked up */
static FmgrInfo from_utf8_proc;
static bool from_utf8_known = false;

static bool ensure_from_utf8(void);
static char *convert_from_utf8(const char *utf8, int len, bool for_message);

/*
 * ZkUtf8ToServer
 *		A UTF-8 text from ZooKeeper in the database encoding, for a value
 *		returned to SQL; an ERROR (22P05) names a character that the
 *		database encoding cannot hold.
 */
char *
ZkUtf8ToServer(const char *utf8)
{
	return convert_from_utf8(utf8, (int) strlen(utf8), false);
}

/*
 * ZkUtf8ForMessage
 *		A UTF-8 text in the database encoding, for quoting in a message:
 *		never raises an error, and writes what the database encoding
 *		cannot hold (or what is not valid UTF-8) as \uXXXX (\xNN).
 */
const char *
ZkUtf8ForMessage(const char *utf8)
{
	if (utf8 == NULL)
		return NULL;
	return convert_from_utf8(utf8, (int) strlen(utf8), true);
}

/*
 * ensure_from_utf8
 *		Look up the conversion from UTF-8 to the database encoding, once.
 *		False if it is not known yet and cannot be looked up now (outside
 *		a transaction).
 */
static bool
ensure_from_utf8(void)
{
	Oid			proc;

	if (from_utf8_known)
		return true;
	if (!IsTransactionState())
		return false;
	proc = FindDefaultConversionProc(PG_UTF8, GetDatabaseEncoding());
	if (!OidIsValid(proc))
		return false;
	fmgr_info_cxt(proc, &from_utf8_proc, TopMemoryContext);
	from_utf8_known = true;
	return true;
}

/*
 * convert_from_utf8
 *		The conversion behind ZkUtf8ToServer and ZkUtf8ForMessage.
 *
 * The conversion function is called in its noError mode: it converts up
 * to the first character it cannot, and says how far it got.  For a value
 * that is an error; for a message the character is written as an escape
 * and the conversion goes on after it.
 */
static char *
convert_from_utf8(const char *utf8, int len, bool for_message)
{
	int			dbenc = GetDatabaseEncoding();
	StringInfoData out;
	const char *p = utf8;
	const char *end = utf8 + len;
	char	   *dest;
	bool		convertible;

	if (dbenc == PG_UTF8 || dbenc == PG_SQL_ASCII)
	{
		/* ZooKeeper's paths are Java strings: always valid UTF-8 */
		if (!for_message && !pg_verify_mbstr(PG_UTF8, utf8, len, true))
			elog(ERROR, "text read from ZooKeeper is not valid UTF-8");
		return pnstrdup(utf8, len);
	}

	/* every server encoding has a conversion from UTF-8 */
	convertible = ensure_from_utf8();
	if (!for_message && !convertible)
		elog(ERROR, "no conversion from UTF8 to encoding \"%s\"",
			 GetDatabaseEncodingName());

	initStringInfo(&out);
	dest = palloc((size_t) len * MAX_CONVERSION_GROWTH + 1);
	while (p < end)
	{
		int			done = 0;
		int			charlen;

		if (convertible)
		{
			done = DatumGetInt32(FunctionCall6(&from_utf8_proc,
											   Int32GetDatum(PG_UTF8),
											   Int32GetDatum(dbenc),
											   CStringGetDatum(p),
											   CStringGetDatum(dest),
											   Int32GetDatum((int) (end - p)),
											   BoolGetDatum(true)));
			appendStringInfoString(&out, dest);
			p += done;
			if (p >= end)
				break;
		}
		else
		{
			/* no conversion yet: ASCII passes, the rest is escaped */
			while (p < end && !IS_HIGHBIT_SET(*p) && *p != '\0')
				appendStringInfoChar(&out, *p++);
			if (p >= end)
				break;
		}

		/* p is at a character that could not be converted */
		charlen = pg_utf_mblen((const unsigned char *) p);
		if (charlen > end - p ||
			!pg_utf8_islegal((const unsigned char *) p, charlen))
		{
			if (!for_message)
				elog(ERROR, "text read from ZooKeeper is not valid UTF-8");
			appendStringInfo(&out, "\\x%02X", (unsigned char) *p);
			p++;
			continue;
		}
		if (!for_message)
		{
			char	   *shown = convert_from_utf8(utf8, len, true);

			ereport(ERROR,
					(errcode(ERRCODE_UNTRANSLATABLE_CHARACTER),
					 errmsg("character U+%04X of ZooKeeper text \"%s\" has no equivalent in encoding \"%s\"",
							(unsigned int) utf8_to_unicode((const unsigned char *) p),
							shown, GetDatabaseEncodingName()),
					 errdetail("A database whose encoding is UTF8 can show every ZooKeeper path.")));
		}
		appendStringInfo(&out, "\\u%04X",
						 (unsigned int) utf8_to_unicode((const unsigned char *) p));
		p += charlen;
	}
	pfree(dest);
	return out.data;
}
