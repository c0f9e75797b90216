/*-------------------------------------------------------------------------
 *
 * recipes/path_memory.h
 *		The backend's guess whether a lock node exists, so that the first
 *		request of an attempt can create a missing lock node itself
 *		(recipes/path_memory.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef RECIPES_PATH_MEMORY_H
#define RECIPES_PATH_MEMORY_H

extern bool ZkGuessFresh(const char *node);
extern void ZkLearnFresh(const char *node, bool fresh);

#endif							/* RECIPES_PATH_MEMORY_H */
