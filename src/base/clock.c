/*-------------------------------------------------------------------------
 *
 * base/clock.c
 *		The one clock of zklock's deadlines: monotonic, in milliseconds and
 *		microseconds, readable on the ZooKeeper client library's threads
 *		too (it touches no PostgreSQL state).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <time.h>

#include "base/clock.h"

/*
 * ZkNowMs
 *		Monotonic clock in milliseconds; the one clock used for deadlines,
 *		also readable on the library's threads.
 */
int64
ZkNowMs(void)
{
	return ZkNowUs() / 1000;
}

/*
 * ZkNowUs
 *		The monotonic clock in microseconds, for request latencies; also
 *		readable on the library's threads.
 */
int64
ZkNowUs(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}
