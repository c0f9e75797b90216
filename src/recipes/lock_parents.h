/*-------------------------------------------------------------------------
 *
 * recipes/lock_parents.h
 *		Lock nodes and their missing ancestors, as containers
 *		(recipes/lock_parents.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef RECIPES_LOCK_PARENTS_H
#define RECIPES_LOCK_PARENTS_H

extern void ZkCreateLockParents(const char *const *lock_nodes, int n);

#endif							/* RECIPES_LOCK_PARENTS_H */
