/*-------------------------------------------------------------------------
 *
 * base/clock.h
 *		The monotonic clock of zklock's deadlines (base/clock.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMMON_CLOCK_H
#define COMMON_CLOCK_H

extern int64 ZkNowMs(void);
extern int64 ZkNowUs(void);

#endif							/* COMMON_CLOCK_H */
