/*-------------------------------------------------------------------------
 *
 * base/text_encoding.h
 *		Texts between ZooKeeper's UTF-8 and the database encoding.
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMMON_TEXT_ENCODING_H
#define COMMON_TEXT_ENCODING_H

extern bool ZkPrintableAscii(const char *text);
extern char *ZkUtf8ToServer(const char *utf8);
extern const char *ZkUtf8ForMessage(const char *utf8);

#endif							/* COMMON_TEXT_ENCODING_H */
