/*-------------------------------------------------------------------------
 *
 * client/session.h
 *		The session's state, for the files of the client layer above it
 *		(client/session.c): the settings it was opened with, the timeout the
 *		server granted, its ACLs, the lost-session ERROR.
 *
 *-------------------------------------------------------------------------
 */
#ifndef CLIENT_SESSION_H
#define CLIENT_SESSION_H

#include "client/bridge.h"

extern int	ZkSessionLocksHeld(void);
extern void ZkSessionReportLost(void);
extern void ZkSessionOpened(int negotiated_timeout);
extern void ZkSessionEstablished(bool authenticated);
extern void ZkSessionForget(void);
extern int	ZkSessionSettingsChanged(void);
extern int64 ZkSessionOutOfTouchAt(const ZkBridgeView *view);
extern int	ZkSessionTimeout(void);
extern const struct ACL_vector *ZkSessionAcl(bool protect);
extern void ZkSessionRaiseLost(void) pg_attribute_noreturn();

#endif							/* CLIENT_SESSION_H */
