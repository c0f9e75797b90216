/*-------------------------------------------------------------------------
 *
 * client/credentials.h
 *		The ZooKeeper digest credentials a new session authenticates with.
 *
 *-------------------------------------------------------------------------
 */
#ifndef CLIENT_CREDENTIALS_H
#define CLIENT_CREDENTIALS_H

extern char *ZkCredentials(void);

#endif							/* CLIENT_CREDENTIALS_H */
