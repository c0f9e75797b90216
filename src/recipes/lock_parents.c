/*-------------------------------------------------------------------------
 *
 * recipes/lock_parents.c
 *		Lock nodes and their missing ancestors, created as container nodes
 *		(which ZooKeeper deletes once empty): before a queue recipe's create
 *		that found its lock node missing, and before a barrier's nodes.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "nodes/pg_list.h"

#include "recipes/lock_parents.h"
#include "client/client.h"

/*
 * ZkCreateLockParents
 *		Create lock nodes and every missing ancestor as container nodes, all
 *		requests pipelined (ZooKeeper applies them in order, so a parent
 *		comes before its children).  Existing nodes are fine; an ancestor
 *		shared by several lock nodes is asked for once.
 */
void
ZkCreateLockParents(const char *const *lock_nodes, int n)
{
	List	   *wanted = NIL;
	ZkOp	  **ops;

	for (int i = 0; i < n; i++)
	{
		const char *lock_node = lock_nodes[i];

		for (const char *p = lock_node + 1;; p++)
		{
			if (*p == '/' || *p == '\0')
			{
				char	   *prefix = pnstrdup(lock_node, p - lock_node);
				ListCell   *lc;
				bool		seen = false;

				foreach(lc, wanted)
					seen |= (strcmp((char *) lfirst(lc), prefix) == 0);
				if (!seen)
					wanted = lappend(wanted, prefix);
				if (*p == '\0')
					break;
			}
		}
	}
	ops = palloc(sizeof(ZkOp *) * list_length(wanted));

	for (;;)
	{
		int			nops = 0;
		int			bad = ZOK;
		ListCell   *lc;

		CHECK_FOR_INTERRUPTS();
		/* protected like queue nodes when authenticated */
		foreach(lc, wanted)
			ops[nops++] = ZkCreate((char *) lfirst(lc), "", 0, ZOO_CONTAINER,
								   true);
		for (int i = 0; i < nops; i++)
		{
			ZkOpWait(ops[i]);
			if (ops[i]->rc != ZOK && ops[i]->rc != ZNODEEXISTS && bad == ZOK)
				bad = ops[i]->rc;
			ZkOpFree(ops[i]);
		}
		if (bad == ZOK)
			break;
		/* ZNONODE: a parent was reaped; again */
		if (!ZkAwaitReconnect(bad) && bad != ZNONODE)
			ZkRaiseForRc(bad);
	}
	pfree(ops);
	list_free_deep(wanted);
}
