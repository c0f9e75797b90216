/*-------------------------------------------------------------------------
 *
 * multi_lock.h
 *		Several locks taken at once, all or none (multi_lock.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef MULTI_LOCK_H
#define MULTI_LOCK_H

#include "lock_recipe.h"

extern bool ZkAcquireSet(const ZkAcquireArgs *args, int n, ZkGrant *grants);

#endif							/* MULTI_LOCK_H */
