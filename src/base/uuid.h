/*-------------------------------------------------------------------------
 *
 * base/uuid.h
 *		Fresh UUIDs and protection prefixes (base/uuid.c); their lengths,
 *		ZK_UUID_LEN and ZK_PREFIX_LEN, are in base/contender.h.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BASE_UUID_H
#define BASE_UUID_H

extern void ZkMakeUuid(char *out);
extern void ZkMakeNodePrefix(char *out, int shape);

#endif							/* BASE_UUID_H */
