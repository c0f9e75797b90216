/*-------------------------------------------------------------------------
 *
 * sql/loss_cancel.h
 *		A lost hold stops the statement (sql/loss_cancel.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SQL_LOSS_CANCEL_H
#define SQL_LOSS_CANCEL_H

#include "nodes/nodes.h"

extern void ZkInstallLossCancelHooks(void);
extern bool ZkLossUtilityBegin(Node *parsetree);
extern void ZkLossUtilityEnd(void);

#endif							/* SQL_LOSS_CANCEL_H */
