/*
 * common.h: what bench/pgclients.c and bench/zkfloor.c share (each is built
 * alone by bench/run.sh and includes this file from its own directory).
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <time.h>

/* CLOCK_MONOTONIC, in microseconds: every measurement is timed with it */
static inline double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* qsort comparator for doubles, ascending */
static inline int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return x < y ? -1 : x > y;
}

/* the p-quantile (0 <= p <= 1) of n sorted values; 0 when there are none */
static inline double
pct(const double *sorted, int n, double p)
{
	int			i;

	if (n == 0)
		return 0;
	i = (int) (p * n);
	if (i >= n)
		i = n - 1;
	return sorted[i];
}

#endif							/* BENCH_COMMON_H */
