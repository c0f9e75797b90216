/*-------------------------------------------------------------------------
 *
 * sql/loss_cancel.h
 *		A lost hold stops the statement (sql/loss_cancel.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SQL_LOSS_CANCEL_H
#define SQL_LOSS_CANCEL_H

extern void ZkInstallLossCancelHooks(void);

#endif							/* SQL_LOSS_CANCEL_H */
