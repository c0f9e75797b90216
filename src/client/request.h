/*-------------------------------------------------------------------------
 *
 * client/request.h
 *		Making the asynchronous request (ZkOp) that every request function of
 *		client/client.h sends, for the files of the client layer above it
 *		(client/request.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef CLIENT_REQUEST_H
#define CLIENT_REQUEST_H

#include "client/client.h"

extern ZkOp *ZkOpNew(ZkOpKind kind);
extern ZkOp *ZkOpTryNew(ZkOpKind kind);
extern void ZkOpsSessionClosed(void);

#endif							/* CLIENT_REQUEST_H */
