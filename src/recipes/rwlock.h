/*-------------------------------------------------------------------------
 *
 * recipes/rwlock.h
 *		The ZooKeeper read/write lock recipe: one queue attempt from start
 *		to end (recipes/rwlock.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef RECIPES_RWLOCK_H
#define RECIPES_RWLOCK_H

#include "recipes/attempt.h"

extern bool ZkAcquire(const ZkAcquireArgs *args, ZkGrant *grant);

#endif							/* RECIPES_RWLOCK_H */
