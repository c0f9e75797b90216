/*-------------------------------------------------------------------------
 *
 * recipes/double_barrier_round.c
 *		What entering and leaving a double barrier share
 *		(recipes/double_barrier.c, recipes/double_barrier_leave.c): the
 *		look at the barrier, the
 *		participants of a round as its "ready" node lists them, the multis
 *		that write the barrier node on the version read, the removal of an
 *		old round's "ready", and the ERROR of a participant another client
 *		deleted.
 *
 * Removing "ready" goes with a setData of the barrier node on the version
 * read when "ready" was seen to be the old round's (the last leaver's
 * multi, ZkDoubleBarrierDeleteIfReady): every opening writes that node too,
 * so a "ready" that a new opening has just created is never the one
 * removed.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "recipes/double_barrier_round.h"
#include "base/node_data.h"
#include "base/text_encoding.h"
#include "client/client.h"

/*
 * ZkDoubleBarrierLook
 *		One look at the barrier node 'node': after 'rd', the caller's read
 *		of "ready" (an exists or a getData), the reads of the barrier node's
 *		version and of the participants, sent back to back, their answers
 *		awaited until deadline_ms (0: as long as needed).  The version is
 *		read first: a multi on it then succeeds only if no write on the
 *		barrier node (an opening, a withdrawal, a departure) landed after
 *		it, so none between it and the read of the participants.  Returns
 *		ZOK with the answers in *look (the caller frees ready and
 *		children); else, every answer freed, ZOPERATIONTIMEOUT when the
 *		deadline passed, or the first answer that is not what a look
 *		expects: "ready" neither there nor missing, then the children's,
 *		then the version's.
 */
int
ZkDoubleBarrierLook(const char *node, ZkOp *rd, int64 deadline_ms,
					ZkBarrierLook *look)
{
	ZkOp	   *gd = ZkGetData(node, ZK_NO_WATCH);
	ZkOp	   *ch = ZkGetChildren(node);
	int			rc;

	/* answers come in order: once the last is in, so are the others */
	if (!ZkOpWaitUntil(ch, deadline_ms))
		rc = ZOPERATIONTIMEOUT;
	else if (rd->rc != ZOK && rd->rc != ZNONODE)
		rc = rd->rc;
	else
		rc = ch->rc != ZOK ? ch->rc : gd->rc;
	if (rc == ZOK)
	{
		look->ready = rd;
		look->children = ch;
		look->version = gd->stat.version;
	}
	else
	{
		ZkOpFree(rd);
		ZkOpFree(ch);
	}
	ZkOpFree(gd);
	return rc;
}

/*
 * ZkDoubleBarrierRoundParse
 *		The participants the data of "ready" node 'ready' lists (the answer
 *		of a getData, rd), as palloc'd names; -1 if it lists none we can
 *		trust: a "ready" that Curator or kazoo created, data rewritten
 *		since the opening created the node with it (its version is not 0),
 *		or data that cannot be read, which a WARNING names.
 */
int
ZkDoubleBarrierRoundParse(const char *ready, const ZkOp *rd, char ***names)
{
	char	   *reason;
	int			n;
	ZkDataVerdict verdict = ZkReadBarrierRound(rd->value, rd->value_len,
											   names, &n, &reason);

	if (verdict == ZK_DATA_OK && rd->stat.version != 0)
	{
		verdict = ZK_DATA_INVALID;
		reason = psprintf("was written again after the barrier opened");
	}
	if (verdict == ZK_DATA_OK)
	{
		/* sorted, for the lookups of every leaving look (bsearch) */
		if (n > 1)
			qsort(*names, n, sizeof(char *), pg_qsort_strcmp);
		return n;
	}
	if (verdict == ZK_DATA_INVALID)
		ZkWarnNodeData(ready, reason,
					   "The members leaving count the participants older than the node instead.");
	pfree(reason);
	return -1;
}

/*
 * ZkDoubleBarrierRaiseMemberGone
 *		Our participant node was deleted by another client while we entered
 *		or left (the operation's context says which).
 */
void
ZkDoubleBarrierRaiseMemberGone(const char *znode)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("ZooKeeper double barrier participant \"%s\" disappeared",
					ZkUtf8ForMessage(znode)),
			 errdetail("Another client deleted the node.")));
}

/*
 * ZkDoubleBarrierMulti
 *		Send a multi and wait for its answer: ZOK, a lost connection, or
 *		the error of the request the server refused.
 */
int
ZkDoubleBarrierMulti(int n, const ZkMultiReq *reqs)
{
	ZkOp	   *op = ZkMulti(n, reqs);
	int			err;

	ZkOpWait(op);
	if (op->rc != ZOK && !ZkIsConnectionLoss(op->rc))
		(void) ZkMultiFailure(op, &err);
	else
		err = op->rc;
	ZkOpFree(op);
	return err;
}

/*
 * ZkDoubleBarrierDeleteVersioned
 *		Delete 'first' and, unless NULL, 'second' in one multi with a
 *		setData of the barrier node on 'version' (see the file header):
 *		they go only if the barrier node is as it was read.  Returns as
 *		ZkDoubleBarrierMulti does.
 */
int
ZkDoubleBarrierDeleteVersioned(const char *node, int version, const char *first,
							   const char *second)
{
	ZkMultiReq	reqs[3];
	int			n = 2;

	memset(reqs, 0, sizeof(reqs));
	reqs[0].kind = ZK_MULTI_SET;
	reqs[0].path = node;
	reqs[0].data = "";
	reqs[0].version = version;
	reqs[1].kind = ZK_MULTI_DELETE;
	reqs[1].path = first;
	reqs[1].version = -1;
	if (second != NULL)
	{
		reqs[2].kind = ZK_MULTI_DELETE;
		reqs[2].path = second;
		reqs[2].version = -1;
		n = 3;
	}
	return ZkDoubleBarrierMulti(n, reqs);
}

/*
 * ZkDoubleBarrierDeleteIfReady
 *		Delete 'target' if "ready" is still the one of the round 'round' (its
 *		czxid; 0: "ready" is missing), with a setData of the barrier node on
 *		the version read before "ready" (see the file header): never once a
 *		newer round has opened.  False if "ready" was otherwise, nothing
 *		deleted; true once 'target' is gone (with the barrier node, if that
 *		is gone).
 */
bool
ZkDoubleBarrierDeleteIfReady(const char *node, const char *ready, int64 round,
							 const char *target)
{
	for (;;)
	{
		ZkOp	   *gd = ZkGetData(node, ZK_NO_WATCH);
		ZkOp	   *ex = ZkExists(ready);
		int			rc;
		int			err;
		int			version;
		int64		seen;

		ZkOpWait(ex);
		rc = ZkIsConnectionLoss(gd->rc) ? gd->rc : ex->rc;
		seen = (rc == ZOK) ? ex->stat.czxid : 0;
		if (rc == ZOK || rc == ZNONODE)
			rc = gd->rc;		/* "ready" missing is an answer too */
		version = gd->stat.version;
		ZkOpFree(gd);
		ZkOpFree(ex);
		if (rc == ZNONODE)
			return true;		/* the barrier node, and so 'target', is gone */
		if (ZkAwaitReconnect(rc))
			continue;
		if (rc != ZOK)
			ZkRaiseForRc(rc);
		if (seen != round)
			return false;		/* not as asked: nothing to delete */

		err = ZkDoubleBarrierDeleteVersioned(node, version, target, NULL);
		if (err == ZOK || err == ZNONODE)
			return true;
		/* ZBADVERSION: changed; look again */
		if (!ZkAwaitReconnect(err) && err != ZBADVERSION)
			ZkRaiseForRc(err);
	}
}
