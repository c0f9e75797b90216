/*-------------------------------------------------------------------------
 *
 * node_data.h
 *		The owner description stored in each queue node zklock creates.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NODE_DATA_H
#define NODE_DATA_H

#include "vocabulary.h"

/* Owner fields read back from a node; NULL / -1 where absent or invalid. */
typedef struct ZkOwner
{
	char	   *cluster_name;
	char	   *host;
	int32		port;
	int32		pid;
	char	   *database;
	char	   *user;
	char	   *application_name;
	char	   *mode;
	char	   *scope;
	int64		ttl_ms;			/* a lease's ttl, -1 if none */
} ZkOwner;

extern char *ZkBuildNodeData(ZkLockMode mode, ZkLockScope scope,
							 int64 ttl_ms, int *len);
extern void ZkParseNodeData(const char *data, int len, ZkOwner *owner);
extern char *ZkNodeDataAsText(const char *data, int len);

#endif							/* NODE_DATA_H */
