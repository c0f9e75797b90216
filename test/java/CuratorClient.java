/*
 * CuratorClient: a command-driven Apache Curator lock client for zklock's
 * interoperability tests (test/t/010_interop_curator.pl).
 *
 *   java -cp <curator jars>:<dir> CuratorClient CONNECT LOCK_NODE [SESSION_MS]
 *
 * CONNECT is a ZooKeeper connect string, LOCK_NODE the znode of the lock
 * (zklock's <zklock.root><path>, e.g. /zklock/interop/a).  On start it
 * connects and prints
 *
 *   ready addr=<default node data> session_ms=<negotiated timeout> session=0x<id>
 *
 * (the default node data is what Curator stores in every lock node it
 * creates: the local address).  Then it reads commands on stdin, one per
 * line, and answers each with one line, flushed at once:
 *
 *   write [MS] | read [MS] | mutex [MS]
 *       acquire InterProcessReadWriteLock's write or read lock, or an
 *       InterProcessMutex, all on LOCK_NODE.  Prints "acquiring KIND" first
 *       (before blocking), then "acquired KIND" or, after MS milliseconds
 *       (no MS or -1: wait as long as needed), "timeout KIND".
 *   release KIND   -> "released KIND"
 *   sem N [MS] | semmutex [MS]
 *       acquire one lease of an InterProcessSemaphoreV2 with N leases, or an
 *       InterProcessSemaphoreMutex, on LOCK_NODE; prints "acquiring sem"
 *       then "acquired sem" or "timeout sem" (likewise for semmutex).
 *   semrelease     -> "released sem": returns the oldest lease held
 *   semmutexrelease -> "released semmutex"
 *   path NODE      -> "path NODE": use lock node NODE from now on (no lock
 *                     may be held)
 *   nodes          -> "nodes N1,N2,..." the lock node's children, sorted
 *   ping           -> "pong"
 *   close          -> "closed": closes the client (the session ends, so
 *                     ZooKeeper deletes its nodes at once), then exits
 *   die            -> exits at once without releasing or closing anything
 *                     (Runtime.halt): the session lives on until it expires
 *
 * Any failure prints "error <exception>".  End of input behaves like close.
 * Everything runs on the main thread (Curator's locks belong to the thread
 * that took them).  Logging is off (slf4j-nop on the classpath).
 */
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreMutex;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.retry.RetryNTimes;

public class CuratorClient
{
	private static void say(String line)
	{
		System.out.println(line);
		System.out.flush();
	}

	public static void main(String[] args) throws Exception
	{
		if (args.length < 2)
		{
			System.err.println("usage: CuratorClient CONNECT LOCK_NODE [SESSION_MS]");
			System.exit(2);
		}
		String connect = args[0];
		String lockNode = args[1];
		int sessionMs = args.length > 2 ? Integer.parseInt(args[2]) : 10000;

		CuratorFramework client = CuratorFrameworkFactory.builder()
			.connectString(connect)
			.sessionTimeoutMs(sessionMs)
			.connectionTimeoutMs(10000)
			.retryPolicy(new RetryNTimes(3, 200))
			.build();
		client.start();
		if (!client.blockUntilConnected(20, TimeUnit.SECONDS))
		{
			say("error could not connect to " + connect);
			Runtime.getRuntime().halt(1);
		}

		InterProcessReadWriteLock rw = new InterProcessReadWriteLock(client, lockNode);
		InterProcessMutex mutex = new InterProcessMutex(client, lockNode);
		long sessionId = client.getZookeeperClient().getZooKeeper().getSessionId();
		List<Lease> leases = new ArrayList<>();
		InterProcessSemaphoreMutex semMutex = null;

		say("ready addr=" + new String(CuratorFrameworkFactory.getLocalAddress(),
									   StandardCharsets.UTF_8)
			+ " session_ms="
			+ client.getZookeeperClient().getZooKeeper().getSessionTimeout()
			+ " session=0x" + Long.toHexString(sessionId));

		BufferedReader in = new BufferedReader(
			new InputStreamReader(System.in, StandardCharsets.UTF_8));
		String line;
		while ((line = in.readLine()) != null)
		{
			String[] w = line.trim().split("\\s+");
			String cmd = w[0];

			try
			{
				switch (cmd)
				{
					case "":
						break;
					case "write":
					case "read":
					case "mutex":
					{
						InterProcessLock lock = pick(cmd, rw, mutex);
						long ms = w.length > 1 ? Long.parseLong(w[1]) : -1;
						boolean got;

						say("acquiring " + cmd);
						if (ms < 0)
						{
							lock.acquire();
							got = true;
						}
						else
							got = lock.acquire(ms, TimeUnit.MILLISECONDS);
						say((got ? "acquired " : "timeout ") + cmd);
						break;
					}
					case "sem":
					{
						int n = Integer.parseInt(w[1]);
						long ms = w.length > 2 ? Long.parseLong(w[2]) : -1;
						InterProcessSemaphoreV2 sem =
							new InterProcessSemaphoreV2(client, lockNode, n);
						Lease lease;

						say("acquiring sem");
						if (ms < 0)
							lease = sem.acquire();
						else
							lease = sem.acquire(ms, TimeUnit.MILLISECONDS);
						if (lease != null)
							leases.add(lease);
						say((lease != null ? "acquired " : "timeout ") + "sem");
						break;
					}
					case "semrelease":
						leases.remove(0).close();
						say("released sem");
						break;
					case "semmutex":
					{
						long ms = w.length > 1 ? Long.parseLong(w[1]) : -1;
						boolean got;

						if (semMutex == null)
							semMutex = new InterProcessSemaphoreMutex(client, lockNode);
						say("acquiring semmutex");
						if (ms < 0)
						{
							semMutex.acquire();
							got = true;
						}
						else
							got = semMutex.acquire(ms, TimeUnit.MILLISECONDS);
						say((got ? "acquired " : "timeout ") + "semmutex");
						break;
					}
					case "semmutexrelease":
						semMutex.release();
						say("released semmutex");
						break;
					case "release":
					{
						String kind = w.length > 1 ? w[1] : "";

						pick(kind, rw, mutex).release();
						say("released " + kind);
						break;
					}
					case "path":
						if (rw.writeLock().isAcquiredInThisProcess()
							|| rw.readLock().isAcquiredInThisProcess()
							|| mutex.isAcquiredInThisProcess())
							throw new IllegalStateException("release the locks first");
						lockNode = w[1];
						semMutex = null;
						rw = new InterProcessReadWriteLock(client, lockNode);
						mutex = new InterProcessMutex(client, lockNode);
						say("path " + lockNode);
						break;
					case "nodes":
					{
						List<String> kids = new ArrayList<>(
							client.getChildren().forPath(lockNode));

						Collections.sort(kids);
						say("nodes " + String.join(",", kids));
						break;
					}
					case "ping":
						say("pong");
						break;
					case "close":
						client.close();
						say("closed");
						System.exit(0);
						break;
					case "die":
						say("dying");
						Runtime.getRuntime().halt(3);
						break;
					default:
						say("error unknown command: " + cmd);
				}
			}
			catch (Exception e)
			{
				say("error " + e.toString().replace('\n', ' '));
			}
		}
		client.close();
		System.exit(0);
	}

	private static InterProcessLock pick(String kind, InterProcessReadWriteLock rw,
										 InterProcessMutex mutex)
	{
		switch (kind)
		{
			case "write":
				return rw.writeLock();
			case "read":
				return rw.readLock();
			case "mutex":
				return mutex;
			default:
				throw new IllegalArgumentException("no such lock kind: " + kind);
		}
	}
}
