/*-------------------------------------------------------------------------
 *
 * recipes/revoke.h
 *		Revocation of a lock path's holders (recipes/revoke.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef RECIPES_REVOKE_H
#define RECIPES_REVOKE_H

extern int	ZkRevokeHolders(const char *lock_node, const char *path,
							bool force, char **holders);

#endif							/* RECIPES_REVOKE_H */
