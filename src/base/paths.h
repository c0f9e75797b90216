/*-------------------------------------------------------------------------
 *
 * base/paths.h
 *		Validation of user-supplied lock paths.
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMMON_PATHS_H
#define COMMON_PATHS_H

extern char *ZkCheckLockPath(const char *path);
extern const char *ZkLockPathProblem(const char *utf8_path);

#endif							/* COMMON_PATHS_H */
