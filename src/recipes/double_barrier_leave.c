/*-------------------------------------------------------------------------
 *
 * recipes/double_barrier_leave.c
 *		Leaving a double barrier (recipes/double_barrier.c), together, once
 *		all of its round's members are out, and the departure of a member
 *		that goes without leaving.
 *
 * Leaving, as Curator's members leave: with the participants sorted by
 * name, the lowest waits for the highest to go (a watch on it); every
 * other member deletes its node and waits for the lowest to go.  The
 * lowest deletes its node once it is alone.  So a departure wakes at most
 * the lowest member, and the last one wakes all who wait.  A member has
 * left once no participant of its round remains.  The round's participants
 * are listed in the data of its "ready" node, which the opening wrote,
 * {"round":["<name>",...]} (one read when leaving begins; base/node_formats.c
 * reads it, and the "zklock-round:<name>,..." that older versions wrote);
 * for a "ready" that another client created, or whose data was rewritten
 * since it was created (its version is not 0) or cannot be read (a
 * WARNING names it), the participants older than it (czxid) count.
 * Either way a member of the next round, which may enter as soon as this
 * one is over, is never taken for one of this round.  The last member
 * deletes "ready" and its own node in one multi, so the members it wakes
 * find the round over.  A leave that times out deletes our node and
 * returns false.  A member whose node another client deleted fails
 * (55000) at its next look at the barrier, also when the others are all
 * out by then (a member that waits looks once more when woken).
 *
 * Watches.  Leavers watch participants with a getData, which sets no watch
 * on a node already gone.
 *
 * However an enter or leave ends, the member has left.  A member that
 * goes without leaving (DISCARD ALL, backend exit) departs
 * (ZkDoubleBarrierDepart): it leaves as a leave does, without waiting for
 * the others.  Its node goes; if no other participant of its round
 * remains, "ready" goes with it in the same multi, as the last leaver's
 * does; and the multi writes the barrier node on the version read, so of
 * two members departing at once one sees the other gone and removes
 * "ready".  A member that cannot depart (the session expired, the backend
 * was killed, the connection stayed down past zklock.connect_timeout)
 * loses its node with its session, and "ready" stays until the next
 * member to enter finds its round over and removes it
 * (recipes/double_barrier.c, "Entering").
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/pg_list.h"
#include "nodes/value.h"
#include "miscadmin.h"

#include "recipes/barrier.h"
#include "recipes/double_barrier_round.h"
#include "recipes/lock_timeout.h"
#include "base/operation_context.h"
#include "base/text_encoding.h"
#include "client/client.h"

static int	zk_depart_once(const char *node, const char *ready,
						   const char *znode, int64 deadline_ms);

/* A leave under way (ZkDoubleBarrierLeave), and what its last look saw. */
typedef struct ZkLeave
{
	const char *node;			/* the barrier node */
	const char *znode;			/* our participant node */
	const char *our_name;		/* its last component */
	char	   *ready;			/* <node>/ready */
	int64		deadline;		/* of the wait; 0: none */
	int64		round;			/* czxid of our round's "ready" */
	char	  **listed;			/* the round's participants, if known */
	int			nlisted;		/* -1: not known */
	List	   *aged;			/* names whose age is known: old enough */
	List	   *young;			/* and too young */
	bool		ours_exists;	/* our node may exist (not deleted by us) */
	bool		ours_unsure;	/* a delete of ours lost its answer */
	bool		first;			/* no look taken yet */
	/* the last look */
	char	  **names;			/* the round's participants present */
	int			n;
	int			version;		/* the barrier node's data version */
	bool		ready_left;		/* our round's "ready" is still there */
	bool		listed_ours;	/* our node is among the children */
} ZkLeave;

/* how one step of a leave ended */
typedef enum ZkLeaveStep
{
	ZK_LEAVE_AGAIN,				/* look again */
	ZK_LEAVE_DONE,				/* every participant of the round is out */
	ZK_LEAVE_TIMED_OUT			/* the wait is over, our node gone */
} ZkLeaveStep;

/*
 * zk_leave_participants
 *		From the barrier node's children 'ch', the participants of our
 *		round into lv->names (unsorted), and whether ours is among them:
 *		ours; everyone, before a round is known; the names "ready" listed;
 *		else those older than "ready", each asked for its age once (all
 *		pipelined) and remembered.  Returns ZOK, or the lost connection
 *		that cut an age's answer (then look again).
 */
static int
zk_leave_participants(ZkLeave *lv, const ZkOp *ch)
{
	ZkOp	  **ages = palloc0(sizeof(ZkOp *) * Max(ch->nchildren, 1));
	int			lost = ZOK;

	lv->names = palloc(sizeof(char *) * Max(ch->nchildren, 1));
	lv->n = 0;
	lv->listed_ours = false;
	for (int i = 0; i < ch->nchildren; i++)
	{
		const char *c = ch->children[i];
		bool		keep = false;

		if (strcmp(c, READY_NODE) == 0)
			continue;
		if (strcmp(c, lv->our_name) == 0)
			keep = lv->listed_ours = true;
		else if (lv->round == PG_INT64_MAX)
			keep = true;
		else if (lv->nlisted >= 0)
			keep = lv->nlisted > 0 &&
				bsearch(&c, lv->listed, lv->nlisted, sizeof(char *),
						pg_qsort_strcmp) != NULL;
		else if (list_member(lv->aged, makeString((char *) c)))
			keep = true;
		else if (!list_member(lv->young, makeString((char *) c)))
			ages[i] = ZkExists(psprintf("%s/%s", lv->node, c));
		if (keep)
			lv->names[lv->n++] = pstrdup(c);
	}
	for (int i = 0; i < ch->nchildren; i++)
	{
		char	   *c;

		if (ages[i] == NULL)
			continue;
		ZkOpWait(ages[i]);
		c = pstrdup(ch->children[i]);
		if (ZkIsConnectionLoss(ages[i]->rc))
			lost = ages[i]->rc;
		else if (ages[i]->rc == ZOK && ages[i]->stat.czxid < lv->round)
		{
			lv->aged = lappend(lv->aged, makeString(c));
			lv->names[lv->n++] = c;
		}
		else if (ages[i]->rc == ZOK)
			lv->young = lappend(lv->young, makeString(c));
		else if (ages[i]->rc != ZNONODE)
			ZkRaiseForRc(ages[i]->rc);
		ZkOpFree(ages[i]);
	}
	pfree(ages);
	return lost;
}

/*
 * ZkDoubleBarrierRoundOver
 *		Is no participant of the round whose "ready" has czxid 'round' left
 *		in the barrier node 'node' (ours, 'our_name', aside)?  Those older
 *		than "ready" count, as for a leave whose "ready" lists none: one
 *		pipelined read of their ages (zk_leave_participants).
 */
bool
ZkDoubleBarrierRoundOver(const char *node, const char *our_name, int64 round)
{
	ZkLeave    *lv = palloc0(sizeof(ZkLeave));

	lv->node = node;
	lv->our_name = our_name;
	lv->round = round;
	lv->nlisted = -1;
	for (;;)
	{
		ZkOp	   *ch = ZkGetChildrenAnswered(node);
		int			rc = ch->rc;

		if (rc == ZOK)
			rc = zk_leave_participants(lv, ch);
		ZkOpFree(ch);
		if (rc == ZOK)
			return lv->n == (lv->listed_ours ? 1 : 0);
		if (rc == ZNONODE)
			return true;		/* no barrier node: no participant */
		if (!ZkAwaitReconnect(rc))
			ZkRaiseForRc(rc);
	}
}

/*
 * zk_leave_look
 *		One look at the barrier: "ready" (the first time its data, which
 *		lists the round; then whether it is still there), the participants
 *		and the barrier node's version, in one round trip, plus the ages
 *		zk_leave_participants asks for.  Returns ZOK with the look in 'lv';
 *		ZNONODE when the barrier node is gone (so is everyone); or a lost
 *		connection, returned once the connection is back (look again).
 */
static int
zk_leave_look(ZkLeave *lv)
{
	ZkOp	   *rd = lv->first ? ZkGetData(lv->ready, ZK_NO_WATCH) :
		ZkExists(lv->ready);
	ZkBarrierLook look;
	int			rc = ZkDoubleBarrierLook(lv->node, rd, 0, &look);

	if (rc != ZOK)
	{
		if (rc != ZNONODE && !ZkAwaitReconnect(rc))
			ZkRaiseForRc(rc);
		return rc;
	}
	if (lv->first && rd->rc == ZOK)
	{
		lv->round = rd->stat.czxid;
		lv->nlisted = ZkDoubleBarrierRoundParse(lv->ready, rd, &lv->listed);
	}
	lv->ready_left = (rd->rc == ZOK && rd->stat.czxid == lv->round);
	ZkOpFree(rd);
	lv->first = false;
	lv->version = look.version;

	rc = zk_leave_participants(lv, look.children);
	ZkOpFree(look.children);
	(void) ZkAwaitReconnect(rc);
	return rc;
}

/*
 * zk_leave_last
 *		We are the last participant of the round: delete "ready" (if this
 *		round's) and our node at once, on the version of the last look.
 *		ZK_LEAVE_AGAIN when the barrier changed meanwhile or the answer was
 *		lost (look again); else ZK_LEAVE_DONE, our node gone.
 */
static ZkLeaveStep
zk_leave_last(ZkLeave *lv)
{
	if (lv->round != PG_INT64_MAX)
	{
		int			err = ZkDoubleBarrierDeleteVersioned(lv->node, lv->version,
														 lv->ready, lv->znode);

		/* a lost answer: whether ours went is not known */
		if (ZkIsConnectionLoss(err))
			lv->ours_unsure = true;
		if (err == ZBADVERSION || ZkAwaitReconnect(err))
			return ZK_LEAVE_AGAIN;
		if (err != ZOK && err != ZNONODE)
			ZkRaiseForRc(err);
		if (err == ZOK)
		{
			lv->ours_exists = false;
			return ZK_LEAVE_DONE;
		}
		/* "ready" is gone already: only ours to delete */
	}
	ZkDeleteSync(lv->znode);
	lv->ours_exists = false;
	return ZK_LEAVE_DONE;
}

/*
 * zk_leave_wait
 *		Others of the round are still in, and we are at position 'me' of
 *		the sorted participants: the lowest waits for the highest to go;
 *		every other member deletes its node (in the same round trip) and
 *		waits for the lowest.  ZK_LEAVE_AGAIN when the node waited for went
 *		or changed (look again); ZK_LEAVE_TIMED_OUT when the wait's deadline
 *		passed first, our node deleted.
 */
static ZkLeaveStep
zk_leave_wait(ZkLeave *lv, int me)
{
	const char *target = (me == 0) ? lv->names[lv->n - 1] : lv->names[0];
	char	   *target_path = psprintf("%s/%s", lv->node, target);
	ZkOp	   *del = NULL;
	ZkOp	   *w;
	int			rc;

	if (me != 0 && lv->ours_exists)
		del = ZkDelete(lv->znode, -1);
	/* a data watch: none is left on a node gone already */
	ZkWatchArm(target_path, ZK_WATCH_BLOCKER);
	w = ZkGetData(target_path, ZK_WATCH_BLOCKER);
	ZkOpWait(w);
	rc = w->rc;
	ZkOpFree(w);
	pfree(target_path);
	if (del != NULL)
	{
		int			drc = del->rc;

		ZkOpFree(del);
		if (drc == ZOK || drc == ZNONODE)
			lv->ours_exists = false;
		else if (ZkIsConnectionLoss(drc))
			lv->ours_unsure = true;
		else
			ZkRaiseForRc(drc);
	}
	if (ZkAwaitNodeGone(rc, lv->deadline) != ZK_NODE_WAIT_OVER)
		return ZK_LEAVE_AGAIN;	/* gone, or changed: look again */

	/* the wait is over: our node goes, the others are not waited for */
	if (lv->ours_exists)
	{
		ZkDeleteSync(lv->znode);
		lv->ours_exists = false;
	}
	return ZK_LEAVE_TIMED_OUT;
}

/*
 * zk_leave_step
 *		After a look: fail if another client deleted our node, and take the
 *		next step (see the file header).
 */
static ZkLeaveStep
zk_leave_step(ZkLeave *lv)
{
	int			me = -1;

	/*
	 * Our node, not deleted by us, is gone: another client deleted it (a
	 * member that waits would otherwise return true once the others are
	 * out).  A delete of ours whose answer was lost was applied, then.
	 */
	if (lv->ours_exists && !lv->listed_ours)
	{
		if (!lv->ours_unsure)
			ZkDoubleBarrierRaiseMemberGone(lv->znode);
		lv->ours_exists = false;
	}
	lv->ours_unsure = false;
	if (lv->n == 0)
	{
		/*
		 * Everyone of our round is out.  Its last member deletes "ready";
		 * if it went without doing so (it exited), we do.
		 */
		if (lv->ready_left)
			(void) ZkDoubleBarrierDeleteIfReady(lv->node, lv->ready, lv->round,
												lv->ready);
		return ZK_LEAVE_DONE;
	}
	qsort(lv->names, lv->n, sizeof(char *), pg_qsort_strcmp);
	for (int i = 0; i < lv->n; i++)
	{
		if (strcmp(lv->names[i], lv->our_name) == 0)
			me = i;
	}
	if (me == 0 && lv->n == 1)
		return zk_leave_last(lv);
	return zk_leave_wait(lv, me);
}

/*
 * ZkDoubleBarrierLeave
 *		Leave the double barrier (see the file header): true once every
 *		participant of our round has left; false once wait_ms has passed
 *		(0: do not wait); with wait_ms < 0 as long as needed, bounded by
 *		lock_timeout (55P03).  Our node, 'znode', is gone however it ends.
 *
 * The round's participants come from the data of its "ready" node, read
 * once; a "ready" that another client created lists none, and then the
 * participants older than it count (their ages asked once each).  The last
 * of the round deletes "ready" and its own node in one multi, with a
 * setData of the barrier node on the version read with the participants:
 * every member that waits for it is woken with the round over.
 */
bool
ZkDoubleBarrierLeave(const char *node, const char *path, const char *znode,
					 int64 wait_ms)
{
	/* in memory that an ERROR's longjmp leaves as it was: PG_CATCH reads it */
	ZkLeave    *lv = palloc0(sizeof(ZkLeave));
	bool		is_lock_timeout;
	ZkLeaveStep step = ZK_LEAVE_DONE;
	ZkOperationContext oc;

	lv->node = node;
	lv->znode = znode;
	lv->our_name = znode + strlen(node) + 1;
	lv->ready = psprintf("%s/%s", node, READY_NODE);
	lv->deadline = ZkWaitDeadline(ZkNowMs(), wait_ms, &is_lock_timeout);
	lv->round = PG_INT64_MAX;
	lv->nlisted = -1;
	lv->ours_exists = true;
	lv->first = true;

	ZkOperationPush(&oc, ZK_OPER_LEAVE_DOUBLE_BARRIER, path);
	PG_TRY();
	{
		for (;;)
		{
			int			rc = zk_leave_look(lv);

			if (rc == ZNONODE)
				break;			/* the barrier node is gone: so is everyone */
			if (rc != ZOK)
				continue;		/* the connection is back: look again */
			step = zk_leave_step(lv);
			if (step != ZK_LEAVE_AGAIN)
				break;
		}
	}
	PG_CATCH();
	{
		if (lv->ours_exists)
			ZkDeleteInBackground(znode);
		PG_RE_THROW();
	}
	PG_END_TRY();

	pfree(lv->ready);
	pfree(lv);
	if (step == ZK_LEAVE_TIMED_OUT && is_lock_timeout)
		ZkRaiseLockTimeout(ZK_WAITED_FOR_LEAVE, path);
	ZkOperationPop(&oc);
	return step != ZK_LEAVE_TIMED_OUT;
}

/*
 * zk_depart_once
 *		One look at the barrier and one multi of a departure (see
 *		ZkDoubleBarrierDepart): ZOK once our node is gone (with "ready" if
 *		we were the last of our round), ZBADVERSION or ZNONODE to look
 *		again, ZOPERATIONTIMEOUT if deadline_ms passed, else the error
 *		(a lost connection included).  Raises nothing of its own.
 */
static int
zk_depart_once(const char *node, const char *ready, const char *znode,
			   int64 deadline_ms)
{
	const char *our_name = znode + strlen(node) + 1;
	ZkBarrierLook look;
	ZkOp	   *ch;
	bool		ours_there = false;
	bool		others = false;
	bool		ready_there;
	char	  **listed = NULL;
	int			nlisted = -1;
	int			rc = ZkDoubleBarrierLook(node, ZkGetData(ready, ZK_NO_WATCH),
										 deadline_ms, &look);

	if (rc != ZOK)
		return rc == ZNONODE ? ZOK : rc;	/* the barrier node is gone */
	ch = look.children;
	ready_there = (look.ready->rc == ZOK);
	if (ready_there)
		nlisted = ZkDoubleBarrierRoundParse(ready, look.ready, &listed);

	/*
	 * The others of our round, if "ready" is there: those it lists; without
	 * a list we trust, every other participant counts (ours is a zklock
	 * round, and so listed, unless another client rewrote it: "ready" then
	 * stays for the next member to enter, see the file header).
	 */
	for (int i = 0; i < ch->nchildren; i++)
	{
		const char *c = ch->children[i];

		if (strcmp(c, READY_NODE) == 0)
			continue;
		if (strcmp(c, our_name) == 0)
			ours_there = true;
		else if (ready_there &&
				 (nlisted < 0 ||
				  (nlisted > 0 &&
				   bsearch(&c, listed, nlisted, sizeof(char *),
						   pg_qsort_strcmp) != NULL)))
			others = true;
	}
	ZkOpFree(look.ready);
	ZkOpFree(ch);

	if (ready_there && !others)
	{
		/* the last of our round: "ready" and ours, at once */
		rc = ZkDoubleBarrierDeleteVersioned(node, look.version, ready,
											ours_there ? znode : NULL);
	}
	else if (ours_there)
		rc = ZkDoubleBarrierDeleteVersioned(node, look.version, znode, NULL);
	else
		rc = ZOK;				/* ours is gone, "ready" is not ours to take */
	return rc;
}

/*
 * ZkDoubleBarrierDepart
 *		A member that goes without leaving (DISCARD ALL, backend exit)
 *		leaves as a leave does, without waiting for the others (see the
 *		file header): its node 'znode' goes, and "ready" with it if no
 *		other participant of its round remains.  Gives up at deadline_ms
 *		and returns false, our node then perhaps still there (the caller
 *		deletes it, or the session's end does).  Raises no ERROR of its
 *		own, so that it may run at backend exit (with interrupts held, as
 *		they are there, the waits end only by their answer or the
 *		deadline).
 */
bool
ZkDoubleBarrierDepart(const char *node, const char *znode, int64 deadline_ms)
{
	char	   *ready = psprintf("%s/%s", node, READY_NODE);
	bool		departed = false;

	for (;;)
	{
		int			rc = zk_depart_once(node, ready, znode, deadline_ms);

		if (rc == ZOK)
		{
			departed = true;
			break;
		}
		if (ZkNowMs() >= deadline_ms)
			break;
		if (rc == ZBADVERSION || rc == ZNONODE)
			continue;			/* another member moved: look again */
		if (!ZkIsConnectionLoss(rc) || !ZkWaitConnectedUntil(deadline_ms))
			break;
	}
	pfree(ready);
	return departed;
}
