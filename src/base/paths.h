/*-------------------------------------------------------------------------
 *
 * base/paths.h
 *		Validation of user-supplied lock paths.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BASE_PATHS_H
#define BASE_PATHS_H

extern char *ZkCheckLockPath(const char *path);
extern const char *ZkLockPathProblem(const char *utf8_path);

#endif							/* BASE_PATHS_H */
