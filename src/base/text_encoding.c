/*-------------------------------------------------------------------------
 *
 * base/text_encoding.c
 *		Texts between ZooKeeper's UTF-8 and the database encoding.
 *
 * ZooKeeper stores paths and node data as UTF-8, whatever the encoding of
 * the database a backend is connected to, so that a LATIN1 database and a
 * UTF-8 one (or a Java or Python client) meet on the same node for the
 * same lock.  Inside zklock every path, node name and owner text is UTF-8:
 * lock paths are converted once, when a user gives them (pg_server_to_any,
 * which cannot fail for valid input), and node data is written as UTF-8.
 * On the way out they go back to the database encoding, and neither way
 * ever raises an error, so that a node another client made, with text the
 * database encoding cannot hold, takes no view and no message away:
 *
 *	- a value returned to SQL (a column of a view, a function's result)
 *	  with ZkUtf8ToServer, which writes a character the database encoding
 *	  cannot hold as \uXXXX (its code point, at least four hex digits)
 *	  and a byte that is not valid UTF-8 as \xNN;
 *	- a text quoted in a message with ZkUtf8ForMessage, which does the
 *	  same and also writes every character that does not print as an
 *	  escape, so that none can hide in or break apart a message (or a log
 *	  line): \xNN for those below U+0100 (C0 controls, DEL, C1 controls,
 *	  the soft hyphen), \uXXXX for the others (zk_nonprinting says which).
 *
 * With a UTF-8 or SQL_ASCII database nothing is converted, only escaped.
 * The conversion function is looked up once per backend, the first time
 * one is needed inside a transaction, and kept, so that messages can be
 * converted later outside one (at backend exit, say); before that, every
 * non-ASCII character is written as \uXXXX.
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

#include "base/text_encoding.h"

/* UTF-8 to the database encoding, once looked up */
static FmgrInfo from_utf8_proc;
static bool from_utf8_known = false;

static bool zk_nonprinting(pg_wchar c);
static char *zk_escape_utf8(const char *utf8, bool for_message);
static bool ensure_from_utf8(void);
static char *convert_from_utf8(const char *utf8);

/*
 * ZkUtf8ToServer
 *		A UTF-8 text from ZooKeeper in the database encoding, for a value
 *		returned to SQL: what the database encoding cannot hold is written
 *		as \uXXXX, a byte that is not valid UTF-8 as \xNN.  Never raises
 *		an error.
 */
char *
ZkUtf8ToServer(const char *utf8)
{
	if (ZkPrintableAscii(utf8))
		return pstrdup(utf8);
	return convert_from_utf8(zk_escape_utf8(utf8, false));
}

/*
 * ZkUtf8ForMessage
 *		A UTF-8 text in the database encoding, for quoting in a message:
 *		as ZkUtf8ToServer, and every character that does not print is
 *		written as \xNN (below U+0100) or \uXXXX.  Never raises an error.
 */
const char *
ZkUtf8ForMessage(const char *utf8)
{
	if (utf8 == NULL)
		return NULL;
	if (ZkPrintableAscii(utf8))
		return pstrdup(utf8);
	return convert_from_utf8(zk_escape_utf8(utf8, true));
}

/*
 * zk_nonprinting
 *		Characters that do not print: the C0 and C1 controls and DEL, and
 *		the invisible format characters and separators that can be told
 *		by their code point alone (soft hyphen, Arabic letter mark,
 *		Mongolian vowel separator, zero-width space, joiners and direction
 *		marks, line and paragraph separators, direction embeddings and
 *		isolates, word joiner and invisible operators, byte order mark,
 *		interlinear annotation marks).
 */
static bool
zk_nonprinting(pg_wchar c)
{
	return c < 0x20 ||
		(c >= 0x7F && c <= 0x9F) ||
		c == 0xAD ||
		c == 0x61C ||
		c == 0x180E ||
		(c >= 0x200B && c <= 0x200F) ||
		(c >= 0x2028 && c <= 0x202E) ||
		(c >= 0x2060 && c <= 0x206F) ||
		c == 0xFEFF ||
		(c >= 0xFFF9 && c <= 0xFFFB);
}

/*
 * ZkPrintableAscii
 *		Is every byte printable ASCII (0x20 to 0x7E)?  Then the text is the
 *		same in every database encoding and needs no escape, and is valid
 *		UTF-8: most paths are like that.
 */
bool
ZkPrintableAscii(const char *text)
{
	for (const unsigned char *p = (const unsigned char *) text; *p; p++)
	{
		if (*p < 0x20 || *p > 0x7E)
			return false;
	}
	return true;
}

/*
 * zk_escape_utf8
 *		The UTF-8 text with each byte that is not valid UTF-8 written as
 *		\xNN and, 'for_message', each character that does not print
 *		written as \xNN (below U+0100) or \uXXXX: valid UTF-8 whatever
 *		the input, ready for the conversion.
 */
static char *
zk_escape_utf8(const char *utf8, bool for_message)
{
	StringInfoData out;
	const unsigned char *p = (const unsigned char *) utf8;

	initStringInfo(&out);
	while (*p)
	{
		int			charlen = pg_utf_mblen(p);
		pg_wchar	c;

		if (charlen > (int) strnlen((const char *) p, charlen) ||
			!pg_utf8_islegal(p, charlen))
		{
			appendStringInfo(&out, "\\x%02X", *p);
			p++;
			continue;
		}
		c = utf8_to_unicode(p);
		if (for_message && zk_nonprinting(c))
		{
			if (c < 0x100)
				appendStringInfo(&out, "\\x%02X", (unsigned int) c);
			else
				appendStringInfo(&out, "\\u%04X", (unsigned int) c);
		}
		else
			appendBinaryStringInfo(&out, (const char *) p, charlen);
		p += charlen;
	}
	return out.data;
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
 *		Valid UTF-8 (zk_escape_utf8's) in the database encoding, what it
 *		cannot hold written as \uXXXX.
 *
 * The conversion function is called in its noError mode: it converts up
 * to the first character it cannot, and says how far it got; that
 * character is written as an escape and the conversion goes on after it.
 * PostgreSQL's pg_do_encoding_conversion_buf makes the same call, but looks
 * the function up by its Oid each time (OidFunctionCall6: a pg_proc lookup,
 * the conversion functions being in loadable modules), which needs a
 * transaction; the FmgrInfo kept here converts outside one too.
 */
static char *
convert_from_utf8(const char *utf8)
{
	int			dbenc = GetDatabaseEncoding();
	int			len = (int) strlen(utf8);
	StringInfoData out;
	const char *p = utf8;
	const char *end = utf8 + len;
	char	   *dest;
	bool		convertible;

	if (dbenc == PG_UTF8 || dbenc == PG_SQL_ASCII)
		return (char *) utf8;

	/* every server encoding has a conversion from UTF-8 */
	convertible = ensure_from_utf8();

	initStringInfo(&out);
	dest = palloc((size_t) len * MAX_CONVERSION_GROWTH + 1);
	while (p < end)
	{
		int			done;

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
			while (p < end && !IS_HIGHBIT_SET(*p))
				appendStringInfoChar(&out, *p++);
			if (p >= end)
				break;
		}

		/* p is at a character that could not be converted */
		appendStringInfo(&out, "\\u%04X",
						 (unsigned int) utf8_to_unicode((const unsigned char *) p));
		p += pg_utf_mblen((const unsigned char *) p);
	}
	pfree(dest);
	return out.data;
}
