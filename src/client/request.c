/*-------------------------------------------------------------------------
 *
 * client/request.c
 *		Asynchronous ZooKeeper requests on the backend's session, and the
 *		waits for their answers and for watches.
 *
 * Each request function sends one request (or one multi) and returns a
 * ZkOp at once; the answer is written into the op on the client library's
 * completion thread (client/bridge.c).  The backend waits for it with ZkOpWait
 * or ZkOpWaitUntil, or sends several requests before waiting for the last
 * (answers come in order), and frees the op with ZkOpFree.  An op freed
 * before its answer came is freed by the completion thread instead.  Ops
 * live in malloc'd memory for that reason; the backend also keeps its live
 * ops in a list, so that an ERROR that leaves them behind gives them up at
 * (sub)transaction abort (ZkOpsAbandon).
 *
 * Callers have gone through ZkSessionEnsure(): the request functions need
 * an open handle.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "lib/ilist.h"

#include "client/bridge.h"
#include "client/request.h"
#include "client/session.h"
#include "client/wait.h"
#include "base/stats.h"
#include "base/clock.h"

/*
 * The room a sequential create's path buffer needs beyond the path given:
 * the suffix ZooKeeper appends (ten digits, or a minus sign and ten digits
 * once the parent's counter wrapped) and the terminating zero.
 */
#define ZK_SEQ_SUFFIX_ROOM 16

/* Backend-only state. */
static dlist_head zk_live_ops = DLIST_STATIC_INIT(zk_live_ops);
static uint64 zk_watch_waits = 0;	/* ZkWatchWait calls, ever */

/* private prototypes */
static zhandle_t *zk_handle(void);
static ZkMultiAux *zk_multi_aux_new(ZkOp *op, int n, int nops,
									const char *const *paths);

/*
 * zk_handle
 *		The open handle; callers have gone through ZkSessionEnsure().
 */
static zhandle_t *
zk_handle(void)
{
	zhandle_t  *zh = ZkBridgeHandle();

	if (zh == NULL)
		elog(ERROR, "no ZooKeeper session");
	return zh;
}

/*
 * ZkOpNew
 *		A new op of the given kind, about to be sent, in the list of live
 *		ops.  ERROR if memory ran out.
 */
ZkOp *
ZkOpNew(ZkOpKind kind)
{
	ZkOp	   *op = ZkOpTryNew(kind);

	if (op == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory")));
	return op;
}

/*
 * ZkOpTryNew
 *		As ZkOpNew, but NULL if memory ran out: for paths that must raise
 *		no ERROR (the releases at transaction abort).
 */
ZkOp *
ZkOpTryNew(ZkOpKind kind)
{
	ZkOp	   *op = calloc(1, sizeof(ZkOp));

	if (op == NULL)
		return NULL;
	op->kind = kind;
	/* writes and syncs go through the leader; reads a server answers alone */
	op->ordered = (kind == ZKOP_CREATE || kind == ZKOP_CREATE_COUNTED ||
				   kind == ZKOP_MULTI || kind == ZKOP_SYNC);
	op->nest_level = GetCurrentTransactionNestLevel();
	/* one clock reading: ZkNowMs and ZkNowUs read the same clock */
	op->sent_us = ZkNowUs();
	op->sent_at = op->sent_us / 1000;
	dlist_push_tail(&zk_live_ops, &op->node);
	return op;
}

/*
 * ZkCreate
 *		Start a create.  'protect' gives the node creator-only ACLs (plus
 *		world read) when zklock.auth is set; otherwise nodes are world-open.
 */
ZkOp *
ZkCreate(const char *path, const char *data, int datalen, int flags,
		 bool protect)
{
	ZkOp	   *op = ZkOpNew(ZKOP_CREATE);

	ZkOpIssued(op, zoo_acreate2(zk_handle(), path, data, datalen,
								ZkSessionAcl(protect), flags,
								ZkOpDoneStringStat, op));
	return op;
}

/*
 * ZkCreateTtl
 *		Start the create of a persistent-sequential node with a TTL of
 *		ttl_ms: the server deletes it once it has had no child and no
 *		modification for that long (ZooKeeper runs this check every
 *		znode.container.checkIntervalMs).  Needs a server started with
 *		zookeeper.extendedTypesEnabled=true; any other answers ZUNIMPLEMENTED.
 *		ACLs as ZkCreate's with 'protect'.  The answer carries the created
 *		path and the node's Stat.
 */
ZkOp *
ZkCreateTtl(const char *path, const char *data, int datalen, int64 ttl_ms)
{
	ZkOp	   *op = ZkOpNew(ZKOP_CREATE);

	ZkOpIssued(op, zoo_acreate2_ttl(zk_handle(), path, data, datalen,
									ZkSessionAcl(true),
									ZOO_PERSISTENT_SEQUENTIAL_WITH_TTL,
									ttl_ms, ZkOpDoneStringStat, op));
	return op;
}

/*
 * zk_multi_aux_new
 *		The buffers of a multi of nops requests over n nodes, for op: the
 *		requests, their results, a Stat per node and, with 'paths' (the
 *		creates' paths), a buffer per node for the created path.  One
 *		allocation, freed whole with the op (ZkOpFreeMemory), wherever the
 *		op ends: malloc'd, as a completion thread may free it.  The op is
 *		freed and an ERROR raised if memory ran out.
 */
static ZkMultiAux *
zk_multi_aux_new(ZkOp *op, int n, int nops, const char *const *paths)
{
	Size		size = MAXALIGN(sizeof(ZkMultiAux));
	Size		ops_at,
				results_at,
				stats_at,
				created_at = 0,
				buffers_at = 0;
	ZkMultiAux *aux;
	char	   *block;

	ops_at = size;
	size += MAXALIGN(sizeof(zoo_op_t) * nops);
	results_at = size;
	size += MAXALIGN(sizeof(zoo_op_result_t) * nops);
	stats_at = size;
	size += MAXALIGN(sizeof(struct Stat) * n);
	if (paths != NULL)
	{
		created_at = size;
		size += MAXALIGN(sizeof(char *) * n);
		buffers_at = size;
		for (int i = 0; i < n; i++)
			size += strlen(paths[i]) + ZK_SEQ_SUFFIX_ROOM;
	}

	block = calloc(1, size);
	if (block == NULL)
	{
		ZkOpFree(op);
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory")));
	}
	aux = (ZkMultiAux *) block;
	aux->n = n;
	aux->nops = nops;
	aux->ops = (zoo_op_t *) (block + ops_at);
	aux->results = (zoo_op_result_t *) (block + results_at);
	aux->parent_stats = (struct Stat *) (block + stats_at);
	if (paths != NULL)
	{
		char	   *buffer = block + buffers_at;

		aux->created = (char **) (block + created_at);
		for (int i = 0; i < n; i++)
		{
			aux->created[i] = buffer;
			buffer += strlen(paths[i]) + ZK_SEQ_SUFFIX_ROOM;
		}
	}
	op->multi = aux;
	return aux;
}

/*
 * ZkCreateSet
 *		Create n ephemeral-sequential nodes in one ZooKeeper multi: all or
 *		none, one transaction, so they all get the same czxid.  With
 *		'parents', each create is followed by an (empty) setData of that
 *		parent, whose Stat tells how many children it has right after
 *		(ZkCreateSetResult); without, the multi holds only the creates.
 *		Nodes are protected like ZkCreate's when authenticated.
 *
 * A counted create is how an uncontended lock costs one write: a count of
 * one means the node is alone, and its queue need not be read.  With one
 * node, the op itself carries the answer too: op->value the created path,
 * op->stat.czxid its czxid (the multi's zxid), op->parent_children the
 * count.  The parent's data is overwritten with nothing: lock nodes carry
 * no data in any recipe zklock shares a queue with.
 */
ZkOp *
ZkCreateSet(int n, const char *const *paths, const char *const *datas,
			const int *datalens, const char *const *parents)
{
	ZkOp	   *op = ZkOpNew(ZKOP_CREATE_COUNTED);
	const struct ACL_vector *acl = ZkSessionAcl(true);
	int			per = parents != NULL ? 2 : 1;
	ZkMultiAux *aux = zk_multi_aux_new(op, n, n * per, paths);

	aux->counted = (parents != NULL);
	for (int i = 0; i < n; i++)
	{
		zoo_create_op_init(&aux->ops[i * per], paths[i], datas[i], datalens[i],
						   acl, ZOO_EPHEMERAL_SEQUENTIAL, aux->created[i],
						   (int) strlen(paths[i]) + ZK_SEQ_SUFFIX_ROOM);
		if (parents != NULL)
			zoo_set_op_init(&aux->ops[i * per + 1], parents[i], "", 0, -1,
							&aux->parent_stats[i]);
	}
	ZkOpIssued(op, zoo_amulti(zk_handle(), n * per, aux->ops, aux->results,
							  ZkOpDoneCreateSet, op));
	return op;
}

/*
 * ZkCreateSetResult
 *		After a successful ZkCreateSet: node i's path, and (counted) how
 *		many children its parent had right after the multi (else -1).
 *		The path lives as long as the op.
 */
const char *
ZkCreateSetResult(const ZkOp *op, int i, int32 *parent_children)
{
	ZkMultiAux *aux = op->multi;

	*parent_children = aux->counted ? aux->parent_stats[i].numChildren : -1;
	return aux->created[i];
}

/*
 * ZkMulti
 *		Start a ZooKeeper multi of setData, delete, check and create requests
 *		(a create makes a persistent node, protected like ZkCreate's): all
 *		applied in one transaction, or none.  The op's stat is the Stat of
 *		the first setData (the node's new mtime and version); ZkMultiFailure
 *		tells which request a refusal was about.
 */
ZkOp *
ZkMulti(int n, const ZkMultiReq *reqs)
{
	ZkOp	   *op = ZkOpNew(ZKOP_MULTI);
	ZkMultiAux *aux = zk_multi_aux_new(op, n, n, NULL);

	for (int i = 0; i < n; i++)
	{
		switch (reqs[i].kind)
		{
			case ZK_MULTI_SET:
				zoo_set_op_init(&aux->ops[i], reqs[i].path, reqs[i].data,
								reqs[i].datalen, reqs[i].version,
								&aux->parent_stats[i]);
				break;
			case ZK_MULTI_DELETE:
				zoo_delete_op_init(&aux->ops[i], reqs[i].path,
								   reqs[i].version);
				break;
			case ZK_MULTI_CHECK:
				zoo_check_op_init(&aux->ops[i], reqs[i].path,
								  reqs[i].version);
				break;
			case ZK_MULTI_CREATE:
				/* the created path is not needed: it is the one given */
				zoo_create_op_init(&aux->ops[i], reqs[i].path, reqs[i].data,
								   reqs[i].datalen,
								   ZkSessionAcl(true),
								   ZOO_PERSISTENT, NULL, 0);
				break;
		}
	}
	ZkOpIssued(op, zoo_amulti(zk_handle(), n, aux->ops, aux->results,
							  ZkOpDoneMulti, op));
	return op;
}

/*
 * ZkMultiFailure
 *		After a failed ZkMulti or ZkCreateSet: the index of the request the
 *		server refused (the others report only that the transaction was
 *		rolled back), or -1 if none says (the multi was not applied at
 *		all: a lost connection, say).  *err is that request's result code.
 */
int
ZkMultiFailure(const ZkOp *op, int *err)
{
	ZkMultiAux *aux = op->multi;

	for (int i = 0; i < aux->nops; i++)
	{
		int			e = aux->results[i].err;

		if (e != ZOK && e != ZRUNTIMEINCONSISTENCY)
		{
			*err = e;
			return i;
		}
	}
	*err = op->rc;
	return -1;
}

/*
 * ZkGetChildrenWatched
 *		Start a getChildren that leaves a child watch on the node, firing
 *		for the path armed with ZkWatchArm() (ZOO_CHILD_EVENT when a child
 *		comes or goes, ZOO_DELETED_EVENT if the node itself goes).
 */
ZkOp *
ZkGetChildrenWatched(const char *path)
{
	ZkOp	   *op = ZkOpNew(ZKOP_CHILDREN);

	ZkOpIssued(op, zoo_awget_children(zk_handle(), path, ZkNodeWatcher,
									  NULL, ZkOpDoneStrings, op));
	return op;
}

/*
 * ZkSetData
 *		Start a setData of any version.  An op freed before its answer
 *		completes in the background.
 */
ZkOp *
ZkSetData(const char *path, const char *data, int datalen)
{
	ZkOp	   *op = ZkOpNew(ZKOP_EXISTS);

	op->ordered = true;			/* a write, answered like an exists */

	ZkOpIssued(op, zoo_aset(zk_handle(), path, data, datalen, -1,
							ZkOpDoneStat, op));
	return op;
}

/* ZkGetChildren: start a getChildren (no watch). */
ZkOp *
ZkGetChildren(const char *path)
{
	ZkOp	   *op = ZkOpNew(ZKOP_CHILDREN);

	ZkOpIssued(op, zoo_aget_children(zk_handle(), path, 0,
									 ZkOpDoneStrings, op));
	return op;
}

/*
 * ZkGetData
 *		Start a getData, optionally leaving a data watch on the node: for a
 *		waiter, one that fires for the path armed with ZkWatchArm(); for
 *		its own node, one whose event ZkOwnNodeEvent() tells.  A data watch is only set
 *		when the node exists, so a vanished node leaves nothing behind.
 */
ZkOp *
ZkGetData(const char *path, ZkWatchKind watch)
{
	ZkOp	   *op = ZkOpNew(ZKOP_GET);
	watcher_fn	fn = (watch == ZK_NO_WATCH) ? NULL : ZkNodeWatcher;
	void	   *ctx = (watch == ZK_WATCH_OWN) ? ZK_OWN_WATCH : NULL;

	ZkOpIssued(op, zoo_awget(zk_handle(), path, fn, ctx, ZkOpDoneData, op));
	return op;
}

/*
 * ZkDelete
 *		Start a delete of one node, if its version is 'version' (-1: any),
 *		whose answer the caller waits for.  (Releases of held locks go
 *		through ZkDeleteNodes, which retries them in the background.)
 */
ZkOp *
ZkDelete(const char *path, int version)
{
	ZkOp	   *op = ZkOpNew(ZKOP_EXISTS);

	op->ordered = true;			/* a write, answered like an exists */

	ZkOpIssued(op, zoo_adelete(zk_handle(), path, version,
							   ZkOpDoneVoid, op));
	return op;
}

/*
 * ZkExistsWatched
 *		Start an exists that leaves a watch on the node, whether or not it
 *		exists, firing for the path armed with ZkWatchArm()
 *		(ZOO_CREATED_EVENT, ZOO_DELETED_EVENT, ZOO_CHANGED_EVENT).
 */
ZkOp *
ZkExistsWatched(const char *path)
{
	ZkOp	   *op = ZkOpNew(ZKOP_EXISTS);

	ZkOpIssued(op, zoo_awexists(zk_handle(), path, ZkNodeWatcher, NULL,
								ZkOpDoneStat, op));
	return op;
}

/*
 * ZkWatchDrop
 *		Remove, on the server too, the session's watches on a node that may
 *		never be created (left by ZkExistsWatched): the server would keep
 *		them for the session's life.  Fire and forget.
 */
void
ZkWatchDrop(const char *path)
{
	ZkOp	   *op = ZkOpNew(ZKOP_EXISTS);

	/*
	 * zoo_aremove_all_watches: the session's every watch on the path, on
	 * the server too (the call for one watcher only checks the server's).
	 * Its header declares the completion as a pointer to a function
	 * pointer, but the library calls it as a function pointer.
	 */
	ZkOpIssued(op, zoo_aremove_all_watches(zk_handle(), path,
										   ZWATCHTYPE_ANY, 0,
										   (void_completion_t *) (void *) ZkOpDoneVoid,
										   op));
	ZkOpFree(op);
}

/* ZkExists: start an exists (no watch). */
ZkOp *
ZkExists(const char *path)
{
	ZkOp	   *op = ZkOpNew(ZKOP_EXISTS);

	ZkOpIssued(op, zoo_aexists(zk_handle(), path, 0, ZkOpDoneStat, op));
	return op;
}

/*
 * ZkSync
 *		Start a sync: reads sent after it on this session see everything
 *		the leader had committed when it was processed.
 */
ZkOp *
ZkSync(const char *path)
{
	ZkOp	   *op = ZkOpNew(ZKOP_SYNC);

	ZkOpIssued(op, zoo_async(zk_handle(), path, ZkOpDoneString, op));
	return op;
}

/*
 * ZkOpFree
 *		The backend is done with an op: free it, or hand it to the
 *		completion thread if its answer has not come yet.
 */
void
ZkOpFree(ZkOp *op)
{
	if (op == NULL)
		return;
	dlist_delete(&op->node);
	if (ZkOpAbandon(op))
	{
		if (op->kind != ZKOP_RELEASE && op->done_us > 0)
			ZkStatRequest(op->done_us - op->sent_us);
		ZkOpFreeMemory(op);
	}
}

/*
 * ZkOpsAbandon
 *		Give up every op started at or below the given transaction nesting
 *		level: an ERROR left them behind.  Called at (sub)transaction abort.
 */
void
ZkOpsAbandon(int nest_level)
{
	dlist_mutable_iter iter;

	dlist_foreach_modify(iter, &zk_live_ops)
	{
		ZkOp	   *op = dlist_container(ZkOp, node, iter.cur);

		if (op->nest_level >= nest_level)
			ZkOpFree(op);
	}
}

/*
 * ZkOpsSessionClosed
 *		The session was closed: ops that never got an answer will not get
 *		one now.  The library's threads are gone, so no mutex is needed.
 */
void
ZkOpsSessionClosed(void)
{
	dlist_iter	iter;

	dlist_foreach(iter, &zk_live_ops)
	{
		ZkOp	   *op = dlist_container(ZkOp, node, iter.cur);

		if (!op->done)
		{
			op->rc = ZCLOSING;
			op->done = true;
		}
	}
}

/*
 * ZkOpWait
 *		Wait for an op's answer (which may be an error code, including
 *		connection loss: the caller decides what to do with it).
 */
void
ZkOpWait(ZkOp *op)
{
	(void) ZkOpWaitUntil(op, 0);
}

/*
 * ZkOpResult
 *		Wait for the answer to a request whose result code is all the
 *		caller needs; free the op and return the code.
 */
int
ZkOpResult(ZkOp *op)
{
	int			rc;

	ZkOpWait(op);
	rc = op->rc;
	ZkOpFree(op);
	return rc;
}

/*
 * ZkOpIsDone
 *		Has the op's answer come, without waiting?  A backend with many
 *		requests in flight uses it to sleep until a later one is answered
 *		(answers come in order), instead of once per answer.
 */
bool
ZkOpIsDone(ZkOp *op)
{
	ZkBridgeView view;

	ZkBridgeLook(op, &view);
	return view.op_done;
}

/*
 * ZkOpWaitUntil
 *		As ZkOpWait, but give up at deadline_ms; false if it passed.
 */
bool
ZkOpWaitUntil(ZkOp *op, int64 deadline_ms)
{
	return ZkWaitOrRaise(ZK_FOR_ANSWER, op, deadline_ms);
}

/*
 * ZkWaitConnectedUntil
 *		Wait until the session is connected again (bounded by the session
 *		timeout, see ZkWaitOrRaise), or give up at deadline_ms (0: none);
 *		false if it passed.
 */
bool
ZkWaitConnectedUntil(int64 deadline_ms)
{
	return ZkWaitOrRaise(ZK_FOR_CONNECTED, NULL, deadline_ms);
}

/*
 * ZkAwaitReconnect
 *		If 'rc' is a lost connection, wait until the session is connected
 *		again (ZkWaitConnectedUntil, with no deadline) and return true: the
 *		caller then sends its requests again, after whatever recovery they
 *		need (a create's, by its protection prefix).  False for any other
 *		'rc', at once.
 */
bool
ZkAwaitReconnect(int rc)
{
	if (!ZkIsConnectionLoss(rc))
		return false;
	(void) ZkWaitConnectedUntil(0);
	return true;
}

/* a request that zk_send_answered may send more than once */
typedef enum ZkRepeatKind
{
	ZK_REPEAT_CHILDREN,
	ZK_REPEAT_GET,
	ZK_REPEAT_EXISTS,
	ZK_REPEAT_DELETE,
	ZK_REPEAT_MULTI,
	ZK_REPEAT_CREATE
} ZkRepeatKind;

typedef struct ZkRepeat
{
	ZkRepeatKind kind;
	const char *path;
	const char *data;			/* ZK_REPEAT_CREATE */
	int			datalen;
	int			arg;			/* watch kind, version, or create flags */
	int			n;				/* ZK_REPEAT_MULTI */
	const ZkMultiReq *reqs;
} ZkRepeat;

/*
 * zk_send_repeat
 *		Send the request 'r' describes, once.
 */
static ZkOp *
zk_send_repeat(const ZkRepeat *r)
{
	switch (r->kind)
	{
		case ZK_REPEAT_CHILDREN:
			return ZkGetChildren(r->path);
		case ZK_REPEAT_GET:
			return ZkGetData(r->path, (ZkWatchKind) r->arg);
		case ZK_REPEAT_EXISTS:
			return ZkExists(r->path);
		case ZK_REPEAT_DELETE:
			return ZkDelete(r->path, r->arg);
		case ZK_REPEAT_MULTI:
			return ZkMulti(r->n, r->reqs);
		case ZK_REPEAT_CREATE:
			return ZkCreate(r->path, r->data, r->datalen, r->arg, true);
	}
	pg_unreachable();
}

/*
 * zk_send_answered
 *		Send the request 'r' describes and wait for its answer; on a lost
 *		connection, wait until the session is connected again and send it
 *		again.  Returns the answered op (never a lost connection), which
 *		the caller frees.  *resent (unless NULL) is set if the request was
 *		sent more than once: a write sent before may have been applied.
 */
static ZkOp *
zk_send_answered(const ZkRepeat *r, bool *resent)
{
	if (resent != NULL)
		*resent = false;
	for (;;)
	{
		ZkOp	   *op;

		CHECK_FOR_INTERRUPTS();
		op = zk_send_repeat(r);
		ZkOpWait(op);
		if (!ZkIsConnectionLoss(op->rc))
			return op;
		ZkOpFree(op);
		if (resent != NULL)
			*resent = true;
		(void) ZkWaitConnectedUntil(0);
	}
}

/*
 * ZkGetChildrenAnswered, ZkGetDataAnswered, ZkExistsAnswered
 *		A read sent, and sent again after each lost connection, until it is
 *		answered: the answered op (its rc is never a lost connection), which
 *		the caller frees.
 */
ZkOp *
ZkGetChildrenAnswered(const char *path)
{
	ZkRepeat	r = {.kind = ZK_REPEAT_CHILDREN,.path = path};

	return zk_send_answered(&r, NULL);
}

ZkOp *
ZkGetDataAnswered(const char *path, ZkWatchKind watch)
{
	ZkRepeat	r = {.kind = ZK_REPEAT_GET,.path = path,.arg = (int) watch};

	return zk_send_answered(&r, NULL);
}

ZkOp *
ZkExistsAnswered(const char *path)
{
	ZkRepeat	r = {.kind = ZK_REPEAT_EXISTS,.path = path};

	return zk_send_answered(&r, NULL);
}

/*
 * ZkGetChildrenSynced
 *		A getChildren behind a sync, both sent again after each lost
 *		connection, until answered: the answered getChildren (never a lost
 *		connection), which the caller frees.  Pipelined: one round trip.
 *
 * A server that the session reconnects to has seen every write the
 * session saw answered, and maybe no more: a write whose answer was lost
 * on another server may be applied by the leader and not yet by this
 * one, and a plain read would not show it.  The sync makes the server
 * catch up with the leader first.
 */
ZkOp *
ZkGetChildrenSynced(const char *path)
{
	for (;;)
	{
		ZkOp	   *sync;
		ZkOp	   *list;
		int			rc;

		CHECK_FOR_INTERRUPTS();
		sync = ZkSync("/");
		list = ZkGetChildren(path);
		ZkOpWait(list);
		rc = ZkOpResult(sync);
		/*
		 * The sync's own refusal first: a server that requires
		 * authentication refuses the first request with its reason and
		 * drops the connection under the next (a lost connection, which
		 * would be sent again forever).
		 */
		if (rc != ZOK && !ZkIsConnectionLoss(rc))
		{
			ZkOpFree(list);
			ZkRaiseForRc(rc);
		}
		if (rc == ZOK && !ZkIsConnectionLoss(list->rc))
			return list;
		ZkOpFree(list);
		(void) ZkWaitConnectedUntil(0);
	}
}

/*
 * ZkDeleteAnswered
 *		Delete a node (if its version is 'version'; -1: any) and wait for
 *		the answer, sending the delete again after each lost connection.
 *		Returns its result code, never a lost connection; *resent (unless
 *		NULL) says whether it was sent more than once, when ZNONODE may mean
 *		that an earlier one was applied.
 */
int
ZkDeleteAnswered(const char *path, int version, bool *resent)
{
	ZkRepeat	r = {.kind = ZK_REPEAT_DELETE,.path = path,.arg = version};

	return ZkOpResult(zk_send_answered(&r, resent));
}

/*
 * ZkDeleteSync
 *		Delete a node and wait until ZooKeeper applied it, riding out lost
 *		connections; a node already gone is fine.  Any other refusal is
 *		raised.
 */
void
ZkDeleteSync(const char *path)
{
	int			rc = ZkDeleteAnswered(path, -1, NULL);

	if (rc != ZOK && rc != ZNONODE)
		ZkRaiseForRc(rc);
}

/*
 * ZkMultiAnswered
 *		A multi (ZkMulti) sent again after each lost connection: the
 *		answered op, which the caller frees.  The caller's requests must be
 *		safe to repeat (a setData on a version, a delete that may find its
 *		node gone); *resent (unless NULL) says whether it was sent more
 *		than once.
 */
ZkOp *
ZkMultiAnswered(int n, const ZkMultiReq *reqs, bool *resent)
{
	ZkRepeat	r = {.kind = ZK_REPEAT_MULTI,.n = n,.reqs = reqs};

	return zk_send_answered(&r, resent);
}

/*
 * ZkCreateAnswered
 *		Create a node with a fixed name (no sequence; protected as
 *		ZkCreate's 'protect' does), sending the create again after each
 *		lost connection.  Returns the answered op, which the caller frees;
 *		*resent (unless NULL) says whether it was sent more than once, when
 *		ZNODEEXISTS may mean that an earlier one was applied.  Queue nodes
 *		are not created so: their retry needs the attempt's recovery by
 *		prefix (recipes/attempt_create.c).
 */
ZkOp *
ZkCreateAnswered(const char *path, const char *data, int datalen, int flags,
				 bool *resent)
{
	ZkRepeat	r = {.kind = ZK_REPEAT_CREATE,.path = path,.data = data,
	.datalen = datalen,.arg = flags};

	return zk_send_answered(&r, resent);
}

/*
 * ZkWatchArm
 *		Say which node the coming wait watches (ZK_WATCH_BLOCKER), or which
 *		own node a waiter is about to watch (ZK_WATCH_OWN): keep that node's
 *		events from now on, and no other node's.  Must be called before the
 *		getData that sets the watch, so that no event can be missed.
 */
void
ZkWatchArm(const char *path, ZkWatchKind kind)
{
	char	   *copy = strdup(path);

	if (copy == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory")));
	ZkBridgeArmWatch(kind, copy);
}

/*
 * ZkWatchWait
 *		Wait for the armed watch to fire: returns the event type
 *		(ZOO_DELETED_EVENT, ZOO_CHANGED_EVENT), or 0 if deadline_ms passed.
 */
int
ZkWatchWait(int64 deadline_ms)
{
	zk_watch_waits++;
	if (!ZkWaitOrRaise(ZK_FOR_WATCH, NULL, deadline_ms))
		return 0;
	return ZkBridgeTakeWatchEvent();
}

/*
 * ZkWatchWaitCount
 *		How many times this backend has waited for a watch (for another
 *		client's node to change): a caller that compares the count before
 *		and after a call knows whether the call waited.
 */
uint64
ZkWatchWaitCount(void)
{
	return zk_watch_waits;
}
