/* sql/zklock--1.3--1.4.sql: version 1.4.
 *
 * Error codes that tell applications the right thing (the library's
 * behaviour, whatever the version of the SQL objects):
 *  - an upgrade from a shared to an exclusive lock, and a lease on a lock
 *    the backend holds, raise 55000 (object not in prerequisite state):
 *    no retry can succeed.  They raised 55P03 (lock not available), which
 *    applications take for "retry later";
 *  - an error ZooKeeper returns that is not about the connection raises
 *    58000 (system error), with ZooKeeper's own name for it, its code and
 *    the client library's text in the DETAIL.  It raised 38000.
 * Applications that caught 55P03 for the upgrade, or 38000, should catch
 * 55000 and 58000.
 */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION zklock UPDATE TO '1.4'" to load this file. \quit
