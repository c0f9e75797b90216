/*
 * CuratorBench: Apache Curator lock acquire/release cycles, timed
 * in-process, for zklock's benchmark (compiled by bench/run.sh with javac
 * against the jars in /usr/share/java).
 *
 *   java CuratorBench HOSTS MODE SECONDS OUTFILE [WARMUP_SECONDS]
 *   java CuratorBench HOSTS contend THREADS SECONDS OUTFILE START_EPOCH_MS [per-thread|shared]
 *
 * MODE
 *   mutex     InterProcessMutex on /bench/curator_mutex: acquire(), release()
 *   rwwrite   InterProcessReadWriteLock on /bench/curator_rw:
 *             writeLock().acquire(), writeLock().release()
 *   multiN    (N a number, e.g. multi10, multi100) InterProcessMultiLock over
 *             N InterProcessMutex on /zklock/bench/multi_c/N/p1 ..
 *             /zklock/bench/multi_c/N/pN: acquire(), release()
 *   semaphore InterProcessSemaphoreV2 on /zklock/bench/sem_c with maxLeases
 *             4: lease = acquire(), returnLease(lease)
 *   dbarrierN (N a number, e.g. dbarrier8) DistributedDoubleBarrier on
 *             /zklock/bench/db_c with N members: see below
 *
 * Each op is one acquire plus one release, timed with System.nanoTime().
 * Ops during the first WARMUP_SECONDS (default 2; the JIT compiles the hot
 * path meanwhile) are not recorded.  Per-op latencies (microseconds, one
 * per line) go to OUTFILE.
 *
 * dbarrierN: N threads in this JVM, each with its own CuratorFramework
 * client (its own ZooKeeper session), run lock-step cycles of enter() +
 * leave() of a DistributedDoubleBarrier of N members, a fresh
 * DistributedDoubleBarrier object per member and cycle (a new UUID-named
 * node each time, as zklock's members have; an object used again keeps its
 * node name, and a watch left by one cycle's leave() on a node of that
 * name could wake the next cycle's enter()).  In every cycle all members
 * but one are let go at once; the last one (member c mod N in cycle c)
 * calls enter() GAP_MS (the optional argument after WARMUP_SECONDS;
 * default 5) after they were let go; every member calls leave() as soon as
 * its enter() returned; the next cycle starts once every leave() has
 * returned.  enter() and leave() are given 10 s each.  Cycles that start
 * after WARMUP_SECONDS are recorded, one line each in OUTFILE (the columns
 * of bench/pgclients dbarrier):
 *   cycle last round_us release_us fromlast_us gap_us first_release_us leave_us
 * round_us: the first enter() called -> the last leave() returned;
 * release_us: the last member's enter() called (t0) -> the last enter()
 * returned; fromlast_us: t0 -> the last leave() returned; gap_us: the
 * first enter() called -> t0; first_release_us: t0 -> the first enter()
 * returned; leave_us: the last enter() returned -> the last leave()
 * returned.  A cycle in which an early member's enter() returned before
 * the last member called its own is not recorded (counted in
 * dbarrier_early).  A cycle in which a call fails or returns false, or
 * that is not over after 25 s (a member stuck in Curator's wait()), is an
 * incident: what each member was doing, the stuck threads' stacks and the
 * barrier's children go to stderr; the members still in a call are
 * interrupted, every member's session is closed (its node goes), what is
 * left under the barrier is deleted, the members connect again, and the
 * measured time left is measured again after a new warm-up; the cycles
 * recorded before are kept (dbarrier_incidents counts them).  The third
 * incident, or members that do not come back from the interruption, end
 * the run: the cycles recorded so far go to OUTFILE, "dbarrier_abandoned
 * hung" (or "failed") to stdout, and the exit status is 3.  The barrier's
 * children are deleted (by an extra client) at the start too (left by an
 * earlier run).  Prints "key value" lines (dbarrier_cycles,
 * dbarrier_early, dbarrier_incidents, ...).
 *
 * contend: THREADS threads, each with its own InterProcessMutex on
 * /bench/curator_contend, loop acquire(); release() as fast as they can.
 * With "per-thread" (the default) every thread has its own CuratorFramework
 * client, i.e. its own ZooKeeper session, as every PostgreSQL backend has;
 * with "shared" the threads share one client.  The threads connect and then
 * loop unmeasured (JIT and contention warm-up) until the wall-clock time
 * START_EPOCH_MS (milliseconds since the epoch), so that several JVMs
 * started together measure the same window; grants whose acquire() returns
 * in [START, START + SECONDS) are counted.  OUTFILE gets one line per
 * counted grant: the acquire() wait in microseconds.  Prints "key value"
 * lines: grants, late_start_ms (how long after START this JVM was ready;
 * 0 when in time).
 */
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.barriers.DistributedDoubleBarrier;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMultiLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.retry.RetryOneTime;

public class CuratorBench
{
	/* one timed op: an acquire and its release */
	interface Cycle
	{
		void run() throws Exception;
	}

	/* acquire() and release() of a lock, as one op */
	static Cycle lockCycle(InterProcessLock lock)
	{
		return () -> {
			if (!lock.acquire(30, TimeUnit.SECONDS))
				throw new IllegalStateException("acquire timed out");
			lock.release();
		};
	}

	public static void main(String[] args) throws Exception
	{
		if (args.length < 4)
		{
			System.err.println("usage: CuratorBench HOSTS mutex|rwwrite|multiN|semaphore SECONDS OUTFILE [WARMUP_SECONDS]\n"
							   + "       CuratorBench HOSTS dbarrierN SECONDS OUTFILE [WARMUP_SECONDS [GAP_MS]]\n"
							   + "       CuratorBench HOSTS contend THREADS SECONDS OUTFILE START_EPOCH_MS [per-thread|shared]");
			System.exit(2);
		}
		String hosts = args[0];
		String mode = args[1];
		if (mode.equals("contend"))
		{
			contend(hosts, args);
			return;
		}
		if (mode.matches("dbarrier[0-9]+"))
		{
			dbarrier(hosts, Integer.parseInt(mode.substring("dbarrier".length())), args);
			return;
		}
		double seconds = Double.parseDouble(args[2]);
		String outfile = args[3];
		double warmup = args.length > 4 ? Double.parseDouble(args[4]) : 2.0;

		CuratorFramework client = connect(hosts);

		Cycle cycle;
		if (mode.equals("mutex"))
			cycle = lockCycle(new InterProcessMutex(client, "/bench/curator_mutex"));
		else if (mode.equals("rwwrite"))
			cycle = lockCycle(new InterProcessReadWriteLock(client, "/bench/curator_rw").writeLock());
		else if (mode.matches("multi[0-9]+"))
		{
			int npaths = Integer.parseInt(mode.substring("multi".length()));
			List<String> paths = new ArrayList<>();
			for (int i = 1; i <= npaths; i++)
				paths.add("/zklock/bench/multi_c/" + npaths + "/p" + i);
			cycle = lockCycle(new InterProcessMultiLock(client, paths));
		}
		else if (mode.equals("semaphore"))
		{
			InterProcessSemaphoreV2 sem = new InterProcessSemaphoreV2(client, "/zklock/bench/sem_c", 4);
			cycle = () -> {
				Lease lease = sem.acquire(30, TimeUnit.SECONDS);
				if (lease == null)
					throw new IllegalStateException("acquire timed out");
				sem.returnLease(lease);
			};
		}
		else
			throw new IllegalArgumentException("unknown mode " + mode);

		double[] lat = new double[1 << 16];
		int n = 0;
		long tRec = System.nanoTime() + (long) (warmup * 1e9);
		long tEnd = tRec + (long) (seconds * 1e9);
		for (;;)
		{
			long t0 = System.nanoTime();
			if (t0 >= tEnd)
				break;
			cycle.run();
			long t1 = System.nanoTime();
			if (t0 < tRec)
				continue;
			if (n == lat.length)
				lat = Arrays.copyOf(lat, n * 2);
			lat[n++] = (t1 - t0) / 1000.0;
		}
		client.close();

		double sum = 0;
		try (PrintWriter out = new PrintWriter(outfile))
		{
			for (int i = 0; i < n; i++)
			{
				out.printf("%.1f%n", lat[i]);
				sum += lat[i];
			}
		}
		double[] sorted = Arrays.copyOf(lat, n);
		Arrays.sort(sorted);
		System.out.printf("curator %s: n=%d mean=%.1f us median=%.1f us%n",
						  mode, n, n > 0 ? sum / n : 0.0, n > 0 ? sorted[n / 2] : 0.0);
	}

	/* a started client, connected */
	static CuratorFramework connect(String hosts) throws Exception
	{
		CuratorFramework client = CuratorFrameworkFactory.newClient(
				hosts, 30000, 15000, new RetryOneTime(100));
		client.start();
		if (!client.blockUntilConnected(30, TimeUnit.SECONDS))
			throw new IllegalStateException("could not connect to " + hosts);
		return client;
	}

	/* one lock-step cycle of the dbarrier mode */
	static final class DbCycle
	{
		final DistributedDoubleBarrier[] barriers;
		final int last;
		final CountDownLatch goEarly = new CountDownLatch(1);
		final CountDownLatch goLast = new CountDownLatch(1);
		final CountDownLatch done;
		final long[] tCall, tEnter, tLeave;
		/* per member: 0 not let go yet, 1 in enter(), 2 in leave(), 3 left */
		final int[] stage;
		final boolean[] finished;
		final String[] failure;
		volatile boolean early;
		volatile boolean failed;

		DbCycle(DistributedDoubleBarrier[] barriers, int last)
		{
			int n = barriers.length;
			this.barriers = barriers;
			this.last = last;
			done = new CountDownLatch(n);
			tCall = new long[n];
			tEnter = new long[n];
			tLeave = new long[n];
			stage = new int[n];
			finished = new boolean[n];
			failure = new String[n];
		}
	}

	static final DbCycle STOP = new DbCycle(new DistributedDoubleBarrier[0], -1);

	/* delete every child of the barrier node (left by an abandoned run) */
	static int dbarrierClean(CuratorFramework admin, String path) throws Exception
	{
		int deleted = 0;
		if (admin.checkExists().forPath(path) == null)
			return 0;
		for (String child : admin.getChildren().forPath(path))
		{
			try
			{
				admin.delete().forPath(path + "/" + child);
				deleted++;
			}
			catch (org.apache.zookeeper.KeeperException.NoNodeException e)
			{
			}
		}
		return deleted;
	}

	/* what each member of a cycle that did not end well was doing */
	static String dbarrierDiagnosis(DbCycle cy, long c, boolean warmup, boolean ended, Thread[] threads,
									CuratorFramework admin, String path)
	{
		String nl = System.lineSeparator();
		String[] what = {"not let go", "in enter()", "in leave()", "left"};
		StringBuilder d = new StringBuilder();
		d.append(String.format("cycle %d (%s), last member %d: %s%n", c, warmup ? "warm-up" : "recorded", cy.last,
							   ended ? "a call failed" : "not over after " + DB_CYCLE_LIMIT_S + " s"));
		for (int i = 0; i < cy.stage.length; i++)
		{
			int st = cy.stage[i];
			d.append(String.format("member %d: %s", i, cy.finished[i] && cy.failure[i] != null ? "failed " + what[st] + ": "
								   + cy.failure[i] : (cy.finished[i] ? "" : "still ") + what[st]));
			if (st >= 2)
				d.append(String.format(" (its enter() returned %.1f ms after the last member's call)",
									   (cy.tEnter[i] - cy.tCall[cy.last]) / 1e6));
			d.append(nl);
			if (!cy.finished[i])
				for (StackTraceElement e : threads[i].getStackTrace())
					d.append("    at ").append(e).append(nl);
		}
		try
		{
			List<String> ch = admin.getChildren().forPath(path);
			d.append(String.format("children of %s: %d: %s%n", path, ch.size(), ch));
		}
		catch (Exception e)
		{
			d.append("children: ").append(e).append(nl);
		}
		return d.toString();
	}

	static final int DB_CALL_LIMIT_S = 10;	/* enter() and leave() each */
	static final int DB_CYCLE_LIMIT_S = 25;
	static final int DB_MAX_INCIDENTS = 3;

	/* the dbarrier mode: see the header comment */
	static void dbarrier(String hosts, int n, String[] args) throws Exception
	{
		if (args.length < 4)
			throw new IllegalArgumentException("dbarrierN SECONDS OUTFILE [WARMUP_SECONDS [GAP_MS]]");
		double seconds = Double.parseDouble(args[2]);
		String outfile = args[3];
		double warmup = args.length > 4 ? Double.parseDouble(args[4]) : 2.0;
		double gapMs = args.length > 5 ? Double.parseDouble(args[5]) : 5.0;
		String path = "/zklock/bench/db_c";

		/* an extra client, not a member: cleans up, looks at a stuck cycle */
		CuratorFramework admin = connect(hosts);
		int stale = dbarrierClean(admin, path);
		CuratorFramework[] clients = new CuratorFramework[n];
		for (int i = 0; i < n; i++)
			clients[i] = connect(hosts);
		@SuppressWarnings("unchecked")
		BlockingQueue<DbCycle>[] queues = new BlockingQueue[n];
		Thread[] threads = new Thread[n];
		for (int i = 0; i < n; i++)
		{
			final int id = i;
			queues[i] = new LinkedBlockingQueue<>();
			threads[i] = new Thread(() -> {
				for (;;)
				{
					DbCycle c;

					try
					{
						c = queues[id].take();
					}
					catch (InterruptedException e)
					{
						continue;	/* meant for a call of a cycle now over */
					}
					if (c == STOP)
						return;
					Thread.interrupted();
					try
					{
						(id == c.last ? c.goLast : c.goEarly).await();
						c.stage[id] = 1;
						c.tCall[id] = System.nanoTime();
						if (!c.barriers[id].enter(DB_CALL_LIMIT_S, TimeUnit.SECONDS))
							throw new IllegalStateException("returned false");
						c.tEnter[id] = System.nanoTime();
						if (c.goLast.getCount() > 0)
							c.early = true;	/* released before the last arrived */
						c.stage[id] = 2;
						if (!c.barriers[id].leave(DB_CALL_LIMIT_S, TimeUnit.SECONDS))
							throw new IllegalStateException("returned false");
						c.tLeave[id] = System.nanoTime();
						c.stage[id] = 3;
					}
					catch (Throwable e)
					{
						c.failure[id] = e.toString();
						c.failed = true;
					}
					finally
					{
						c.finished[id] = true;
						c.done.countDown();
					}
				}
			}, "member-" + i);
			threads[i].setDaemon(true);
			threads[i].start();
		}

		List<String> lines = new ArrayList<>();
		double[] rounds = new double[1 << 14];
		int nrec = 0;
		long cyclesAll = 0;
		long earlyCycles = 0;
		int incidents = 0;
		String abandoned = null;
		long tRec = System.nanoTime() + (long) (warmup * 1e9);
		long tEnd = tRec + (long) (seconds * 1e9);
		for (long c = 0;; c++)
		{
			long tStart = System.nanoTime();
			if (tStart >= tEnd)
				break;
			DistributedDoubleBarrier[] b = new DistributedDoubleBarrier[n];
			for (int i = 0; i < n; i++)
				b[i] = new DistributedDoubleBarrier(clients[i], path, n);
			DbCycle cy = new DbCycle(b, (int) (c % n));
			for (int i = 0; i < n; i++)
				queues[i].put(cy);
			cy.goEarly.countDown();
			long gapEnd = System.nanoTime() + (long) (gapMs * 1e6);
			for (long left; (left = gapEnd - System.nanoTime()) > 0;)
				Thread.sleep(left / 1000000, (int) (left % 1000000));
			cy.goLast.countDown();
			boolean ended = cy.done.await(DB_CYCLE_LIMIT_S, TimeUnit.SECONDS);
			if (!ended || cy.failed)
			{
				/*
				 * An incident: say where every member was, interrupt the
				 * ones still in a call, close every member's session (its
				 * node goes), delete what is left (a "ready"), connect
				 * again and measure the remaining time again after a new
				 * warm-up.  The cycles recorded before it are kept.
				 */
				incidents++;
				System.err.print("incident " + incidents + ": "
								 + dbarrierDiagnosis(cy, c, tStart < tRec, ended, threads, admin, path));
				for (int i = 0; i < n; i++)
					if (!cy.finished[i])
						threads[i].interrupt();
				if (!cy.done.await(10, TimeUnit.SECONDS) || incidents >= DB_MAX_INCIDENTS)
				{
					abandoned = ended ? "failed" : "hung";
					break;
				}
				for (int i = 0; i < n; i++)
				{
					clients[i].close();
					clients[i] = null;
				}
				System.err.printf("incident %d: %d nodes deleted after the sessions were closed; connecting again%n",
								  incidents, dbarrierClean(admin, path));
				for (int i = 0; i < n; i++)
					clients[i] = connect(hosts);
				long recorded = Math.max(0, Math.min(tStart, tEnd) - tRec);
				tRec = System.nanoTime() + (long) (warmup * 1e9);
				tEnd = tRec + Math.max(0, (long) (seconds * 1e9) - recorded);
				continue;
			}
			cyclesAll++;
			if (cy.early)
			{
				earlyCycles++;
				continue;
			}
			if (tStart < tRec)
				continue;
			long first = Long.MAX_VALUE, maxEnter = 0, minEnter = Long.MAX_VALUE, maxLeave = 0;
			long t0 = cy.tCall[cy.last];
			for (int i = 0; i < n; i++)
			{
				first = Math.min(first, cy.tCall[i]);
				maxEnter = Math.max(maxEnter, cy.tEnter[i]);
				minEnter = Math.min(minEnter, cy.tEnter[i]);
				maxLeave = Math.max(maxLeave, cy.tLeave[i]);
			}
			lines.add(String.format("%d %d %.1f %.1f %.1f %.1f %.1f %.1f", nrec, cy.last,
									(maxLeave - first) / 1e3, (maxEnter - t0) / 1e3, (maxLeave - t0) / 1e3,
									(t0 - first) / 1e3, (minEnter - t0) / 1e3, (maxLeave - maxEnter) / 1e3));
			if (nrec == rounds.length)
				rounds = Arrays.copyOf(rounds, nrec * 2);
			rounds[nrec++] = (maxLeave - first) / 1e3;
		}
		if (abandoned == null)
		{
			for (int i = 0; i < n; i++)
				queues[i].put(STOP);
			for (Thread t : threads)
				t.join();
		}
		/* closing the sessions deletes the members' nodes; then "ready" */
		for (CuratorFramework cl : clients)
			if (cl != null)
				cl.close();
		int left = dbarrierClean(admin, path);
		admin.close();
		try (PrintWriter out = new PrintWriter(outfile))
		{
			for (String l : lines)
				out.println(l);
		}
		double[] sorted = Arrays.copyOf(rounds, nrec);
		Arrays.sort(sorted);
		System.out.printf("dbarrier_members %d%n", n);
		System.out.printf("dbarrier_jvms 1%n");
		System.out.printf("dbarrier_seconds %.3f%n", seconds);
		System.out.printf("dbarrier_gap_ms %.3f%n", gapMs);
		System.out.printf("dbarrier_cycles %d%n", nrec);
		System.out.printf("dbarrier_cycles_all %d%n", cyclesAll);
		System.out.printf("dbarrier_early %d%n", earlyCycles);
		System.out.printf("dbarrier_incidents %d%n", incidents);
		System.out.printf("dbarrier_round_p50_us %.1f%n", nrec > 0 ? sorted[nrec / 2] : 0.0);
		System.out.printf("dbarrier_stale_nodes_deleted %d%n", stale);
		System.out.printf("dbarrier_nodes_left_deleted %d%n", left);
		if (abandoned != null)
		{
			System.out.printf("dbarrier_abandoned %s%n", abandoned);
			System.out.flush();
			System.exit(3);
		}
	}

	/* the contend mode: see the header comment */
	static void contend(String hosts, String[] args) throws Exception
	{
		if (args.length < 6)
			throw new IllegalArgumentException("contend THREADS SECONDS OUTFILE START_EPOCH_MS [per-thread|shared]");
		int nthreads = Integer.parseInt(args[2]);
		double seconds = Double.parseDouble(args[3]);
		String outfile = args[4];
		long startMs = Long.parseLong(args[5]);
		boolean shared = args.length > 6 && args[6].equals("shared");
		if (args.length > 6 && !shared && !args[6].equals("per-thread"))
			throw new IllegalArgumentException("unknown client mode " + args[6]);

		List<CuratorFramework> clients = new ArrayList<>();
		CuratorFramework[] perThread = new CuratorFramework[nthreads];
		for (int i = 0; i < nthreads; i++)
		{
			if (i == 0 || !shared)
				clients.add(connect(hosts));
			perThread[i] = clients.get(clients.size() - 1);
		}
		/* START in this JVM's nanoTime scale */
		long tRec = System.nanoTime() + (startMs - System.currentTimeMillis()) * 1000000L;
		long tEnd = tRec + (long) (seconds * 1e9);
		long lateNs = System.nanoTime() - tRec;

		double[][] waits = new double[nthreads][];
		int[] counts = new int[nthreads];
		Throwable[] errors = new Throwable[nthreads];
		Thread[] threads = new Thread[nthreads];
		for (int i = 0; i < nthreads; i++)
		{
			final int id = i;
			final InterProcessMutex lock = new InterProcessMutex(perThread[i], "/bench/curator_contend");
			threads[i] = new Thread(() -> {
				double[] w = new double[1 << 14];
				int n = 0;
				try
				{
					for (;;)
					{
						long t0 = System.nanoTime();
						if (t0 >= tEnd)
							break;
						if (!lock.acquire(30, TimeUnit.SECONDS))
							throw new IllegalStateException("acquire timed out");
						long tg = System.nanoTime();
						lock.release();
						if (tg >= tRec && tg < tEnd)
						{
							if (n == w.length)
								w = Arrays.copyOf(w, n * 2);
							w[n++] = (tg - t0) / 1000.0;
						}
					}
				}
				catch (Throwable e)
				{
					errors[id] = e;
				}
				waits[id] = w;
				counts[id] = n;
			});
			threads[i].start();
		}
		for (Thread t : threads)
			t.join();
		for (CuratorFramework c : clients)
			c.close();
		for (Throwable e : errors)
			if (e != null)
				throw new RuntimeException(e);

		int total = 0;
		try (PrintWriter out = new PrintWriter(outfile))
		{
			for (int i = 0; i < nthreads; i++)
				for (int k = 0; k < counts[i]; k++)
				{
					out.printf("%.1f%n", waits[i][k]);
					total++;
				}
		}
		System.out.printf("curator_contend_threads %d%n", nthreads);
		System.out.printf("curator_contend_sessions %d%n", clients.size());
		System.out.printf("curator_contend_seconds %.3f%n", seconds);
		System.out.printf("curator_contend_grants %d%n", total);
		System.out.printf("curator_contend_late_start_ms %.1f%n", Math.max(0, lateNs) / 1e6);
	}
}
