/*-------------------------------------------------------------------------
 *
 * lock_path.h
 *		Validation of user-supplied lock paths.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LOCK_PATH_H
#define LOCK_PATH_H

extern char *ZkCheckLockPath(const char *path);
extern const char *ZkLockPathProblem(const char *utf8_path);

#endif							/* LOCK_PATH_H */
