/*-------------------------------------------------------------------------
 *
 * recipes/semaphore.h
 *		Counting semaphores laid out like Curator's InterProcessSemaphoreV2
 *		(recipes/semaphore.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef RECIPES_SEMAPHORE_H
#define RECIPES_SEMAPHORE_H

#include "recipes/attempt.h"

/* What to acquire. */
typedef struct ZkSemaphoreArgs
{
	const char *sem_node;		/* ZooKeeper path of the semaphore node */
	const char *sem_path;		/* the user's path, for messages */
	int			max_leases;
	int64		wait_ms;		/* -1: as long as needed (lock_timeout) */
	const char *data;			/* data of the permit node */
	int			datalen;
} ZkSemaphoreArgs;

extern bool ZkSemaphoreAcquire(const ZkSemaphoreArgs *args, ZkGrant *grant);

#endif							/* RECIPES_SEMAPHORE_H */
