/*-------------------------------------------------------------------------
 *
 * credentials.h
 *		The ZooKeeper digest credentials a new session authenticates with.
 *
 *-------------------------------------------------------------------------
 */
#ifndef CREDENTIALS_H
#define CREDENTIALS_H

extern char *ZkCredentials(void);

#endif							/* CREDENTIALS_H */
