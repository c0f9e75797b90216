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
 * create of our node, and reads of the barrier node's version and of the
 * participants, sent back to back.  A "ready" found there means
 * a round is under way: a member can enter only before the barrier opens,
 * so our node is deleted and the call fails.  Unless no participant of that
 * round (older than "ready") remains: then the round is over, but its
 * members went without leaving (they exited, or their leave timed out),
 * and the arriving member removes its "ready"
 * (ZkDoubleBarrierDeleteIfReady, recipes/double_barrier_round.c) and
 * goes on.
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
 * multi: a setData of the barrier node on the version read before "ready",
 * and the delete of its node, if "ready" does not exist yet
 * (ZkDoubleBarrierDeleteIfReady).  Opening and withdrawing both
 * write the barrier node on a version they read, so of an opening that
 * counted this member and its withdrawal only one succeeds: a member that
 * timed out is never counted by whoever opens after it, and a member whose
 * withdrawal loses that race was counted and has entered (true).  So a
 * barrier never opens with fewer than `members' participants present
 * (unlike Curator's, whose timed-out member leaves its node, and kazoo's).
 * A member cancelled at the very moment another opens may have been
 * counted: its node is deleted in the background.
 *
 * Watches.  A waiter watches "ready" with an exists (it waits for its
 * creation); a member that gives up removes that watch, which the server
 * would keep otherwise.
 *
 * Leaving and departing are recipes/double_barrier_leave.c's; what entering
 * and leaving share (the round's participants as "ready" lists them, the
 * writes on the barrier node's version, the removal of an old round's
 * "ready") is recipes/double_barrier_round.c's.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/json.h"

#include "cluster/path_kind.h"
#include "recipes/barrier.h"
#include "recipes/double_barrier_round.h"
#include "base/contender.h"
#include "base/uuid.h"
#include "recipes/lock_parents.h"
#include "recipes/lock_timeout.h"
#include "base/operation_context.h"
#include "base/text_encoding.h"
#include "client/client.h"

/* The barrier as one round of reads saw it. */
typedef struct ZkBarrierView
{
	bool		ready;			/* "ready" exists */
	int64		ready_czxid;
	int			n;				/* participants (every child but "ready") */
	char	  **names;
	int			version;		/* the barrier node's data version */
} ZkBarrierView;

static void zk_view_take(ZkBarrierView *view, ZkBarrierLook *look);
static void zk_view_look(const char *node, const char *ready,
						 ZkBarrierView *view);
static int64 zk_enter_create(const char *node, const char *path,
							 const char *ours, const char *ready,
							 const char *data, int datalen,
							 ZkBarrierView *view, volatile bool *created);
static int	zk_open(const char *node, const char *ready,
					const ZkBarrierView *view);
static bool zk_view_has(const ZkBarrierView *view, const char *name);
static char *zk_round_data(const ZkBarrierView *view, int *len);

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
 * zk_view_take
 *		Fill a view from a look whose read of "ready" was an exists, and
 *		free the look's answers.
 */
static void
zk_view_take(ZkBarrierView *view, ZkBarrierLook *look)
{
	ZkOp	   *children = look->children;

	view->ready = (look->ready->rc == ZOK);
	view->ready_czxid = view->ready ? look->ready->stat.czxid : 0;
	view->n = 0;
	view->names = palloc(sizeof(char *) * Max(children->nchildren, 1));
	for (int i = 0; i < children->nchildren; i++)
	{
		if (strcmp(children->children[i], READY_NODE) == 0)
			view->ready = true; /* created after the exists: open */
		else
			view->names[view->n++] = pstrdup(children->children[i]);
	}
	view->version = look->version;
	ZkOpFree(look->ready);
	ZkOpFree(children);
}

/*
 * zk_view_look
 *		Look at the barrier (ZkDoubleBarrierLook), leaving a watch on
 *		"ready" (armed here with ZkWatchArm), until the reads are answered,
 *		riding out lost connections.
 */
static void
zk_view_look(const char *node, const char *ready, ZkBarrierView *view)
{
	ZkBarrierLook look;

	ZkWatchArm(ready, ZK_WATCH_BLOCKER);
	for (;;)
	{
		int			rc = ZkDoubleBarrierLook(node, ZkExistsWatched(ready), 0,
											 &look);

		if (rc == ZOK)
			break;
		if (!ZkAwaitReconnect(rc))
			ZkRaiseForRc(rc);
	}
	zk_view_take(view, &look);
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
		ZkBarrierLook look;
		int			look_rc;
		int			rc;
		int64		token = 0;
		bool		have_view;

		CHECK_FOR_INTERRUPTS();
		ZkWatchArm(ready, ZK_WATCH_BLOCKER);
		ex = ZkExistsWatched(ready);
		*created = true;		/* from here on it may exist */
		cr = ZkCreate(ours, data, datalen, ZOO_EPHEMERAL, true);
		/* the look's answers come after the create's */
		look_rc = ZkDoubleBarrierLook(node, ex, 0, &look);
		rc = cr->rc;
		if (rc == ZOK)
			token = cr->stat.czxid;
		ZkOpFree(cr);
		if (look_rc == ZOK)
			zk_view_take(view, &look);
		have_view = (look_rc == ZOK && rc == ZOK);

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
			   ZkDoubleBarrierRoundOver(node, ours + strlen(node) + 1,
										view->ready_czxid))
		{
			(void) ZkDoubleBarrierDeleteIfReady(node, ready, view->ready_czxid,
												ready);
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
	err = ZkDoubleBarrierMulti(view->n + 2, reqs);
	for (int i = 0; i < view->n; i++)
		pfree((char *) reqs[i + 1].path);
	pfree(reqs);
	return err;
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
				ZkDoubleBarrierRaiseMemberGone(ours);
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
						ZkDoubleBarrierRaiseMemberGone(ours);
					if (own_rc != ZOK)
						ZkRaiseForRc(own_rc);
					entered = true;
					break;
				}
				if (event == 0)
				{
					/*
					 * the wait is over: withdraw (see the file header),
					 * unless "ready" exists: then we were counted, and are in
					 */
					entered = !ZkDoubleBarrierDeleteIfReady(node, ready, 0,
															ours);
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
