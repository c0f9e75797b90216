/*-------------------------------------------------------------------------
 *
 * base/uuid.h
 *		Fresh UUIDs and protection prefixes, and telling UUIDs in names
 *		(base/uuid.c); their lengths, ZK_UUID_LEN and ZK_PREFIX_LEN, are in
 *		base/contender.h.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BASE_UUID_H
#define BASE_UUID_H

extern void ZkMakeUuid(char *out);
extern void ZkMakeNodePrefix(char *out, int shape);
extern bool ZkIsUuid(const char *s);
extern bool ZkIsParticipantName(const char *name);

#endif							/* BASE_UUID_H */
