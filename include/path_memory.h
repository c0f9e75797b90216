/*-------------------------------------------------------------------------
 *
 * path_memory.h
 *		The backend's guess whether a lock node exists, so that the first
 *		request of an attempt can create a missing lock node itself
 *		(path_memory.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef PATH_MEMORY_H
#define PATH_MEMORY_H

extern bool ZkGuessFresh(const char *node);
extern void ZkLearnFresh(const char *node, bool fresh);

#endif							/* PATH_MEMORY_H */
