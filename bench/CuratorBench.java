/*
 * CuratorBench: Apache Curator recipes' acquire/release cycles, timed
 * in-process, for zklock's benchmark (compiled by bench/run.sh with javac
 * against the jars in /usr/share/java).
 *
 *   java CuratorBench HOSTS MODE SECONDS OUTFILE [WARMUP_SECONDS]
 *   java CuratorBench HOSTS contend THREADS SECONDS OUTFILE [WARMUP_SECONDS]
 *
 * MODE
 *   mutex     InterProcessMutex on /bench/curator_mutex: acquire(), release()
 *   multiN    (N a number, e.g. multi10) InterProcessMultiLock over N
 *             InterProcessMutex on /zklock/bench/multi_c/N/p1 ..
 *             /zklock/bench/multi_c/N/pN: acquire(), release()
 *   semaphore InterProcessSemaphoreV2 on /zklock/bench/sem_c with maxLeases
 *             4: lease = acquire(), returnLease(lease)
 *
 * Each op is one acquire plus one release, timed with System.nanoTime().
 * Ops during the first WARMUP_SECONDS (default 2; the JIT compiles the hot
 * path meanwhile) are not recorded.  Per-op latencies (microseconds, one
 * per line) go to OUTFILE.
 *
 * contend: THREADS threads, each with its own CuratorFramework client (its
 * own ZooKeeper session, as every PostgreSQL backend has) and its own
 * InterProcessMutex on /bench/curator_contend, loop acquire(); release() as
 * fast as they can; grants whose acquire() returns in [WARMUP, WARMUP +
 * SECONDS) after all threads connected are counted.  OUTFILE gets one line
 * per counted grant: the acquire() wait in microseconds.  Prints
 * "curator_contend_grants N".
 */
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMultiLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
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
			System.err.println("usage: CuratorBench HOSTS mutex|multiN|semaphore SECONDS OUTFILE [WARMUP_SECONDS]\n"
							   + "       CuratorBench HOSTS contend THREADS SECONDS OUTFILE [WARMUP_SECONDS]");
			System.exit(2);
		}
		String hosts = args[0];
		String mode = args[1];
		if (mode.equals("contend"))
		{
			contend(hosts, args);
			return;
		}
		double seconds = Double.parseDouble(args[2]);
		String outfile = args[3];
		double warmup = args.length > 4 ? Double.parseDouble(args[4]) : 2.0;

		CuratorFramework client = connect(hosts);

		Cycle cycle;
		if (mode.equals("mutex"))
			cycle = lockCycle(new InterProcessMutex(client, "/bench/curator_mutex"));
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

	/* the contend mode: see the header comment */
	static void contend(String hosts, String[] args) throws Exception
	{
		if (args.length < 5)
			throw new IllegalArgumentException("contend THREADS SECONDS OUTFILE [WARMUP_SECONDS]");
		int nthreads = Integer.parseInt(args[2]);
		double seconds = Double.parseDouble(args[3]);
		String outfile = args[4];
		double warmup = args.length > 5 ? Double.parseDouble(args[5]) : 2.0;

		CuratorFramework[] clients = new CuratorFramework[nthreads];
		for (int i = 0; i < nthreads; i++)
			clients[i] = connect(hosts);
		long tRec = System.nanoTime() + (long) (warmup * 1e9);
		long tEnd = tRec + (long) (seconds * 1e9);

		double[][] waits = new double[nthreads][];
		int[] counts = new int[nthreads];
		Throwable[] errors = new Throwable[nthreads];
		Thread[] threads = new Thread[nthreads];
		for (int i = 0; i < nthreads; i++)
		{
			final int id = i;
			final InterProcessMutex lock = new InterProcessMutex(clients[i], "/bench/curator_contend");
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
		System.out.printf("curator_contend_grants %d%n", total);
	}
}
