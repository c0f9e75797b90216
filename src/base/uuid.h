/*-------------------------------------------------------------------------
 *
 * base/uuid.h
 *		Fresh UUIDs and protection prefixes (base/uuid.c); their lengths,
 *		ZK_UUID_LEN and ZK_PREFIX_LEN, are in base/contender.h.
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMMON_UUID_H
#define COMMON_UUID_H

extern void ZkMakeUuid(char *out);
extern void ZkMakeNodePrefix(char *out, int shape);

#endif							/* COMMON_UUID_H */
