/*-------------------------------------------------------------------------
 *
 * recipes/path_memory.c
 *		The backend's guess whether a lock node exists when an attempt
 *		starts, so that the attempt's first request can create a missing
 *		lock node itself.
 *
 * Lock nodes are containers: ZooKeeper removes one soon after its last
 * queue node goes.  A lock per entity ("/accounts/42") therefore often
 * finds its lock node gone, and an attempt that assumes the node exists
 * pays for it: the create fails (a round trip and a logged transaction),
 * the lock node is made, and the create is sent again.  An attempt that
 * expects the node to be missing sends the lock node's create just before
 * its queue node's instead, without waiting between them: one round trip.
 * A wrong guess either way costs a refused request (the lock node's create,
 * within the same round trip; or the queue node's, which is then sent
 * again with the lock node's) and is corrected by the attempt
 * (recipes/lock_set.c and its siblings), so a guess only ever decides speed,
 * never correctness.
 *
 * Guesses come from two-bit saturating counters, as a branch predictor
 * keeps them, so that one surprise does not flip a guess: one per lock
 * node this backend has used (how it was found lately), and one for lock
 * nodes it has not (how such nodes were found lately).  A workload of one
 * lock per entity thus settles on "missing", a hot path on "there" (when
 * the reaper takes its node between two uses, that costs one wrong guess,
 * not two), a path used now and then on "missing".  Nodes are remembered
 * by a 64-bit hash of their path (a collision only makes a guess wrong),
 * at most ZK_PATH_MEMORY entries; when it is full it is forgotten whole,
 * so that its memory stays bounded however many paths a backend uses.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "recipes/path_memory.h"

#define ZK_PATH_MEMORY	4096

/* two-bit counters: 0, 1 expect a lock node there; 2, 3 expect it missing */
#define ZK_EXPECT_MISSING(counter)	((counter) >= 2)

typedef struct ZkPathEntry
{
	uint64		key;			/* hash of the lock node's path */
	int			counter;		/* how it was found lately */
} ZkPathEntry;

static HTAB *zk_paths = NULL;

/* how lock nodes this backend did not know were found lately */
static int	zk_unknown_counter = 2;

/*
 * zk_path_key
 *		The key a lock node is remembered by.
 */
static uint64
zk_path_key(const char *node)
{
	return hash_bytes_extended((const unsigned char *) node,
							   (int) strlen(node), 0);
}

/*
 * zk_count
 *		Move a two-bit counter towards what was found.
 */
static void
zk_count(int *counter, bool fresh)
{
	if (fresh && *counter < 3)
		(*counter)++;
	else if (!fresh && *counter > 0)
		(*counter)--;
}

/*
 * zk_paths_create
 *		(Re)create the empty table.
 */
static void
zk_paths_create(void)
{
	HASHCTL		ctl;

	ctl.keysize = sizeof(uint64);
	ctl.entrysize = sizeof(ZkPathEntry);
	ctl.hcxt = TopMemoryContext;
	zk_paths = hash_create("zklock lock node memory", 256, &ctl,
						   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
}

/*
 * ZkGuessFresh
 *		Should an attempt on lock node 'node' create the node with its
 *		queue node?
 */
bool
ZkGuessFresh(const char *node)
{
	uint64		key;
	ZkPathEntry *e;

	if (zk_paths != NULL)
	{
		key = zk_path_key(node);
		e = hash_search(zk_paths, &key, HASH_FIND, NULL);
		if (e != NULL)
			return ZK_EXPECT_MISSING(e->counter);
	}
	return ZK_EXPECT_MISSING(zk_unknown_counter);
}

/*
 * ZkLearnFresh
 *		An attempt found lock node 'node' missing ('fresh') or there.
 */
void
ZkLearnFresh(const char *node, bool fresh)
{
	uint64		key;
	ZkPathEntry *e;
	bool		found;

	key = zk_path_key(node);
	if (zk_paths == NULL)
		zk_paths_create();
	e = hash_search(zk_paths, &key, HASH_FIND, NULL);
	if (e != NULL)
	{
		zk_count(&e->counter, fresh);
		return;
	}

	/* a node we did not know: teaches the guess for such nodes */
	zk_count(&zk_unknown_counter, fresh);
	if (hash_get_num_entries(zk_paths) >= ZK_PATH_MEMORY)
	{
		hash_destroy(zk_paths);
		zk_paths_create();
	}
	e = hash_search(zk_paths, &key, HASH_ENTER, &found);
	e->counter = fresh ? 2 : 1;	/* weakly what was found */
}
