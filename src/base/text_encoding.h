/*-------------------------------------------------------------------------
 *
 * base/text_encoding.h
 *		Texts between ZooKeeper's UTF-8 and the database encoding.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BASE_TEXT_ENCODING_H
#define BASE_TEXT_ENCODING_H

extern bool ZkPrintableAscii(const char *text);
extern char *ZkUtf8ToServer(const char *utf8);
extern const char *ZkUtf8ForMessage(const char *utf8);

#endif							/* BASE_TEXT_ENCODING_H */
