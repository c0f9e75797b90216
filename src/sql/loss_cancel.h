/*-------------------------------------------------------------------------
 *
 * sql/loss_cancel.h
 *		A lost hold stops the statement (sql/loss_cancel.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SQL_LOSS_CANCEL_H
#define SQL_LOSS_CANCEL_H

/* one part of a statement, run by ZkLossRunPart */
typedef void (*ZkStatementPart) (void *arg);

extern void ZkInstallLossCancelHooks(void);
extern void ZkLossRunPart(bool stoppable, ZkStatementPart run, void *arg);

#endif							/* SQL_LOSS_CANCEL_H */
