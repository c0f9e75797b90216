/*-------------------------------------------------------------------------
 *
 * recipes/attempt_create.c
 *		The one create loop of every queue recipe (ZkAttemptCreate): the
 *		nodes of one or several attempts made in one request, and their
 *		recovery by the attempt's prefix after a lost answer.
 *
 * Each recipe says how its nodes are made (ZkCreateOpts: counted, with a
 * TTL, with the nodes above, with a read in the same round trip), and the
 * loop learns the queue (the lock node's children, base/contender.c) as
 * read in the same round trip or read after.  Lock nodes expected to be
 * missing (recipes/path_memory.c) are created in the same round trip.
 *
 * Connection loss.  A create whose answer was lost may or may not have made
 * a node.  After reconnecting we look for a child with our attempt's prefix
 * before creating again (zk_attempt_recover), so an attempt never leaves an
 * orphan that would block the queue; the children are read behind a sync,
 * since the server we reconnected to may not have applied the lost create
 * yet.  The queue read by that search predates any create sent after it:
 * the queue an attempt waits by is always read after its node was made
 * (or known to be just us), never kept from before.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"

#include "recipes/attempt.h"
#include "recipes/path_memory.h"
#include "client/client.h"

static bool zk_collect_fresh_creates(ZkOp **makes, const char *const *nodes,
									 int n, bool *learnt, bool *missing);
static bool zk_attempt_recover(ZkAttempt *at);

/*
 * zk_collect_fresh_creates
 *		The answers to the creates of lock nodes expected to be missing
 *		(recipes/path_memory.c), sent just before the request that needs them
 *		(makes[i]; NULL where none was sent): free each, tell path memory
 *		how the node was found unless learnt[i] says it was told already,
 *		and clear missing[i] for each node that exists now.  True if a
 *		create was refused because a parent of its node is missing.  The
 *		caller has waited for the later request: answers come in order, so
 *		these are in already.
 */
static bool
zk_collect_fresh_creates(ZkOp **makes, const char *const *nodes, int n,
						 bool *learnt, bool *missing)
{
	bool		parent_missing = false;

	for (int i = 0; i < n; i++)
	{
		int			rc;

		if (makes[i] == NULL)
			continue;
		ZkOpWait(makes[i]);
		rc = makes[i]->rc;
		ZkOpFree(makes[i]);
		makes[i] = NULL;
		if (rc == ZOK || rc == ZNODEEXISTS)
		{
			if (!learnt[i])
				ZkLearnFresh(nodes[i], rc == ZOK);
			learnt[i] = true;
			missing[i] = false; /* it exists now */
		}
		else if (rc == ZNONODE)
			parent_missing = true;
	}
	return parent_missing;
}

/* ZkAttemptCreate's state across its rounds */
typedef struct ZkCreateLoop
{
	ZkAttempt **at;
	int			n;
	const ZkCreateOpts *o;
	bool		counted;		/* o->counted, until a ZNOAUTH cleared it */
	int			nfresh;			/* o->above, then each attempt's lock node */
	const char **fresh_nodes;
	bool	   *make;			/* create it first in the next round */
	bool	   *learnt;			/* path memory told how it was found */
	ZkOp	  **makes;
	const char **paths;			/* each attempt's node_base */
	const char **datas;
	int		   *lens;
	const char **parents;		/* each attempt's lock node */
	/* one round's requests */
	ZkOp	   *create;
	ZkOp	   *list;			/* the queue, read right behind the create */
	ZkOp	   *side;
	bool		parent_missing; /* a fresh create found a parent missing */
} ZkCreateLoop;

/*
 * zk_create_send
 *		Send one round: the creates of the nodes expected to be missing,
 *		the side read, the creates of our nodes (one multi, a plain create
 *		when one uncounted node, a TTL create for a lease), and, when the
 *		create answers with no count, the queue's getChildren right behind
 *		it.  Nothing is waited for.
 */
static void
zk_create_send(ZkCreateLoop *cl)
{
	const ZkCreateOpts *o = cl->o;
	ZkAttempt  *first = cl->at[0];

	for (int j = 0; j < cl->nfresh; j++)
	{
		const char *data = (j < o->nabove && o->above_data != NULL) ?
		o->above_data[j] : "";

		cl->makes[j] = cl->make[j] ?
			ZkCreate(cl->fresh_nodes[j], data, (int) strlen(data),
					 ZOO_CONTAINER, true) : NULL;
	}
	cl->side = o->side_read ? ZkGetData(o->side_read, ZK_NO_WATCH) : NULL;
	for (int i = 0; i < cl->n; i++)
		cl->at[i]->create_sent = true;
	cl->list = NULL;
	if (o->ttl_ms > 0)
		cl->create = ZkCreateTtl(first->node_base, first->args->data,
								 first->args->datalen, o->ttl_ms);
	else if (cl->counted || cl->n > 1)
		cl->create = ZkCreateSet(cl->n, cl->paths, cl->datas, cl->lens,
								 cl->counted ? cl->parents : NULL);
	else
		cl->create = ZkCreate(first->node_base, first->args->data,
							  first->args->datalen, ZOO_EPHEMERAL_SEQUENTIAL,
							  true);
	if (o->learn_queue && cl->n == 1 && !cl->counted)
		cl->list = ZkGetChildren(first->args->lock_node);
}

/*
 * zk_create_wait
 *		Wait for a round's answers; they come in order, so once the last is
 *		in, so are the others, and the backend is woken once.  Returns the
 *		create's result code; the fresh creates' answers are taken.
 */
static int
zk_create_wait(ZkCreateLoop *cl, ZkCreateResult *res)
{
	if (cl->list != NULL)
		ZkOpWait(cl->list);
	ZkOpWait(cl->create);
	if (cl->side != NULL)
		ZkOpWait(cl->side);
	cl->parent_missing = zk_collect_fresh_creates(cl->makes, cl->fresh_nodes,
												  cl->nfresh, cl->learnt,
												  cl->make);
	res->sent_at = cl->create->sent_at;
	return cl->create->rc;
}

/*
 * zk_read_queues
 *		Read the queue of every attempt whose queue is not known since its
 *		node was made (!at->queue_known: it was not alone in it), all
 *		getChildren pipelined: one round trip (one by one after a lost
 *		connection).
 */
static void
zk_read_queues(ZkAttempt **at, int n)
{
	ZkOp	  **ops = palloc0(sizeof(ZkOp *) * n);
	bool		lost = false;

	for (int i = 0; i < n; i++)
	{
		if (!at[i]->queue_known)
			ops[i] = ZkGetChildren(at[i]->args->lock_node);
	}
	for (int i = 0; i < n; i++)
	{
		if (ops[i] == NULL)
			continue;
		ZkOpWait(ops[i]);
		if (!lost && !ZkAttemptTakeQueue(at[i], ops[i]))
			lost = true;
		ZkOpFree(ops[i]);
		ops[i] = NULL;
	}
	pfree(ops);
	for (int i = 0; lost && i < n; i++)
	{
		if (!at[i]->queue_known)
			ZkAttemptRereadQueue(at[i]);
	}
}

/*
 * zk_create_made
 *		A round's create succeeded: tell path memory about the nodes not
 *		learnt yet, hand each attempt its node, token and count, and learn
 *		the queues if asked to.  Frees the round's create and listing.
 */
static void
zk_create_made(ZkCreateLoop *cl, ZkCreateResult *res)
{
	ZkOp	   *op = cl->create;
	bool		multi = (op->kind == ZKOP_CREATE_COUNTED);
	int64		token = op->stat.czxid;

	for (int j = 0; cl->o->guess_fresh && j < cl->nfresh; j++)
	{
		if (!cl->learnt[j])
			ZkLearnFresh(cl->fresh_nodes[j], false);
	}
	for (int i = 0; i < cl->n; i++)
	{
		int32		count = -1;
		const char *znode = multi ? ZkCreateSetResult(op, i, &count) :
		op->value;

		ZkAttemptCreated(cl->at[i], znode, token,
						 cl->o->learn_queue && count == 1);
		cl->at[i]->siblings = count;
		/* a persistent node (a lease's): the session's guard removes it */
		if (cl->at[i]->persistent)
			ZkGuardNode(cl->at[i]->znode);
	}
	res->mtime = cl->n == 1 ? op->stat.mtime : -1;
	ZkOpFree(op);
	cl->create = NULL;
	if (multi && !cl->counted)
	{
		/* the token: the czxid every node of the multi shares */
		ZkOp	   *ex = ZkExistsAnswered(cl->at[0]->znode);
		int			rc = ex->rc;

		token = ex->stat.czxid;
		ZkOpFree(ex);
		if (rc != ZOK)
			ZkRaiseForRc(rc);
		for (int i = 0; i < cl->n; i++)
			cl->at[i]->token = token;
	}
	if (cl->list != NULL)
	{
		if (!ZkAttemptTakeQueue(cl->at[0], cl->list))
			ZkAttemptRereadQueue(cl->at[0]);
		ZkOpFree(cl->list);
		cl->list = NULL;
	}
	else if (cl->o->learn_queue)
		zk_read_queues(cl->at, cl->n);
}

/*
 * zk_raise_no_ttl
 *		The server refused to create a TTL node: it does not support them.
 */
static void
zk_raise_no_ttl(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("ZooKeeper at \"%s\" does not support leases",
					zklock_hosts),
			 errdetail("A lease is held by a TTL node, and the server refused to create one."),
			 errhint("Start every ZooKeeper server with -Dzookeeper.extendedTypesEnabled=true.")));
}

/*
 * zk_create_refused
 *		A round's create was refused with 'rc' (not a lost connection):
 *		prepare the next round, or raise the refusal.
 *
 * ZNONODE for a lock node not seen in this attempt: it was reaped since
 * path memory last saw it.  The refusal names only the first missing node,
 * and the reaper may have taken others since they were last seen: every
 * node not seen in this attempt is created in the next round, so that one
 * more round trip does.  Any other ZNONODE: a parent of a lock node is
 * missing (created, with every missing ancestor, before the next round).
 * ZNOAUTH with a count asked for: maybe only a setData was refused.
 */
static void
zk_create_refused(ZkCreateLoop *cl, int rc)
{
	const ZkCreateOpts *o = cl->o;
	int			err;
	/* the refused request (a counted multi: a create and a setData a node) */
	int			req = cl->create->kind == ZKOP_CREATE_COUNTED ?
	ZkMultiFailure(cl->create, &err) : 0;
	int			failed = req > 0 && cl->counted ? req / 2 : req;	/* its node */
	int			k = o->nabove + failed; /* its lock node, among the fresh */

	ZkOpFree(cl->create);
	ZkOpFree(cl->list);
	ZkOpFree(cl->side);
	cl->create = cl->list = cl->side = NULL;

	if (rc == ZNONODE && o->guess_fresh &&
		!cl->parent_missing && failed >= 0 && !cl->make[k] && !cl->learnt[k])
	{
		ZkLearnFresh(cl->fresh_nodes[k], true);
		cl->learnt[k] = true;
		for (int j = 0; j < cl->nfresh; j++)
			cl->make[j] = !cl->learnt[j] || j == k;
	}
	else if (rc == ZNONODE)
	{
		ZkCreateLockParents(cl->parents, cl->n);
		memset(cl->make, 0, sizeof(bool) * cl->nfresh);
	}
	else if (rc == ZNOAUTH && cl->counted && o->uncount_on_noauth)
		cl->counted = false;
	else
	{
		if (o->oc != NULL)
			ZkOperationSet(o->oc, ZK_OPER_ACQUIRE_LOCK,
						   cl->at[failed >= 0 ? failed : 0]->args->lock_path);
		if (rc == ZUNIMPLEMENTED && o->ttl_ms > 0)
			zk_raise_no_ttl();
		ZkRaiseForRc(rc);
	}
}

/*
 * zk_create_recover
 *		After a round whose answer was lost, once the connection is back:
 *		the round made every node or none (one multi, or one create).  Each
 *		attempt looks for its node by its prefix (zk_attempt_recover), which
 *		reads its queue too.  Returns how many were found.
 */
static int
zk_create_recover(ZkCreateLoop *cl)
{
	int			found = 0;

	ZkOpFree(cl->list);
	ZkOpFree(cl->side);
	cl->list = cl->side = NULL;
	for (int i = 0; i < cl->n; i++)
	{
		if (!zk_attempt_recover(cl->at[i]))
			continue;
		found++;
		if (cl->at[i]->persistent)
			ZkGuardNode(cl->at[i]->znode);
	}
	return found;
}

/*
 * ZkAttemptCreate
 *		Create the nodes of n attempts, each under its attempt's prefix
 *		(node_base), as 'opts' says, all in one request: every recipe's
 *		queue nodes are created here.  Returns ZK_CREATE_MADE with each
 *		attempt's node (and its 'siblings' when counted), and its queue if
 *		opts->learn_queue; *res says when the create was sent, the node's
 *		mtime and the side read's answer.  A persistent node (a lease's) is
 *		handed to the session's guard (ZkGuardNode) as soon as it is known.
 *
 * A lost answer is recovered by the prefix: after the connection is back,
 * each attempt looks for its node (zk_attempt_recover) before anything is
 * created again, so that no attempt ever leaves an orphan in a queue.  If
 * every node is found, ZK_CREATE_RECOVERED (counts, mtime and the side
 * read not known; queues known); if none, the create is sent again under
 * the same prefix; if only some, ZK_CREATE_PARTIAL: the caller decides.
 *
 * Nodes expected to be missing (recipes/path_memory.c) are created by
 * requests sent just before the create, without waiting: ZooKeeper applies
 * a session's requests in order, so one round trip still does.  (Not in
 * the same multi: the C client misreads the answer to a container create
 * inside a multi.)
 */
ZkCreateOutcome
ZkAttemptCreate(ZkAttempt **at, int n, const ZkCreateOpts *opts,
				ZkCreateResult *res)
{
	ZkCreateLoop cl;
	ZkCreateOutcome outcome;

	memset(&cl, 0, sizeof(cl));
	cl.at = at;
	cl.n = n;
	cl.o = opts;
	cl.counted = opts->counted;
	cl.nfresh = opts->nabove + n;
	cl.fresh_nodes = palloc(sizeof(char *) * cl.nfresh);
	cl.make = palloc0(sizeof(bool) * cl.nfresh);
	cl.learnt = palloc0(sizeof(bool) * cl.nfresh);
	cl.makes = palloc0(sizeof(ZkOp *) * cl.nfresh);
	cl.paths = palloc(sizeof(char *) * n);
	cl.datas = palloc(sizeof(char *) * n);
	cl.lens = palloc(sizeof(int) * n);
	cl.parents = cl.fresh_nodes + opts->nabove;
	for (int j = 0; j < opts->nabove; j++)
		cl.fresh_nodes[j] = opts->above[j];
	for (int i = 0; i < n; i++)
	{
		cl.paths[i] = at[i]->node_base;
		cl.datas[i] = at[i]->args->data;
		cl.lens[i] = at[i]->args->datalen;
		cl.parents[i] = at[i]->args->lock_node;
	}
	for (int j = 0; opts->guess_fresh && j < cl.nfresh; j++)
		cl.make[j] = ZkGuessFresh(cl.fresh_nodes[j]);
	memset(res, 0, sizeof(*res));

	for (;;)
	{
		int			rc;

		CHECK_FOR_INTERRUPTS();
		zk_create_send(&cl);
		rc = zk_create_wait(&cl, res);
		if (rc == ZOK)
		{
			res->side = cl.side;
			zk_create_made(&cl, res);
			outcome = ZK_CREATE_MADE;
			break;
		}
		if (ZkAwaitReconnect(rc))
		{
			int			found;

			ZkOpFree(cl.create);
			cl.create = NULL;
			found = zk_create_recover(&cl);
			res->mtime = -1;
			if (found == 0)
				continue;		/* none made: again, same prefix */
			outcome = found == n ? ZK_CREATE_RECOVERED : ZK_CREATE_PARTIAL;
			break;
		}
		zk_create_refused(&cl, rc);
	}
	pfree(cl.fresh_nodes);
	pfree(cl.make);
	pfree(cl.learnt);
	pfree(cl.makes);
	pfree(cl.paths);
	pfree(cl.datas);
	pfree(cl.lens);
	return outcome;
}

/*
 * ZkAttemptCreateLocks
 *		The lock recipe's create, of one lock's queue node or of a lock
 *		set's nodes in one multi: each counted, so that a node alone in its
 *		queue costs one write and no read; the queues where it is not read
 *		in one more round trip, pipelined.  Lock nodes expected to be
 *		missing are created first (recipes/path_memory.c).  Where a lock
 *		node's data cannot be set (an ACL that allows creating children but
 *		not writing the node), the creates go without the setData, and
 *		every queue is read (for one node, in the same round trip).  With
 *		'oc', a refused create is raised naming its own lock in it.
 */
ZkCreateOutcome
ZkAttemptCreateLocks(ZkAttempt **at, int n, ZkOperationContext *oc)
{
	ZkCreateOpts opts;
	ZkCreateResult res;

	memset(&opts, 0, sizeof(opts));
	opts.counted = true;
	opts.uncount_on_noauth = true;
	opts.learn_queue = true;
	opts.guess_fresh = true;
	opts.oc = oc;
	return ZkAttemptCreate(at, n, &opts, &res);
}

/*
 * zk_attempt_recover
 *		After a create whose answer was lost: is there a node with our
 *		prefix among the lock node's children?  If so adopt it (and fetch
 *		its czxid) and return true; false if there is none, and the create
 *		may be sent again under the same prefix.
 *
 * This is the one recovery step of every recipe that creates nodes under
 * a protection prefix: a lock's queue node, each node of a lock set, a
 * semaphore's mutex node and permit node.  It looks at every child, not
 * only at the queue's contenders, since a lease node is no contender.
 * The queue is read again on the way (at->queue), behind a sync
 * (ZkGetChildrenSynced): "no node with our prefix" must not be the word
 * of a server that has not applied our create yet, or the create sent
 * again would leave the first node an orphan ahead of ours.
 */
static bool
zk_attempt_recover(ZkAttempt *at)
{
	size_t		plen = strlen(at->prefix);
	ZkOp	   *op;
	int			rc;
	int			i;

	op = ZkGetChildrenSynced(at->args->lock_node);
	(void) ZkAttemptTakeQueue(at, op);	/* never a lost connection */
	ZkOpFree(op);
	for (i = 0; i < at->nnames; i++)
	{
		if (strncmp(at->names[i], at->prefix, plen) == 0)
			break;
	}
	if (i == at->nnames)
		return false;

	at->znode = psprintf("%s/%s", at->args->lock_node, at->names[i]);
	at->name = ZkLastComponent(at->znode);
	op = ZkExistsAnswered(at->znode);
	rc = op->rc;
	at->token = op->stat.czxid;
	ZkOpFree(op);
	if (rc == ZNONODE)
	{
		/* deleted under us: cannot be trusted; start over */
		at->znode = NULL;
		return false;
	}
	if (rc != ZOK)
		ZkRaiseForRc(rc);
	return true;
}
