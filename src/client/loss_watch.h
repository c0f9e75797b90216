/*-------------------------------------------------------------------------
 *
 * client/loss_watch.h
 *		What the session's life needs of the loss watch
 *		(client/loss_watch.c): the session events it learns of, and its
 *		end with the session.
 *
 *-------------------------------------------------------------------------
 */
#ifndef CLIENT_LOSS_WATCH_H
#define CLIENT_LOSS_WATCH_H

#include "client/client.h"

extern void ZkLossWatchSessionEvent(int state);
extern void ZkLossWatchStop(void);
extern void ZkLossWatchForget(void);

#endif							/* CLIENT_LOSS_WATCH_H */
