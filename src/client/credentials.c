/*-------------------------------------------------------------------------
 *
 * client/credentials.c
 *		The ZooKeeper digest credentials a new session authenticates with.
 *
 * They come from the first line of the file zklock.auth_file names, when
 * it is set (the documented way: the secret then never enters a setting,
 * which any user could read as a placeholder in a backend that has not
 * loaded zklock), else from zklock.auth.  The file must be a regular file
 * owned by the database server's operating system user and readable by it
 * alone, as PostgreSQL requires of ssl_key_file; otherwise the ERROR names
 * the file and what is wrong with it, never its content.  The file is read
 * when a session is opened, so a changed file takes effect with the next
 * session.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/stat.h>
#include <unistd.h>

#include "storage/fd.h"

#include "client/credentials.h"
#include "base/vocabulary.h"

/* longest first line read from the file */
#define ZK_MAX_CREDENTIALS 1024

static char *zk_read_auth_file(const char *path);

/*
 * zk_read_auth_file
 *		The first line of the credentials file, checked (see the file
 *		header).  Raises an ERROR that names the file, never its content.
 */
static char *
zk_read_auth_file(const char *path)
{
	struct stat st;
	FILE	   *f;
	char		line[ZK_MAX_CREDENTIALS + 2];
	char	   *result;
	size_t		len;

	if (stat(path, &st) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not access zklock.auth_file \"%s\": %m", path)));
	if (!S_ISREG(st.st_mode))
		ereport(ERROR,
				(errcode(ERRCODE_CONFIG_FILE_ERROR),
				 errmsg("zklock.auth_file \"%s\" is not a regular file", path)));
	if (st.st_uid != geteuid())
		ereport(ERROR,
				(errcode(ERRCODE_CONFIG_FILE_ERROR),
				 errmsg("zklock.auth_file \"%s\" must be owned by the database server's operating system user",
						path)));
	if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIG_FILE_ERROR),
				 errmsg("zklock.auth_file \"%s\" has group or world access", path),
				 errdetail("The file must be readable by the database server's user alone (u=rw, 0600, or less).")));

	f = AllocateFile(path, "r");
	if (f == NULL)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open zklock.auth_file \"%s\": %m", path)));
	if (fgets(line, sizeof(line), f) == NULL)
		line[0] = '\0';
	FreeFile(f);

	len = strcspn(line, "\r\n");
	line[len] = '\0';
	if (len == 0 || len > ZK_MAX_CREDENTIALS || strchr(line, ':') == NULL ||
		line[0] == ':')
	{
		explicit_bzero(line, sizeof(line));
		ereport(ERROR,
				(errcode(ERRCODE_CONFIG_FILE_ERROR),
				 errmsg("the first line of zklock.auth_file \"%s\" must have the form user:password",
						path)));
	}
	result = pstrdup(line);
	explicit_bzero(line, sizeof(line));
	return result;
}

/*
 * ZkCredentials
 *		The credentials for a new session, palloc'd, or NULL for none.
 */
char *
ZkCredentials(void)
{
	if (zklock_auth_file != NULL && zklock_auth_file[0] != '\0')
		return zk_read_auth_file(zklock_auth_file);
	if (zklock_auth == NULL || zklock_auth[0] == '\0')
		return NULL;
	if (strchr(zklock_auth, ':') == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("zklock.auth must have the form user:password")));
	return pstrdup(zklock_auth);
}
