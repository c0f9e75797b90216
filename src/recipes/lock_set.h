/*-------------------------------------------------------------------------
 *
 * recipes/lock_set.h
 *		The read/write lock recipe: one lock, or several taken at once, all
 *		or none (recipes/lock_set.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef RECIPES_LOCK_SET_H
#define RECIPES_LOCK_SET_H

#include "recipes/attempt.h"

extern bool ZkAcquireSet(const ZkAcquireArgs *args, int n, ZkGrant *grants);

#endif							/* RECIPES_LOCK_SET_H */
