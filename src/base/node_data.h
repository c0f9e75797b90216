/*-------------------------------------------------------------------------
 *
 * base/node_data.h
 *		The owner description stored in each queue node zklock creates,
 *		and the WARNING for node data zklock cannot read.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BASE_NODE_DATA_H
#define BASE_NODE_DATA_H

#include "base/node_formats.h"
#include "base/vocabulary.h"

extern char *ZkBuildNodeData(ZkLockMode mode, ZkLockScope scope,
							 int64 ttl_ms, int *len);
extern ZkDataVerdict ZkParseNodeData(const char *data, int len,
									 ZkOwner *owner);
extern char *ZkNodeDataAsText(const char *data, int len);
extern void ZkWarnNodeData(const char *znode, const char *reason,
						   const char *consequence);

#endif							/* BASE_NODE_DATA_H */
