/*-------------------------------------------------------------------------
 *
 * base/clock.h
 *		The monotonic clock of zklock's deadlines (base/clock.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef BASE_CLOCK_H
#define BASE_CLOCK_H

extern int64 ZkNowMs(void);
extern int64 ZkNowUs(void);

#endif							/* BASE_CLOCK_H */
