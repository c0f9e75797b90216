/*
 * fault_preload.c
 *		Allocation and entropy failures on demand, for zklock's TAP tests:
 *		a library for LD_PRELOAD in a test server's environment.
 *
 * Two calls of the real libraries are made to fail as they do when memory
 * or entropy runs out, while a file of the directory $ZKFAULT_DIR says so
 * (the test writes and removes the files; nothing fails without them):
 *
 *	strdup	a call made from zklock's library (the caller's return address
 *			lies in an object whose file name contains "zklock") whose
 *			argument contains the first line of $ZKFAULT_DIR/strdup returns
 *			NULL with errno ENOMEM; every other strdup is the real one.
 *	RAND_bytes	while $ZKFAULT_DIR/rand exists, a request of 16 bytes
 *			(pg_strong_random's draw of a UUID seed; PostgreSQL's cancel
 *			keys and random seeds ask for 4 or 8) returns 0, OpenSSL's
 *			failure; OpenSSL's real function otherwise.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the first line of $ZKFAULT_DIR/NAME into buf; 0 if there is none */
static int
fault_read(const char *name, char *buf, size_t size)
{
	const char *dir = getenv("ZKFAULT_DIR");
	char		path[4096];
	FILE	   *f;
	int			ok;

	if (dir == NULL)
		return 0;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (f == NULL)
		return 0;
	ok = fgets(buf, (int) size, f) != NULL;
	fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = '\0';
	return ok;
}

char *
strdup(const char *s)
{
	static char *(*real) (const char *) = NULL;
	void	   *caller = __builtin_return_address(0);
	Dl_info		info;
	char		pattern[2048];

	if (real == NULL)
		real = (char *(*) (const char *)) dlsym(RTLD_NEXT, "strdup");
	if (dladdr(caller, &info) && info.dli_fname != NULL &&
		strstr(info.dli_fname, "zklock") != NULL &&
		fault_read("strdup", pattern, sizeof(pattern)) &&
		pattern[0] != '\0' && strstr(s, pattern) != NULL)
	{
		errno = ENOMEM;
		return NULL;
	}
	return real(s);
}

int
RAND_bytes(unsigned char *buf, int num)
{
	static int	(*real) (unsigned char *, int) = NULL;
	char		flag[16];

	if (num == 16 && fault_read("rand", flag, sizeof(flag)))
		return 0;
	if (real == NULL)
		real = (int (*) (unsigned char *, int)) dlsym(RTLD_NEXT, "RAND_bytes");
	return real(buf, num);
}
