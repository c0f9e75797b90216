/*
 * CuratorClient: a command-driven Apache Curator lock client for zklock's
 * interoperability tests (test/t/010_interop_curator.pl, and the barrier,
 * double barrier and leader latch recipes in test/t/026_barriers.pl).
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
 *   barrierset     -> "barrier set": DistributedBarrier.setBarrier() on
 *                     LOCK_NODE (raises it; no error if it was up)
 *   barrierremove  -> "barrier removed": DistributedBarrier.removeBarrier()
 *                     (no error if it was not up)
 *   barrierwait [MS]
 *       DistributedBarrier.waitOnBarrier on LOCK_NODE: prints "acquiring
 *       barrier" first, then "barrier down" or, after MS milliseconds (no MS
 *       or -1: wait as long as needed), "timeout barrier".
 *   dbenter N [MS]
 *       enter a DistributedDoubleBarrier(client, LOCK_NODE, N), made here and
 *       kept for dbleave (one at a time): prints "acquiring dbenter" first,
 *       then "entered" or, after MS milliseconds, "timeout dbenter" (the
 *       object is kept then too: Curator's timed-out member does not delete
 *       its participant node, a dbleave does).
 *   dbleave [MS]
 *       leave that double barrier: "acquiring dbleave" first, then "left" or,
 *       after MS milliseconds, "timeout dbleave"; either way it is dropped.
 *   latch [ID]     -> "latch started": starts a LeaderLatch on LOCK_NODE with
 *                     id ID (default "curator-latch"), the node data of its
 *                     participant node _c_<uuid>-latch-<seq>; start() only
 *                     begins the election (the node is made in the background)
 *   leader         -> "leader true" or "leader false": hasLeadership() now
 *   awaitleader MS
 *       "acquiring leader" first, then "leader true" once the latch leads
 *       (LeaderLatch.await), or "timeout leader" after MS milliseconds.
 *   latchclose     -> "latch closed": LeaderLatch.close() (its node goes)
 *   revocable      -> "revocable": makes the mutex and both read/write locks
 *                     revocable (makeRevocable); when a revocation is asked
 *                     of one that holds, the client prints, from Curator's
 *                     thread, "revoke requested KIND" (the holder then
 *                     releases with "release KIND", as Curator's listener
 *                     would have it do)
 *   revoke NODE    -> "revoke sent": Revoker.attemptRevoke on NODE (a full
 *                     znode path), as an administrator's tool would
 *   path NODE      -> "path NODE": use lock node NODE from now on (no lock
 *                     may be held; a double barrier or latch already made
 *                     stays on its node)
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
import org.apache.curator.framework.recipes.barriers.DistributedBarrier;
import org.apache.curator.framework.recipes.barriers.DistributedDoubleBarrier;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreMutex;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.framework.recipes.locks.Revoker;
import org.apache.curator.retry.RetryNTimes;

public class CuratorClient
{
	private static synchronized void say(String line)
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
		DistributedDoubleBarrier doubleBarrier = null;
		LeaderLatch latch = null;

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
					case "barrierset":
						new DistributedBarrier(client, lockNode).setBarrier();
						say("barrier set");
						break;
					case "barrierremove":
						new DistributedBarrier(client, lockNode).removeBarrier();
						say("barrier removed");
						break;
					case "barrierwait":
					{
						long ms = w.length > 1 ? Long.parseLong(w[1]) : -1;
						DistributedBarrier barrier = new DistributedBarrier(client, lockNode);
						boolean down;

						say("acquiring barrier");
						if (ms < 0)
						{
							barrier.waitOnBarrier();
							down = true;
						}
						else
							down = barrier.waitOnBarrier(ms, TimeUnit.MILLISECONDS);
						say(down ? "barrier down" : "timeout barrier");
						break;
					}
					case "dbenter":
					{
						int n = Integer.parseInt(w[1]);
						long ms = w.length > 2 ? Long.parseLong(w[2]) : -1;
						boolean entered;

						if (doubleBarrier != null)
							throw new IllegalStateException("leave the double barrier first");
						doubleBarrier = new DistributedDoubleBarrier(client, lockNode, n);
						say("acquiring dbenter");
						if (ms < 0)
						{
							doubleBarrier.enter();
							entered = true;
						}
						else
							entered = doubleBarrier.enter(ms, TimeUnit.MILLISECONDS);
						say(entered ? "entered" : "timeout dbenter");
						break;
					}
					case "dbleave":
					{
						long ms = w.length > 1 ? Long.parseLong(w[1]) : -1;
						DistributedDoubleBarrier db = doubleBarrier;
						boolean out;

						if (db == null)
							throw new IllegalStateException("no double barrier entered");
						doubleBarrier = null;
						say("acquiring dbleave");
						if (ms < 0)
						{
							db.leave();
							out = true;
						}
						else
							out = db.leave(ms, TimeUnit.MILLISECONDS);
						say(out ? "left" : "timeout dbleave");
						break;
					}
					case "latch":
					{
						String id = w.length > 1 ? w[1] : "curator-latch";

						if (latch != null)
							throw new IllegalStateException("close the latch first");
						latch = new LeaderLatch(client, lockNode, id);
						latch.start();
						say("latch started");
						break;
					}
					case "leader":
						if (latch == null)
							throw new IllegalStateException("no latch started");
						say("leader " + latch.hasLeadership());
						break;
					case "awaitleader":
					{
						long ms = Long.parseLong(w[1]);

						if (latch == null)
							throw new IllegalStateException("no latch started");
						say("acquiring leader");
						say(latch.await(ms, TimeUnit.MILLISECONDS) ? "leader true"
							: "timeout leader");
						break;
					}
					case "latchclose":
						if (latch == null)
							throw new IllegalStateException("no latch started");
						latch.close();
						latch = null;
						say("latch closed");
						break;
					case "revocable":
						mutex.makeRevocable(m -> say("revoke requested mutex"));
						rw.writeLock().makeRevocable(m -> say("revoke requested write"));
						rw.readLock().makeRevocable(m -> say("revoke requested read"));
						say("revocable");
						break;
					case "revoke":
						Revoker.attemptRevoke(client, w[1]);
						say("revoke sent");
						break;
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
