/*-------------------------------------------------------------------------
 *
 * cluster/deadlock.c
 *		Cluster-wide deadlock detection among zklock's waiters: the search
 *		for a cycle of waits, the choice of its one victim, and the report.
 *
 * A backend whose wait has lasted deadlock_timeout publishes what it waits
 * for, a wait record (cluster/wait_record.c): the queue nodes it waits with
 * (its targets).  A target that waits in its queue is blocked by the nodes
 * ahead of it there that conflict with it (a writer: every node; a reader:
 * every writer), which the check reads from the queue itself; any other
 * wait (a permit count, an upgrade) lists the nodes that block it, each
 * with the session that owns it.  The wait graph searched here has the
 * waiting sessions as vertices and an edge from each to the owner of each
 * node that blocks one of its targets.
 *
 * The search (ZkDeadlockCheck) goes out from our own record in rounds.  A
 * round reads the queues its work needs (getChildren), the owners of the
 * nodes found to block (exists: ephemeralOwner), and the records of the
 * sessions met for the first time, each kind of read pipelined in one
 * round trip; the next round's work is the targets of those sessions.
 * Every session met is remembered (a visited set, as FindLockCycleRecurse's
 * visitedProcs in PostgreSQL's lmgr/deadlock.c), every queue is read once
 * per check, and every node's owner at most once.  A session without a
 * record is not waiting in zklock (or is not zklock at all: Curator and
 * kazoo publish nothing), so no cycle goes through it; an any-of wait
 * (base/vocabulary.h) is never followed either.
 *
 * What is left out.  Reading the owner of every node ahead would cost the
 * k-th waiter of a queue k reads, n^2 for n waiters.  A zklock node's name
 * says the shape of the wait that made it (base/contender.h): a node of a
 * plain wait in one queue, still waiting (it does not hold its lock by its
 * place), belongs to a session that is blocked by the nodes ahead of it in
 * that queue and by nothing else.  Ahead of a writer, such a node leads
 * nowhere the writer's other edges do not lead: any cycle through its
 * owner has a shorter one without it, and the writer's check leaves it out
 * (zk_emit_writer); so does a node of a wait in k queues when the writer's
 * session waits behind that wait's node in each of the k (zk_covered).  In
 * a queue of zklock writers that leaves the holders: a waiter's check
 * costs a constant number of reads, and n waiters O(n) in all.  A reader
 * conflicts with writers only: a waiting writer ahead stands for everything
 * ahead of it only once its owner is known to wait with it (its record,
 * followed by this check), so a reader's queue is met writer by writer,
 * nearest first, in pieces that stop at such a writer and go on when its
 * owner turns out not to stand for the rest (zk_emit_reader).  Owners are
 * read from ZooKeeper, never taken from a name: a false shape can hide a
 * cycle through the client that wrote it, never make one up.  The queue a
 * check reads is read after its own record was created: an older copy
 * could show as waiting a node that has been granted since, whose owner
 * may wait elsewhere now.
 *
 * Why a reported deadlock is real, and the report of the victim's 40P01:
 * cluster/deadlock_cycle.c.
 *
 * Exactly one victim.  The member whose record has the highest czxid (the
 * last to publish) is the victim, and only it acts.  A check follows only
 * members whose record is older than its own, so every cycle it finds has
 * it as the victim, and it is sure to see such a cycle whole: every other
 * record existed before it published, and its reads come after its own
 * create.  A member that published earlier finds no cycle through the last
 * one and goes on waiting; the victim's wait ends with ERROR 40P01, which
 * breaks the cycle.
 *
 * Cost.  Nothing for waits shorter than deadlock_timeout.  Then, once per
 * wait: one create (the record), and a search of a few rounds of
 * pipelined reads: each queue of the members met once, the owners of the
 * nodes not left out, the records of the sessions met; plus one pipelined
 * verification round trip when a cycle is found.  In a queue of zklock
 * waiters behind one holder that is about four requests per waiter
 * (BENCHMARKS.md, "Long queues past deadlock_timeout").
 *
 * Errors, 40P01 included, name no operation: the check runs inside a wait,
 * whose context (base/operation_context.c) names what the backend waits for.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "cluster/deadlock.h"
#include "cluster/deadlock_cycle.h"
#include "base/contender.h"
#include "base/text_encoding.h"
#include "cluster/wait_record.h"
#include "client/client.h"

/* longest cycle followed (members); longer ones are not reported */
#define ZK_MAX_CYCLE	64
/* most rounds of reads one check makes */
#define ZK_MAX_ROUNDS	(4 * ZK_MAX_CYCLE)

/* One lock node's queue, as one check read it. */
typedef struct ZkQueueRead
{
	char		node[ZK_MAX_ZNODE_BYTES + 1];	/* hash key: the lock node */
	bool		read;			/* answered (n 0 if it was not there) */
	bool		asked;			/* in this round's reads */
	int			n;				/* contenders, in queue order */
	ZkContender *c;
	int		   *shape;			/* the shape each one's name claims */
	bool	   *granted;		/* holds the lock by its place */
	bool	   *resolved;		/* its owner was read: */
	int64	   *owner;			/* 0: none */
	char	  **edge;			/* the node standing for it in an edge */
	HTAB	   *by_prefix;		/* prefix -> position, for shapes > 1 */
} ZkQueueRead;

typedef struct ZkPrefixEntry
{
	char		prefix[ZK_PREFIX_LEN + 1];	/* hash key */
	int			pos;
} ZkPrefixEntry;

/* One session the search has met: the visited set's entry. */
typedef struct ZkVisited
{
	int64		session;		/* hash key */
	int			index;			/* in the search's members */
} ZkVisited;

typedef struct ZkSearchMember
{
	int64		session;
	const ZkWaitRecord *rec;	/* NULL: no wait to follow */
	int			parent;			/* met through a target of this member */
	int			target;			/* (that target) */
	const char *edge;			/* blocked by this node of ours */
	int			depth;			/* cycle members before us */
} ZkSearchMember;

/*
 * A piece of work: the blockers of one target of one member still to be
 * met.  A reader's queue is met in pieces (see zk_emit_reader).
 */
typedef struct ZkWork
{
	int			member;
	int			target;
	int			from;			/* queued: the position to go down from */
	int			budget;			/* reader: writers that may stand for all */
	int			stopped;		/* reader: where it stopped, or -1 */
	int			first_cand;		/* its candidates this round */
	int			ncands;
} ZkWork;

/* A node that blocks a member's target: an edge, once its owner is known. */
typedef struct ZkCand
{
	int			member;
	int			target;
	ZkQueueRead *q;				/* a queue's node (q->c[pos]), or */
	int			pos;
	int64		owner;			/* a listed blocker, its owner known */
	const char *edge;
	bool		stands_for_all; /* a reader's writer, see zk_emit_reader */
} ZkCand;

/* The state of one check. */
typedef struct ZkSearch
{
	int64		start;			/* our session */
	int64		start_czxid;	/* our record's */
	HTAB	   *visited;
	HTAB	   *queues;
	ZkSearchMember *members;
	int			nmembers;
	int			maxmembers;
	ZkCand	   *cands;
	int			ncands;
	int			maxcands;
} ZkSearch;

/* the current check met a lost connection: it is not conclusive */
static bool zk_check_incomplete = false;

static int	zk_search(ZkSearch *s, ZkCycleMember *cycle);
static ZkQueueRead *zk_queue_of(ZkSearch *s, const char *target_node);
static void zk_read_queues(ZkSearch *s);
static int	zk_queue_position(ZkSearch *s, const char *target_node,
							  ZkQueueRead **q);
static void zk_emit(ZkSearch *s, ZkWork *w);
static void zk_emit_writer(ZkSearch *s, ZkWork *w, ZkQueueRead *q, int me);
static void zk_emit_reader(ZkSearch *s, ZkWork *w, ZkQueueRead *q);
static bool zk_covered(ZkSearch *s, const ZkWaitRecord *rec, int t,
					   ZkQueueRead *q, int pos);
static void zk_add_cand(ZkSearch *s, ZkWork *w, ZkQueueRead *q, int pos,
						int64 owner, const char *edge);
static void zk_resolve(ZkSearch *s, int first);
static int	zk_visit(ZkSearch *s, int64 session, int parent, int target,
					 const char *edge);
static void zk_read_records(ZkSearch *s, int first, int last);
static bool zk_stands_for_all(ZkSearch *s, const ZkCand *c);
static int	zk_cycle_to(const ZkSearch *s, const ZkCand *c,
						ZkCycleMember *cycle);

/* the full path of a queue's node */
static char *
zk_node_path(const ZkQueueRead *q, int pos)
{
	return psprintf("%s/%s", q->node, q->c[pos].name);
}

/* may a member's wait be followed: an all-of wait no newer than ours */
static bool
zk_followed(const ZkSearch *s, const ZkWaitRecord *rec)
{
	return rec != NULL && rec->kind == ZK_WAIT_ALL_OF &&
		rec->czxid <= s->start_czxid;
}

/*
 * zk_search
 *		Rounds of reads from our own wait outwards: each round reads the
 *		queues its work needs, the owners of the nodes found to block, and
 *		the records of the sessions met for the first time, each kind in
 *		one pipelined round trip; the next round's work is the targets of
 *		those sessions.  Returns the length of the first cycle back to us
 *		found, with its members in 'cycle' in wait order (each waits for
 *		the next, the last for us), or 0 if there is none of at most
 *		ZK_MAX_CYCLE members.
 */
static int
zk_search(ZkSearch *s, ZkCycleMember *cycle)
{
	ZkWork	   *work;
	int			nwork = 0;
	int			maxwork = 16;

	work = palloc(sizeof(ZkWork) * maxwork);
	for (int t = 0; t < s->members[0].rec->ntargets; t++)
	{
		work[nwork].member = 0;
		work[nwork].target = t;
		work[nwork].from = -1;
		work[nwork].budget = 1;
		nwork++;
	}

	for (int round = 0; round < ZK_MAX_ROUNDS && nwork > 0; round++)
	{
		int			first_member = s->nmembers;
		ZkWork	   *next;
		int			nnext = 0;
		int			maxnext;

		/*
		 * The queues this round needs, and a set's other queues (for the
		 * rule that leaves out its nodes), read together.
		 */
		for (int i = 0; i < nwork; i++)
		{
			const ZkWaitRecord *rec = s->members[work[i].member].rec;

			for (int t = 0; t < rec->ntargets; t++)
			{
				ZkQueueRead *q;

				if (!rec->targets[t].queued ||
					(t != work[i].target && work[i].from != -1))
					continue;
				q = zk_queue_of(s, rec->targets[t].node);
				if (q != NULL && !q->read)
					q->asked = true;
			}
		}
		zk_read_queues(s);

		/* the nodes that block each piece of work, their owners read */
		s->ncands = 0;
		for (int i = 0; i < nwork; i++)
			zk_emit(s, &work[i]);
		zk_resolve(s, 0);

		/* each an edge: back to us closes a cycle */
		for (int i = 0; i < s->ncands; i++)
		{
			ZkCand	   *c = &s->cands[i];

			/* our own other node ahead of ours is no edge */
			if (c->owner == s->start && c->member != 0)
				return zk_cycle_to(s, c, cycle);
		}
		for (int i = 0; i < s->ncands; i++)
		{
			ZkCand	   *c = &s->cands[i];

			if (c->owner != 0 && c->owner != s->members[c->member].session)
				(void) zk_visit(s, c->owner, c->member, c->target, c->edge);
		}
		zk_read_records(s, first_member, s->nmembers);

		/* the next round: the targets of the members met, and more of a
		 * reader's queue where no writer met stands for the rest */
		maxnext = nwork + 16;
		for (int m = first_member; m < s->nmembers; m++)
			if (zk_followed(s, s->members[m].rec))
				maxnext += s->members[m].rec->ntargets;
		next = palloc(sizeof(ZkWork) * maxnext);
		for (int i = 0; i < nwork; i++)
		{
			ZkWork	   *w = &work[i];
			bool		covered = false;

			if (w->stopped <= 0)
				continue;		/* all met, or nothing ahead */
			for (int k = w->first_cand; k < w->first_cand + w->ncands; k++)
				covered = covered || zk_stands_for_all(s, &s->cands[k]);
			if (covered)
				continue;
			next[nnext] = *w;
			next[nnext].from = w->stopped - 1;
			next[nnext].budget = Min(w->budget * 2, 1024);
			nnext++;
		}
		for (int m = first_member; m < s->nmembers; m++)
		{
			const ZkWaitRecord *rec = s->members[m].rec;

			if (!zk_followed(s, rec) || s->members[m].depth >= ZK_MAX_CYCLE - 1)
				continue;
			for (int t = 0; t < rec->ntargets; t++)
			{
				next[nnext].member = m;
				next[nnext].target = t;
				next[nnext].from = -1;
				next[nnext].budget = 1;
				nnext++;
			}
		}
		pfree(work);
		work = next;
		nwork = nnext;
	}
	return 0;
}

/*
 * zk_queue_of
 *		The queue a target node stands in (its parent's children), entered
 *		to be read if it is new; NULL for a node with no parent.
 */
static ZkQueueRead *
zk_queue_of(ZkSearch *s, const char *target_node)
{
	const char *slash = strrchr(target_node, '/');
	char		key[ZK_MAX_ZNODE_BYTES + 1];
	ZkQueueRead *q;
	bool		found;

	if (slash == NULL || slash == target_node ||
		slash - target_node > ZK_MAX_ZNODE_BYTES)
		return NULL;
	memset(key, 0, sizeof(key));
	memcpy(key, target_node, slash - target_node);
	q = hash_search(s->queues, key, HASH_ENTER, &found);
	if (!found)
	{
		q->read = q->asked = false;
		q->n = 0;
		q->by_prefix = NULL;
	}
	return q;
}

/*
 * zk_read_queues
 *		Read the queues asked for in one pipelined round trip: each one's
 *		contenders in queue order, the shape each name claims and whether
 *		each holds the lock by its place (a writer first in the queue, a
 *		reader with no writer before it).  A queue that is gone has no
 *		contenders.
 */
static void
zk_read_queues(ZkSearch *s)
{
	long		max = Max(hash_get_num_entries(s->queues), 1);
	ZkQueueRead **qs = palloc(sizeof(ZkQueueRead *) * max);
	ZkOp	  **ops = palloc(sizeof(ZkOp *) * max);
	HASH_SEQ_STATUS seq;
	ZkQueueRead *asked;
	int			n = 0;

	hash_seq_init(&seq, s->queues);
	while ((asked = hash_seq_search(&seq)) != NULL)
	{
		if (!asked->asked)
			continue;
		qs[n] = asked;
		ops[n++] = ZkGetChildren(asked->node);
	}
	for (int i = 0; i < n; i++)
	{
		ZkQueueRead *q = qs[i];
		ZkOp	   *op = ops[i];

		ZkOpWait(op);
		q->asked = false;
		q->read = true;
		if (op->rc != ZOK)
		{
			if (ZkIsConnectionLoss(op->rc))
				zk_check_incomplete = true;
			else if (op->rc != ZNONODE)
				ZkRaiseForRc(op->rc);
			ZkOpFree(op);
			continue;
		}
		q->c = palloc(sizeof(ZkContender) * Max(op->nchildren, 1));
		q->n = ZkSortContenders(op->children, op->nchildren, q->c);
		for (int k = 0; k < q->n; k++)
			q->c[k].name = pstrdup(q->c[k].name);
		ZkOpFree(op);
		q->shape = palloc(sizeof(int) * Max(q->n, 1));
		q->granted = palloc(sizeof(bool) * Max(q->n, 1));
		q->resolved = palloc0(sizeof(bool) * Max(q->n, 1));
		q->owner = palloc0(sizeof(int64) * Max(q->n, 1));
		q->edge = palloc0(sizeof(char *) * Max(q->n, 1));
		ZkGrantedByPlace(q->c, q->n, q->granted);
		for (int k = 0; k < q->n; k++)
			q->shape[k] = ZkPrefixShape(q->c[k].name);
	}
	pfree(qs);
	pfree(ops);
}

/*
 * zk_queue_position
 *		Where a target node stands in its queue (read), or -1 if it is not
 *		there (gone: the wait has ended).
 */
static int
zk_queue_position(ZkSearch *s, const char *target_node, ZkQueueRead **q)
{
	const char *name = strrchr(target_node, '/');

	*q = zk_queue_of(s, target_node);
	if (*q == NULL || !(*q)->read || name == NULL)
		return -1;
	return ZkFindContender((*q)->c, (*q)->n, name + 1);
}

/*
 * zk_emit
 *		The nodes that block one piece of work, as candidates: a listed
 *		target's blockers as its record lists them (their owners read when
 *		it was published), a queued target's from its queue.
 */
static void
zk_emit(ZkSearch *s, ZkWork *w)
{
	const ZkWaitRecord *rec = s->members[w->member].rec;
	const ZkWaitRecordTarget *t = &rec->targets[w->target];
	ZkQueueRead *q;
	int			me;

	w->first_cand = s->ncands;
	w->stopped = -1;
	if (!t->queued)
	{
		for (int i = 0; i < rec->nblockers; i++)
		{
			if (rec->blockers[i].target == w->target)
				zk_add_cand(s, w, NULL, -1, rec->blockers[i].owner,
							rec->blockers[i].node);
		}
	}
	else if ((me = zk_queue_position(s, t->node, &q)) > 0)
	{
		if (w->from < 0)
			w->from = me - 1;
		if (t->mode == ZK_MODE_SHARED)
			zk_emit_reader(s, w, q);
		else
			zk_emit_writer(s, w, q, me);
	}
	w->ncands = s->ncands - w->first_cand;
}

/*
 * zk_emit_writer
 *		A writer is blocked by every node ahead of it.  Left out is a node
 *		whose owner, by the shape its name claims, waits with it and leads
 *		nowhere else (zk_covered): whatever blocks that owner blocks this
 *		writer too, so every cycle through the owner has a shorter one
 *		without it.  In a queue of zklock writers that leaves the holders.
 */
static void
zk_emit_writer(ZkSearch *s, ZkWork *w, ZkQueueRead *q, int me)
{
	const ZkWaitRecord *rec = s->members[w->member].rec;

	for (int i = 0; i < me; i++)
	{
		if (!zk_covered(s, rec, w->target, q, i))
			zk_add_cand(s, w, q, i, 0, NULL);
	}
}

/*
 * zk_emit_reader
 *		A reader is blocked by every writer ahead of it, nearest first.
 *		A writer that waits with a zklock node of one queue (shape 1)
 *		stands for all the writers ahead of it once its owner is known to
 *		wait with it (zk_stands_for_all): that owner is blocked by every
 *		node ahead, so the writers ahead lead nowhere it does not.  So a
 *		piece of work stops after 'budget' such writers; if none of them
 *		stands for the rest (its owner published no wait, or a newer one),
 *		the next round goes on from there with twice the budget.
 */
static void
zk_emit_reader(ZkSearch *s, ZkWork *w, ZkQueueRead *q)
{
	int			tentative = 0;

	for (int i = w->from; i >= 0; i--)
	{
		if (q->c[i].mode == ZK_MODE_SHARED)
			continue;
		zk_add_cand(s, w, q, i, 0, NULL);
		if (!q->granted[i] && q->shape[i] == 1)
		{
			s->cands[s->ncands - 1].stands_for_all = true;
			if (++tentative == w->budget)
			{
				w->stopped = i;
				return;
			}
		}
	}
}

/*
 * zk_prefix_position
 *		Where the node with a name's protection prefix stands in a queue,
 *		or -1.
 */
static int
zk_prefix_position(ZkQueueRead *q, const char *name)
{
	ZkPrefixEntry *e;
	char		key[ZK_PREFIX_LEN + 1];

	if (q->by_prefix == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = ZK_PREFIX_LEN + 1;
		ctl.entrysize = sizeof(ZkPrefixEntry);
		ctl.hcxt = CurrentMemoryContext;
		q->by_prefix = hash_create("zklock deadlock check prefixes",
								   Max(q->n, 16), &ctl,
								   HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
		for (int i = 0; i < q->n; i++)
		{
			if (q->shape[i] < 2)
				continue;
			memset(key, 0, sizeof(key));
			memcpy(key, q->c[i].name, ZK_PREFIX_LEN);
			e = hash_search(q->by_prefix, key, HASH_ENTER, NULL);
			e->pos = i;
		}
	}
	memset(key, 0, sizeof(key));
	memcpy(key, name, ZK_PREFIX_LEN);
	e = hash_search(q->by_prefix, key, HASH_FIND, NULL);
	return e ? e->pos : -1;
}

/*
 * zk_covered
 *		May node 'pos' of queue q, ahead of a writer of member 'rec' (its
 *		target t), be left out?  Only if its name claims a plain wait (see
 *		base/contender.h) of k queues that is still going on (the node
 *		does not hold its lock), and the member waits in each of those k
 *		queues behind that wait's node there, so that whatever blocks the
 *		node's owner blocks the member too: for each of the k nodes, it
 *		holds its lock, or it is ahead of the member's node there and the
 *		member's node is a writer or it is a reader.  A claim is a stranger's
 *		word: a false one can only hide its own writer's edges.
 */
static bool
zk_covered(ZkSearch *s, const ZkWaitRecord *rec, int t, ZkQueueRead *q,
		   int pos)
{
	int			k = q->shape[pos];
	int			found = 1;

	if (q->granted[pos] || k == ZK_SHAPE_NONE)
		return false;
	if (k == 1)
		return true;
	for (int u = 0; u < rec->ntargets; u++)
	{
		ZkQueueRead *q2;
		int			me2;
		int			j;

		if (u == t || !rec->targets[u].queued)
			continue;
		me2 = zk_queue_position(s, rec->targets[u].node, &q2);
		if (me2 < 0 || (j = zk_prefix_position(q2, q->c[pos].name)) < 0)
			continue;
		if (!q2->granted[j] &&
			(j > me2 || (rec->targets[u].mode == ZK_MODE_SHARED &&
						 q2->c[j].mode != ZK_MODE_SHARED)))
			return false;
		found++;
	}
	return found == k;
}

/* one more candidate of a piece of work */
static void
zk_add_cand(ZkSearch *s, ZkWork *w, ZkQueueRead *q, int pos, int64 owner,
			const char *edge)
{
	ZkCand	   *c;

	if (s->ncands == s->maxcands)
	{
		s->maxcands *= 2;
		s->cands = repalloc(s->cands, sizeof(ZkCand) * s->maxcands);
	}
	c = &s->cands[s->ncands++];
	c->member = w->member;
	c->target = w->target;
	c->q = q;
	c->pos = pos;
	c->owner = owner;
	c->edge = edge;
	c->stands_for_all = false;
}

/*
 * zk_resolve
 *		The owners of this round's candidates from queues, each node's read
 *		once per check, those not read yet in one pipelined round trip
 *		(ZkBlockerOwners).
 */
static void
zk_resolve(ZkSearch *s, int first)
{
	char	  **nodes = palloc(sizeof(char *) * Max(s->ncands, 1));
	ZkCand	  **which = palloc(sizeof(ZkCand *) * Max(s->ncands, 1));
	int64	   *owners = palloc(sizeof(int64) * Max(s->ncands, 1));
	char	  **edges = palloc(sizeof(char *) * Max(s->ncands, 1));
	int			n = 0;

	for (int i = first; i < s->ncands; i++)
	{
		ZkCand	   *c = &s->cands[i];

		if (c->q == NULL || c->q->resolved[c->pos])
			continue;
		c->q->resolved[c->pos] = true;	/* asked once */
		nodes[n] = zk_node_path(c->q, c->pos);
		which[n++] = c;
	}
	if (!ZkBlockerOwners(n, nodes, owners, edges))
		zk_check_incomplete = true;
	for (int i = 0; i < n; i++)
	{
		which[i]->q->owner[which[i]->pos] = owners[i];
		which[i]->q->edge[which[i]->pos] = edges[i];
	}
	for (int i = first; i < s->ncands; i++)
	{
		ZkCand	   *c = &s->cands[i];

		if (c->q == NULL)
			continue;
		c->owner = c->q->owner[c->pos];
		c->edge = c->q->edge[c->pos];
	}
}

/*
 * zk_visit
 *		Meet 'session' through node 'edge' blocking target 'target' of
 *		member 'parent': returns its index, a new member (its record still
 *		to be read) if it was not met before.
 */
static int
zk_visit(ZkSearch *s, int64 session, int parent, int target, const char *edge)
{
	ZkVisited  *v;
	bool		found;
	ZkSearchMember *m;

	v = hash_search(s->visited, &session, HASH_ENTER, &found);
	if (found)
		return v->index;
	if (s->nmembers == s->maxmembers)
	{
		s->maxmembers *= 2;
		s->members = repalloc(s->members,
							  sizeof(ZkSearchMember) * s->maxmembers);
	}
	v->index = s->nmembers;
	m = &s->members[s->nmembers++];
	m->session = session;
	m->rec = NULL;
	m->parent = parent;
	m->target = target;
	m->edge = edge;
	m->depth = parent >= 0 ? s->members[parent].depth + 1 : 0;
	return v->index;
}

/*
 * zk_read_records
 *		Read the records of members[first .. last - 1], pipelined: one
 *		round trip.  A member without a record is not waiting in zklock (or
 *		is not zklock) and leads nowhere.
 */
static void
zk_read_records(ZkSearch *s, int first, int last)
{
	int			n = last - first;
	ZkOp	  **ops;

	if (n <= 0)
		return;
	ops = palloc(sizeof(ZkOp *) * n);
	for (int i = 0; i < n; i++)
		ops[i] = ZkWaitRecordFetch(s->members[first + i].session);
	for (int i = 0; i < n; i++)
		ZkOpWait(ops[i]);
	for (int i = 0; i < n; i++)
	{
		ZkSearchMember *m = &s->members[first + i];

		if (ops[i]->rc == ZOK)
			m->rec = ZkWaitRecordParse(ops[i], m->session);
		else if (ZkIsConnectionLoss(ops[i]->rc))
			zk_check_incomplete = true;
		else if (ops[i]->rc != ZNONODE)
			ZkRaiseForRc(ops[i]->rc);
	}
	for (int i = 0; i < n; i++)
		ZkOpFree(ops[i]);
	pfree(ops);
}

/*
 * zk_stands_for_all
 *		Does a reader's candidate writer stand for every node ahead of it:
 *		its owner waits with it, as a queued writer (followed, so its own
 *		blockers are met in turn)?
 */
static bool
zk_stands_for_all(ZkSearch *s, const ZkCand *c)
{
	ZkVisited  *v;
	const ZkWaitRecord *rec;
	char	   *node;
	bool		yes = false;

	if (!c->stands_for_all || c->owner == 0)
		return false;
	v = hash_search(s->visited, &c->owner, HASH_FIND, NULL);
	if (v == NULL)
		return false;
	rec = s->members[v->index].rec;
	if (!zk_followed(s, rec) || s->members[v->index].depth >= ZK_MAX_CYCLE - 1)
		return false;
	node = zk_node_path(c->q, c->pos);
	for (int t = 0; t < rec->ntargets && !yes; t++)
		yes = rec->targets[t].queued && rec->targets[t].mode != ZK_MODE_SHARED &&
			strcmp(rec->targets[t].node, node) == 0;
	pfree(node);
	return yes;
}

/*
 * zk_cycle_to
 *		The cycle closed by candidate c, whose owner is us: the path from us
 *		to c's member through the members' parents, in wait order.
 *		Returns its length.
 */
static int
zk_cycle_to(const ZkSearch *s, const ZkCand *c, ZkCycleMember *cycle)
{
	int			n = s->members[c->member].depth + 1;
	int			target = c->target;
	const char *blocker = c->edge;

	Assert(n <= ZK_MAX_CYCLE);
	/* fill it from the end: each member's blocker is the next's node */
	for (int m = c->member, i = n - 1; m >= 0; m = s->members[m].parent, i--)
	{
		cycle[i].rec = s->members[m].rec;
		cycle[i].target = target;
		cycle[i].blocker = blocker;
		target = s->members[m].target;
		blocker = s->members[m].edge;
	}
	return n;
}

/*
 * ZkDeadlockCheck
 *		Look for a cycle of waits through this backend's published wait
 *		(ZkWaitRecordPublish) and, if this backend is its victim, end the
 *		wait with ERROR 40P01.  Returns otherwise: true when the check was
 *		conclusive, false when a lost connection cut it short (the caller
 *		checks again later; the wait itself rides out the outage).
 *
 * No sync is needed before the search: it reads after our own create, so
 * it sees every record published before ours, which is all that the
 * victim rule needs.
 */
bool
ZkDeadlockCheck(const ZkWaitDesc *wait)
{
	ZkCycleMember cycle[ZK_MAX_CYCLE];
	ZkSearch	s;
	HASHCTL		ctl;
	int			n;
	int			victim = 0;
	const ZkWaitRecord *self = ZkWaitRecordOwn();
	MemoryContext cxt;
	MemoryContext old;

	if (self == NULL || self->kind != ZK_WAIT_ALL_OF)
		return true;
	zk_check_incomplete = false;

	cxt = AllocSetContextCreate(CurrentMemoryContext, "zklock deadlock check",
								ALLOCSET_SMALL_SIZES);
	old = MemoryContextSwitchTo(cxt);

	ctl.keysize = sizeof(int64);
	ctl.entrysize = sizeof(ZkVisited);
	ctl.hcxt = cxt;
	s.visited = hash_create("zklock deadlock check visited sessions", 64,
							&ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	ctl.keysize = ZK_MAX_ZNODE_BYTES + 1;
	ctl.entrysize = sizeof(ZkQueueRead);
	s.queues = hash_create("zklock deadlock check queues", 16,
						   &ctl, HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
	s.start = self->session;
	s.start_czxid = self->czxid;
	s.maxmembers = 64;
	s.members = palloc(sizeof(ZkSearchMember) * s.maxmembers);
	s.nmembers = 0;
	s.maxcands = 64;
	s.cands = palloc(sizeof(ZkCand) * s.maxcands);
	s.ncands = 0;
	(void) zk_visit(&s, self->session, -1, -1, NULL);
	s.members[0].rec = self;

	/* every member followed is older than us: a cycle found is ours */
	n = zk_search(&s, cycle);
	if (n > 0)
	{
		for (int i = 1; i < n; i++)
		{
			if (cycle[i].rec->czxid > cycle[victim].rec->czxid)
				victim = i;
		}
		if (victim == 0 &&
			ZkDeadlockVerifyCycle(cycle, n, &zk_check_incomplete))
			ZkDeadlockReport(cycle, n);
	}

	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
	return !zk_check_incomplete;
}
