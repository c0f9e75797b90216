/*-------------------------------------------------------------------------
 *
 * discard.h
 *		DISCARD ALL releases zklock's session holds (discard.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DISCARD_H
#define DISCARD_H

extern void ZkInstallDiscardHook(void);

#endif							/* DISCARD_H */
