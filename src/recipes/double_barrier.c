/*-------------------------------------------------------------------------
 *
 * recipes/double_barrier.c
 *		Double barriers laid out like Apache Curator's
 *		DistributedDoubleBarrier: members enter together, once `members' of
 *		them are in, and leave together, once all of them are out.
 *
 * The double barrier "/d" is the node <zklock.root>/d (a container, made
 * with its parents when missing).  Each participant is an ephemeral child
 * named by a fresh UUID; the member whose arrival completes the count
 * creates the persistent child "ready", which opens the barrier.  Curator's
 * members (and kazoo's, whose nodes are hex UUIDs) use the same nodes.
 *
 * Entering.  One round trip: an exists of "ready" that leaves a watch on
 * it (its creation is the opening: a waiter returns on that event), the
 * create of our node, and reads of the participants and of the barrier
 * node's version, sent back to back.  A "ready" found there means
 * a round is under way: a member can enter only before the barrier opens,
 * so our node is deleted and the call fails.  Unless no participant of that
 * round (older than "ready") remains: then the round is over, but its
 * members went without leaving (they exited, or their leave timed out),
 * and the arriving member removes its "ready" (zk_clear_ready) and goes on.
 * Otherwise, if the participants are as many as `members', this member
 * opens the barrier with one multi: a setData of the barrier node on the
 * version read, a check of every participant counted (each still exists),
 * and the create of "ready".  Else it waits for the watch on "ready": the
 * members waiting to enter are woken once, by the opening.  A member whose
 * node another client deleted while it waited is not in, and must not
 * open the barrier for the others either: its node is missing from every
 * later look at the barrier, and a member woken by the opening asks for
 * its node once (one exists) before it enters.  Either way the call fails
 * (55000).
 *
 * A member whose wait ends (wait_ms, lock_timeout) withdraws with one
 * multi: a setData of the barrier node on the version read, and the delete
 * of its node, if "ready" does not exist yet.  Opening and withdrawing both
 * write the barrier node on a version they read, so of an opening that
 * counted this member and its withdrawal only one succeeds: a member that
 * timed out is never counted by whoever opens after it, and a member whose
 * withdrawal loses that race was counted and has entered (true).  So a
 * barrier never opens with fewer than `members' participants present
 * (unlike Curator's, whose timed-out member leaves its node, and kazoo's).
 * A member cancelled at the very moment another opens may have been
 * counted: its node is deleted in the background.
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
 * Removing "ready" goes with a setData of the barrier node on the version
 * read when "ready" was seen to be the old round's (the last leaver's
 * multi, zk_clear_ready): every opening writes that node too, so a "ready"
 * that a new opening has just created is never the one removed.
 *
 * Watches.  A waiter watches "ready" with an exists (it waits for its
 * creation); a member that gives up removes that watch, which the server
 * would keep otherwise.  Leavers watch participants with a getData, which
 * sets no watch on a node already gone.
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
 * member to enter finds its round over and removes it (see "Entering").
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "lib/stringinfo.h"
#include "nodes/pg_list.h"
#include "nodes/value.h"
#include "miscadmin.h"
#include "utils/json.h"

#include "cluster/path_kind.h"
#include "recipes/barrier.h"
#include "base/contender.h"
#include "recipes/attempt.h"
#include "base/node_data.h"
#include "base/operation_context.h"
#include "base/text_encoding.h"
#include "client/client.h"

#define READY_NODE		"ready"

/* The barrier as one round of reads saw it. */
typedef struct ZkBarrierView
{
	bool		ready;			/* "ready" exists */
	int64		ready_czxid;
	int			n;				/* participants (every child but "ready") */
	char	  **names;
	int			version;		/* the barrier node's data version */
} ZkBarrierView;

static void zk_view_take(ZkBarrierView *view, ZkOp *ready, ZkOp *children,
						 ZkOp *data);
static int	zk_view_read(const char *node, const char *ready,
						 ZkBarrierView *view);
static void zk_view_look(const char *node, const char *ready,
						 ZkBarrierView *view);
static int64 zk_enter_create(const char *node, const char *path,
							 const char *ours, const char *ready,
							 const char *data, int datalen,
							 ZkBarrierView *view, volatile bool *created);
static int	zk_open(const char *node, const char *ready,
					const ZkBarrierView *view);
static bool zk_withdraw(const char *node, const char *ours,
						const char *ready);
static bool zk_view_has(const ZkBarrierView *view, const char *name);
static void zk_raise_member_gone(const char *znode);
static bool zk_round_over(const char *node, const char *our_name,
						  int64 round);
static void zk_clear_ready(const char *node, const char *ready, int64 round);
static int	zk_multi_run(int n, const ZkMultiReq *reqs, int *which);
static int	zk_delete_versioned(const char *node, int version,
								const char *first, const char *second,
								int *which);
static int	zk_name_cmp(const void *a, const void *b);
static char *zk_round_data(const ZkBarrierView *view, int *len);
static int	zk_round_parse(const char *ready, const ZkOp *rd, char ***names);
static int	zk_depart_once(const char *node, const char *ready,
						   const char *znode, int64 deadline_ms);

static int
zk_name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *) a, *(const char *const *) b);
}

/*
 * zk_round_data
 *		The data of the "ready" node an opening creates: the round's
 *		participants, {"round":["<name>",...]}, so that leavers know them
 *		without asking for each one's age.
 */
static char *
zk_round_data(const ZkBarrierView *view, int *len)
{
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfoString(&buf, "{\"round\":[");
	for (int i = 0; i < view->n; i++)
	{
		if (i > 0)
			appendStringInfoChar(&buf, ',');
		escape_json(&buf, view->names[i]);
	}
	appendStringInfoString(&buf, "]}");
	*len = buf.len;
	return buf.data;
}

/*
 * zk_round_parse
 *		The participants the data of "ready" node 'ready' lists (the answer
 *		of a getData, rd), as palloc'd names; -1 if it lists none we can
 *		trust: a "ready" that Curator or kazoo created, data rewritten
 *		since the opening created the node with it (its version is not 0),
 *		or data that cannot be read, which a WARNING names.
 */
static int
zk_round_parse(const char *ready, const ZkOp *rd, char ***names)
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
			qsort(*names, n, sizeof(char *), zk_name_cmp);
		return n;
	}
	if (verdict == ZK_DATA_INVALID)
		ZkWarnNodeData(ready, reason,
					   "The members leaving count the participants older than the node instead.");
	pfree(reason);
	return -1;
}

/*
 * zk_view_take
 *		Fill a view from the answers of an exists of "ready", a getChildren
 *		and a getData of the barrier node (all ZOK, or "ready" ZNONODE).
 */
static void
zk_view_take(ZkBarrierView *view, ZkOp *ready, ZkOp *children, ZkOp *data)
{
	view->ready = (ready->rc == ZOK);
	view->ready_czxid = view->ready ? ready->stat.czxid : 0;
	view->n = 0;
	view->names = palloc(sizeof(char *) * Max(children->nchildren, 1));
	for (int i = 0; i < children->nchildren; i++)
	{
		if (strcmp(children->children[i], READY_NODE) == 0)
			view->ready = true; /* created after the exists: open */
		else
			view->names[view->n++] = pstrdup(children->children[i]);
	}
	view->version = data->stat.version;
}

/*
 * zk_view_read
 *		One round of reads of the barrier, leaving a watch on "ready" for
 *		the path armed with ZkWatchArm (the caller arms it).  Returns ZOK,
 *		or a lost connection (the caller reads again once it is back).
 */
static int
zk_view_read(const char *node, const char *ready, ZkBarrierView *view)
{
	ZkOp	   *ex = ZkExistsWatched(ready);
	ZkOp	   *ch = ZkGetChildren(node);
	ZkOp	   *gd = ZkGetData(node, ZK_NO_WATCH);
	int			rc;

	ZkOpWait(gd);
	/* the first answer that is not what we expect decides */
	if (ZkIsConnectionLoss(ex->rc) || (ex->rc != ZOK && ex->rc != ZNONODE))
		rc = ex->rc;
	else
		rc = ch->rc != ZOK ? ch->rc : gd->rc;
	if (rc == ZOK)
		zk_view_take(view, ex, ch, gd);
	ZkOpFree(ex);
	ZkOpFree(ch);
	ZkOpFree(gd);
	if (rc != ZOK && !ZkIsConnectionLoss(rc))
		ZkRaiseForRc(rc);
	return rc;
}

/*
 * zk_view_look
 *		Arm the watch on "ready" and read the barrier (zk_view_read) until
 *		the reads are answered, riding out lost connections.
 */
static void
zk_view_look(const char *node, const char *ready, ZkBarrierView *view)
{
	ZkWatchArm(ready);
	while (ZkAwaitReconnect(zk_view_read(node, ready, view)))
		;
}

/*
 * zk_view_has
 *		Is the participant 'name' among the view's?
 */
static bool
zk_view_has(const ZkBarrierView *view, const char *name)
{
	for (int i = 0; i < view->n; i++)
	{
		if (strcmp(view->names[i], name) == 0)
			return true;
	}
	return false;
}

/*
 * zk_raise_member_gone
 *		Our participant node was deleted by another client while we entered
 *		or left (the operation's context says which).
 */
static void
zk_raise_member_gone(const char *znode)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("ZooKeeper double barrier participant \"%s\" disappeared",
					ZkUtf8ForMessage(znode)),
			 errdetail("Another client deleted the node.")));
}

/*
 * zk_multi_run
 *		Send a multi and wait for its answer: ZOK, a lost connection, or
 *		the error of the request the server refused, whose index goes to
 *		*which (if not NULL; -1 when no request was refused).
 */
static int
zk_multi_run(int n, const ZkMultiReq *reqs, int *which)
{
	ZkOp	   *op = ZkMulti(n, reqs);
	int			err;
	int			refused = -1;

	ZkOpWait(op);
	if (op->rc != ZOK && !ZkIsConnectionLoss(op->rc))
		refused = ZkMultiFailure(op, &err);
	else
		err = op->rc;
	ZkOpFree(op);
	if (which != NULL)
		*which = refused;
	return err;
}

/*
 * zk_delete_versioned
 *		Delete 'first' and, unless NULL, 'second' in one multi with a
 *		setData of the barrier node on 'version' (see the file header):
 *		they go only if the barrier node is as it was read.  Returns as
 *		zk_multi_run does; 'first' is request 1, 'second' request 2.
 */
static int
zk_delete_versioned(const char *node, int version, const char *first,
					const char *second, int *which)
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
	return zk_multi_run(n, reqs, which);
}

/*
 * zk_round_over
 *		Is no participant of the round whose "ready" has czxid 'round' left
 *		(ours aside)?  One pipelined read of every participant.
 */
static bool
zk_round_over(const char *node, const char *our_name, int64 round)
{
	for (;;)
	{
		ZkOp	   *ch = ZkGetChildrenAnswered(node);
		ZkOp	  **ages;
		bool		over = true;
		int			lost = ZOK; /* a lost connection, if one was met */
		int			rc = ch->rc;

		if (rc != ZOK)
		{
			ZkOpFree(ch);
			if (rc == ZNONODE)
				return true;
			ZkRaiseForRc(rc);
		}
		ages = palloc0(sizeof(ZkOp *) * Max(ch->nchildren, 1));
		for (int i = 0; i < ch->nchildren; i++)
		{
			if (strcmp(ch->children[i], READY_NODE) != 0 &&
				strcmp(ch->children[i], our_name) != 0)
				ages[i] = ZkExists(psprintf("%s/%s", node, ch->children[i]));
		}
		for (int i = 0; i < ch->nchildren; i++)
		{
			if (ages[i] == NULL)
				continue;
			ZkOpWait(ages[i]);
			if (ZkIsConnectionLoss(ages[i]->rc))
				lost = ages[i]->rc;
			else if (ages[i]->rc == ZOK && ages[i]->stat.czxid < round)
				over = false;
			else if (ages[i]->rc != ZOK && ages[i]->rc != ZNONODE)
				ZkRaiseForRc(ages[i]->rc);
			ZkOpFree(ages[i]);
		}
		pfree(ages);
		ZkOpFree(ch);
		if (!ZkAwaitReconnect(lost))
			return over;
	}
}

/*
 * zk_clear_ready
 *		Delete "ready" if it is still the one of the round 'round' (its
 *		czxid), with a setData of the barrier node on the version read
 *		with it (see the file header): never a newer round's.
 */
static void
zk_clear_ready(const char *node, const char *ready, int64 round)
{
	for (;;)
	{
		ZkOp	   *gd = ZkGetData(node, ZK_NO_WATCH);
		ZkOp	   *ex = ZkExists(ready);
		int			rc;
		int			err;
		int			version;

		ZkOpWait(ex);
		rc = ZkIsConnectionLoss(gd->rc) ? gd->rc : ex->rc;
		version = gd->stat.version;
		if (rc == ZOK && gd->rc != ZOK)
			rc = gd->rc;
		if (rc == ZOK && ex->stat.czxid != round)
			rc = ZNONODE;		/* another round's: not ours to remove */
		ZkOpFree(gd);
		ZkOpFree(ex);
		if (rc == ZNONODE)
			return;
		if (ZkAwaitReconnect(rc))
			continue;
		if (rc != ZOK)
			ZkRaiseForRc(rc);

		err = zk_delete_versioned(node, version, ready, NULL, NULL);
		if (err == ZOK || err == ZNONODE)
			return;
		/* ZBADVERSION: changed; look again */
		if (!ZkAwaitReconnect(err) && err != ZBADVERSION)
			ZkRaiseForRc(err);
	}
}

/*
 * zk_enter_create
 *		Create our participant node, in one round trip with the reads of the
 *		barrier (see the file header), and return its czxid; *created is
 *		set as soon as the node may exist.  A barrier open already is
 *		55000, our node deleted first.
 */
static int64
zk_enter_create(const char *node, const char *path, const char *ours,
				const char *ready, const char *data, int datalen,
				ZkBarrierView *view, volatile bool *created)
{
	for (;;)
	{
		ZkOp	   *ex;
		ZkOp	   *cr;
		ZkOp	   *ch;
		ZkOp	   *gd;
		int			rc;
		int64		token = 0;
		bool		have_view = false;

		CHECK_FOR_INTERRUPTS();
		ZkWatchArm(ready);
		ex = ZkExistsWatched(ready);
		*created = true;		/* from here on it may exist */
		cr = ZkCreate(ours, data, datalen, ZOO_EPHEMERAL, true);
		ch = ZkGetChildren(node);
		gd = ZkGetData(node, ZK_NO_WATCH);
		ZkOpWait(gd);
		rc = cr->rc;
		if (rc == ZOK)
			token = cr->stat.czxid;
		if (rc == ZOK && ch->rc == ZOK && gd->rc == ZOK &&
			(ex->rc == ZOK || ex->rc == ZNONODE))
		{
			zk_view_take(view, ex, ch, gd);
			have_view = true;
		}
		ZkOpFree(ex);
		ZkOpFree(cr);
		ZkOpFree(ch);
		ZkOpFree(gd);

		if (rc == ZNONODE)
		{
			ZkCreateLockParents(&node, 1);
			continue;
		}
		if (rc == ZNODEEXISTS || ZkAwaitReconnect(rc))
		{
			/* was an earlier create, whose answer was lost, applied? */
			ZkOp	   *own = ZkExistsAnswered(ours);

			rc = own->rc;
			token = own->stat.czxid;
			ZkOpFree(own);
			if (rc == ZNONODE)
				continue;		/* not made: create it again */
			if (rc != ZOK)
				ZkRaiseForRc(rc);
			zk_view_look(node, ready, view);
			have_view = true;
		}
		else if (rc != ZOK)
			ZkRaiseForRc(rc);

		if (!have_view)
			zk_view_look(node, ready, view);
		/* a path another kind uses is refused (cluster/path_kind.c) */
		ZkPathKindCheck(path, ZK_KIND_DOUBLE_BARRIER,
						(const char *const *) view->names, view->n);

		/*
		 * Open before we came: a round without us, unless that round is
		 * over (see the file header).  (Opened after our create, or between
		 * the exists and it, it counted us or had the members it needed: we
		 * are in.)
		 */
		while (view->ready && view->ready_czxid != 0 &&
			   view->ready_czxid < token &&
			   zk_round_over(node, ours + strlen(node) + 1,
							 view->ready_czxid))
		{
			zk_clear_ready(node, ready, view->ready_czxid);
			zk_view_look(node, ready, view);
		}
		if (view->ready && view->ready_czxid != 0 && view->ready_czxid < token)
		{
			ZkDeleteSync(ours);
			*created = false;
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("ZooKeeper double barrier \"%s\" is open already",
							ZkUtf8ForMessage(path)),
					 errdetail("Its \"ready\" node exists, and members of that round are still inside: the round has begun without this member. Once every member of the round has left (or gone), the barrier can be entered again."),
					 errhint("Enter before the barrier opens.")));
		}
		return token;
	}
}

/*
 * zk_open
 *		Open the barrier: one multi of a setData of the barrier node on the
 *		version of the view, a check of every participant counted, and the
 *		create of "ready".  ZOK when opened, ZNODEEXISTS when another member
 *		opened it; else the error to read again on (ZBADVERSION: the
 *		barrier changed; ZNONODE: a participant went; a lost connection).
 */
static int
zk_open(const char *node, const char *ready, const ZkBarrierView *view)
{
	ZkMultiReq *reqs = palloc0(sizeof(ZkMultiReq) * (view->n + 2));
	int			err;

	reqs[0].kind = ZK_MULTI_SET;
	reqs[0].path = node;
	reqs[0].data = "";
	reqs[0].version = view->version;
	for (int i = 0; i < view->n; i++)
	{
		reqs[i + 1].kind = ZK_MULTI_CHECK;
		reqs[i + 1].path = psprintf("%s/%s", node, view->names[i]);
		reqs[i + 1].version = -1;
	}
	reqs[view->n + 1].kind = ZK_MULTI_CREATE;
	reqs[view->n + 1].path = ready;
	reqs[view->n + 1].data = zk_round_data(view, &reqs[view->n + 1].datalen);
	err = zk_multi_run(view->n + 2, reqs, NULL);
	for (int i = 0; i < view->n; i++)
		pfree((char *) reqs[i + 1].path);
	pfree(reqs);
	return err;
}

/*
 * zk_withdraw
 *		Our wait to enter ended: delete our node, on the version of the
 *		barrier node read with "ready" absent (see the file header).  True
 *		if the barrier opened first, counting us: we have entered.
 */
static bool
zk_withdraw(const char *node, const char *ours, const char *ready)
{
	for (;;)
	{
		ZkOp	   *ex = ZkExists(ready);
		ZkOp	   *gd = ZkGetData(node, ZK_NO_WATCH);
		int			rc;
		int			err;
		int			which;
		int			version;

		ZkOpWait(gd);
		rc = ZkIsConnectionLoss(ex->rc) ? ex->rc : gd->rc;
		if (ex->rc == ZOK)
		{
			ZkOpFree(ex);
			ZkOpFree(gd);
			return true;
		}
		version = gd->stat.version;
		ZkOpFree(ex);
		ZkOpFree(gd);
		if (ZkAwaitReconnect(rc))
			continue;
		if (rc == ZNONODE)
			return false;		/* the barrier node, and so ours, is gone */
		if (rc != ZOK)
			ZkRaiseForRc(rc);

		err = zk_delete_versioned(node, version, ours, NULL, &which);
		if (err == ZOK)
			return false;
		if (ZkAwaitReconnect(err))
			continue;			/* ours gone then: the multi was applied */
		if (err == ZBADVERSION)
			continue;			/* changed meanwhile: opened? look again */
		if (err == ZNONODE && which == 1)
			return false;		/* ours is gone already */
		ZkRaiseForRc(err);
	}
}

/*
 * ZkDoubleBarrierEnter
 *		Enter the double barrier whose node is 'node' ('path' for messages):
 *		true once `members' participants have entered (this one included);
 *		false once wait_ms has passed (0: do not wait), with our node gone;
 *		with wait_ms < 0 as long as needed, bounded by lock_timeout (55P03,
 *		our node gone).  On true *member holds our node and its czxid.
 *		However the call ends without entering, our node is deleted.
 */
bool
ZkDoubleBarrierEnter(const char *node, const char *path, int members,
					 int64 wait_ms, const char *data, int datalen,
					 ZkMember *member)
{
	ZkOperationContext oc;
	char		uuid[ZK_UUID_LEN + 1];
	char	   *ours;
	char	   *ready = psprintf("%s/%s", node, READY_NODE);
	bool		is_lock_timeout;
	int64		deadline;
	volatile bool created = false;
	volatile bool entered = false;
	volatile int64 token = 0;

	ZkOperationPush(&oc, ZK_OPER_ENTER_DOUBLE_BARRIER, path);
	ZkMakeUuid(uuid);
	ours = psprintf("%s/%s", node, uuid);
	deadline = ZkWaitDeadline(ZkNowMs(), wait_ms, &is_lock_timeout);

	PG_TRY();
	{
		ZkBarrierView view;

		token = zk_enter_create(node, path, ours, ready, data, datalen,
								&view, &created);
		for (;;)
		{
			int			rc;

			/* never open, or enter, without our node (see the file header) */
			if (!zk_view_has(&view, ours + strlen(node) + 1))
				zk_raise_member_gone(ours);
			if (view.ready)
			{
				entered = true;
				break;
			}
			if (view.n >= members)
			{
				rc = zk_open(node, ready, &view);
				if (rc == ZOK || rc == ZNODEEXISTS)
				{
					entered = true;
					break;
				}
				if (!ZkAwaitReconnect(rc) && rc != ZBADVERSION &&
					rc != ZNONODE)
					ZkRaiseForRc(rc);
			}
			else
			{
				int			event = ZkWatchWait(deadline);

				if (event == ZOO_CREATED_EVENT)
				{
					/*
					 * "ready" was created: opened, with us counted, unless
					 * another client deleted our node while we waited
					 */
					int			own_rc = ZkOpResult(ZkExistsAnswered(ours));

					if (own_rc == ZNONODE)
						zk_raise_member_gone(ours);
					if (own_rc != ZOK)
						ZkRaiseForRc(own_rc);
					entered = true;
					break;
				}
				if (event == 0)
				{
					/* the wait is over: withdraw, unless counted already */
					entered = zk_withdraw(node, ours, ready);
					created = entered;
					if (!entered)
						ZkWatchDrop(ready); /* "ready" may never come */
					break;
				}
			}
			/* something changed, or the opening failed: look again */
			zk_view_look(node, ready, &view);
		}
	}
	PG_CATCH();
	{
		if (created)
			ZkDeleteInBackground(ours);
		PG_RE_THROW();
	}
	PG_END_TRY();

	if (!entered && is_lock_timeout)
		ZkRaiseLockTimeout(ZK_WAITED_FOR_ENTER, path);
	if (entered)
	{
		member->znode = ours;
		member->token = token;
	}
	pfree(ready);
	ZkOperationPop(&oc);
	return entered;
}

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
						zk_name_cmp) != NULL;
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
	ZkOp	   *ch = ZkGetChildren(lv->node);
	ZkOp	   *gd = ZkGetData(lv->node, ZK_NO_WATCH);
	int			rc;

	ZkOpWait(gd);
	rc = ch->rc;
	if (rc == ZOK)
		rc = gd->rc;
	if (ZkIsConnectionLoss(rd->rc) || (rd->rc != ZOK && rd->rc != ZNONODE))
		rc = rd->rc;
	if (rc != ZOK)
	{
		ZkOpFree(rd);
		ZkOpFree(ch);
		ZkOpFree(gd);
		if (rc != ZNONODE && !ZkAwaitReconnect(rc))
			ZkRaiseForRc(rc);
		return rc;
	}
	if (lv->first && rd->rc == ZOK)
	{
		lv->round = rd->stat.czxid;
		lv->nlisted = zk_round_parse(lv->ready, rd, &lv->listed);
	}
	lv->ready_left = (rd->rc == ZOK && rd->stat.czxid == lv->round);
	ZkOpFree(rd);
	lv->first = false;
	lv->version = gd->stat.version;
	ZkOpFree(gd);

	rc = zk_leave_participants(lv, ch);
	ZkOpFree(ch);
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
		int			err = zk_delete_versioned(lv->node, lv->version, lv->ready,
											  lv->znode, NULL);

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
	ZkWatchArm(target_path);
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
			zk_raise_member_gone(lv->znode);
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
			zk_clear_ready(lv->node, lv->ready, lv->round);
		return ZK_LEAVE_DONE;
	}
	qsort(lv->names, lv->n, sizeof(char *), zk_name_cmp);
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
	ZkOp	   *rd = ZkGetData(ready, ZK_NO_WATCH);
	ZkOp	   *ch = ZkGetChildren(node);
	ZkOp	   *gd = ZkGetData(node, ZK_NO_WATCH);
	bool		ours_there = false;
	bool		others = false;
	bool		ready_there;
	int			version;
	int			rc;

	/* answers come in order: once the last is in, so are the others */
	if (!ZkOpWaitUntil(gd, deadline_ms))
	{
		ZkOpFree(rd);
		ZkOpFree(ch);
		ZkOpFree(gd);
		return ZOPERATIONTIMEOUT;
	}
	rc = (rd->rc == ZOK || rd->rc == ZNONODE) ? ch->rc : rd->rc;
	if (rc == ZOK)
		rc = gd->rc;
	if (rc != ZOK)
	{
		ZkOpFree(rd);
		ZkOpFree(ch);
		ZkOpFree(gd);
		return rc == ZNONODE ? ZOK : rc;	/* the barrier node is gone */
	}
	ready_there = (rd->rc == ZOK);
	version = gd->stat.version;
	if (ready_there)
	{
		char	  **listed = NULL;
		int			nlisted = zk_round_parse(ready, rd, &listed);

		/*
		 * The others of our round: those the "ready" lists; without a list
		 * we trust, every other participant counts (ours is a zklock round,
		 * and so listed, unless another client rewrote it: "ready" then
		 * stays for the next member to enter, see the file header).
		 */
		for (int i = 0; i < ch->nchildren; i++)
		{
			const char *c = ch->children[i];

			if (strcmp(c, READY_NODE) == 0)
				continue;
			if (strcmp(c, our_name) == 0)
				ours_there = true;
			else if (nlisted < 0 ||
					 (nlisted > 0 &&
					  bsearch(&c, listed, nlisted, sizeof(char *),
							  zk_name_cmp) != NULL))
				others = true;
		}
	}
	else
	{
		for (int i = 0; i < ch->nchildren; i++)
		{
			if (strcmp(ch->children[i], our_name) == 0)
				ours_there = true;
		}
	}
	ZkOpFree(rd);
	ZkOpFree(ch);
	ZkOpFree(gd);

	if (ready_there && !others)
	{
		/* the last of our round: "ready" and ours, at once */
		rc = zk_delete_versioned(node, version, ready,
								 ours_there ? znode : NULL, NULL);
	}
	else if (ours_there)
		rc = zk_delete_versioned(node, version, znode, NULL, NULL);
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
