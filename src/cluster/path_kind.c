/*-------------------------------------------------------------------------
 *
 * cluster/path_kind.c
 *		One kind of recipe per path: what the children of a path's node say
 *		it is used by, and the refusal (22023) of a recipe of another kind.
 *
 * A path is used by one kind of recipe at a time: locks (with lock sets and
 * leases, which share its queue), a semaphore, a barrier or a double
 * barrier.  Which kind uses a path is read from the children of its node,
 * as the layouts this extension shares with Apache Curator leave them:
 *
 *		lock			queue nodes: a child that is a contender
 *						(base/contender.c: "__WRIT__", "__READ__", "-lock-",
 *						"-latch-", "__lock__", "__rlock__" and a sequence)
 *		semaphore		a child "leases" (Curator's InterProcessSemaphoreV2
 *						permits node; its mutex node "locks" may be reaped
 *						while permits are held, so "leases" decides)
 *		double barrier	a child named like a participant (a canonical UUID,
 *						or 32 hex digits as kazoo writes them), or "ready"
 *
 * A barrier is a node without children: nothing in its children says so,
 * so a barrier is seen only by the barrier functions themselves (a node
 * whose children say another kind is not a barrier).  Children with any
 * other name say nothing (a lock path below this one, "/a/b" under "/a",
 * is a child too).
 *
 * The check is made where a recipe reads the children anyway, so that it
 * costs no request of its own where the recipe is uncontended: a lock whose
 * queue node is alone in its lock node (the create's answer says so) has
 * seen every child there is.  Two recipes of different kinds that arrive
 * at once may both find the path free: what that excludes, and what not,
 * is in doc/guarantees.md ("One kind per path").
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"

#include "client/client.h"
#include "cluster/path_kind.h"
#include "base/contender.h"
#include "base/text_encoding.h"
#include "base/uuid.h"

#define ZK_SEMAPHORE_PERMITS	"leases"
#define ZK_DOUBLE_BARRIER_READY "ready"

static ZkPathKind zk_kind_of_child(const char *name);

/*
 * ZkPathKindName
 *		The kind's name in messages.
 */
const char *
ZkPathKindName(ZkPathKind kind)
{
	switch (kind)
	{
		case ZK_KIND_LOCK:
			return "lock";
		case ZK_KIND_SEMAPHORE:
			return "semaphore";
		case ZK_KIND_BARRIER:
			return "barrier";
		case ZK_KIND_DOUBLE_BARRIER:
			return "double barrier";
		case ZK_KIND_NONE:
			break;
	}
	return "nothing";
}

/*
 * zk_kind_of_child
 *		The kind of recipe whose node a child so named is (see the file
 *		header), or ZK_KIND_NONE.
 */
static ZkPathKind
zk_kind_of_child(const char *name)
{
	ZkContender c;

	if (ZkParseContender(name, &c))
		return ZK_KIND_LOCK;
	if (strcmp(name, ZK_SEMAPHORE_PERMITS) == 0)
		return ZK_KIND_SEMAPHORE;
	if (strcmp(name, ZK_DOUBLE_BARRIER_READY) == 0 ||
		ZkIsParticipantName(name))
		return ZK_KIND_DOUBLE_BARRIER;
	return ZK_KIND_NONE;
}

/*
 * ZkPathKindOther
 *		The first kind other than 'asked' that the children 'names' of a
 *		path's node say uses the path, or ZK_KIND_NONE.
 */
ZkPathKind
ZkPathKindOther(const char *const *names, int n, ZkPathKind asked)
{
	for (int i = 0; i < n; i++)
	{
		ZkPathKind	kind = zk_kind_of_child(names[i]);

		if (kind != ZK_KIND_NONE && kind != asked)
			return kind;
	}
	return ZK_KIND_NONE;
}

/*
 * ZkPathKindRefuse
 *		A recipe of kind 'asked' on 'path', which a recipe of kind 'found'
 *		uses: 22023, naming both.
 */
void
ZkPathKindRefuse(const char *path, ZkPathKind asked, ZkPathKind found)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("ZooKeeper path \"%s\" is used by a %s, not a %s",
					ZkUtf8ForMessage(path), ZkPathKindName(found),
					ZkPathKindName(asked)),
			 errdetail("A path is used by one kind of recipe at a time; the children of its node are a %s's, and this call asks for a %s.",
					   ZkPathKindName(found), ZkPathKindName(asked)),
			 errhint("Use another path for the %s, or wait until every user of the %s is gone.",
					 ZkPathKindName(asked), ZkPathKindName(found))));
}

/*
 * ZkPathKindCheck
 *		Refuse (22023) a recipe of kind 'asked' on 'path' if the children
 *		'names' of its node, as the recipe read them, say another kind
 *		uses it.  Sends no request.
 */
void
ZkPathKindCheck(const char *path, ZkPathKind asked,
				const char *const *names, int n)
{
	ZkPathKind	found = ZkPathKindOther(names, n, asked);

	if (found != ZK_KIND_NONE)
		ZkPathKindRefuse(path, asked, found);
}

/*
 * ZkPathKindOfNode
 *		As ZkPathKindOther, reading the children of 'node' (one request,
 *		riding out lost connections); a node that does not exist is used
 *		by nobody.  For the recipes that have not read them anyway.
 */
ZkPathKind
ZkPathKindOfNode(const char *node, ZkPathKind asked)
{
	ZkOp	   *op = ZkGetChildrenAnswered(node);
	int			rc = op->rc;
	ZkPathKind	found = ZK_KIND_NONE;

	if (rc == ZOK)
		found = ZkPathKindOther((const char *const *) op->children,
								op->nchildren, asked);
	ZkOpFree(op);
	if (rc != ZOK && rc != ZNONODE)
		ZkRaiseForRc(rc);
	return found;
}

/*
 * ZkPathKindCheckNode
 *		As ZkPathKindCheck, reading the children of 'node'
 *		(ZkPathKindOfNode).
 */
void
ZkPathKindCheckNode(const char *node, const char *path, ZkPathKind asked)
{
	ZkPathKind	found = ZkPathKindOfNode(node, asked);

	if (found != ZK_KIND_NONE)
		ZkPathKindRefuse(path, asked, found);
}
