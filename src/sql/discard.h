/*-------------------------------------------------------------------------
 *
 * sql/discard.h
 *		DISCARD ALL releases zklock's session holds (sql/discard.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SQL_DISCARD_H
#define SQL_DISCARD_H

extern void ZkInstallDiscardHook(void);

#endif							/* SQL_DISCARD_H */
