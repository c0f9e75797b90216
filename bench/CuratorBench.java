/*
 * CuratorBench: Apache Curator lock acquire/release cycles, timed
 * in-process, for zklock's benchmark (compiled by bench/run.sh with javac
 * against the jars in /usr/share/java).
 *
 *   java CuratorBench HOSTS MODE SECONDS OUTFILE [WARMUP_SECONDS]
 *
 * MODE
 *   mutex     InterProcessMutex on /bench/curator_mutex: acquire(), release()
 *   rwwrite   InterProcessReadWriteLock on /bench/curator_rw:
 *             writeLock().acquire(), writeLock().release()
 *
 * Each op is one acquire plus one release, timed with System.nanoTime().
 * Ops during the first WARMUP_SECONDS (default 2; the JIT compiles the hot
 * path meanwhile) are not recorded.  Per-op latencies (microseconds, one
 * per line) go to OUTFILE.
 */
import java.io.PrintWriter;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.retry.RetryOneTime;

public class CuratorBench
{
	public static void main(String[] args) throws Exception
	{
		if (args.length < 4)
		{
			System.err.println("usage: CuratorBench HOSTS mutex|rwwrite SECONDS OUTFILE [WARMUP_SECONDS]");
			System.exit(2);
		}
		String hosts = args[0];
		String mode = args[1];
		double seconds = Double.parseDouble(args[2]);
		String outfile = args[3];
		double warmup = args.length > 4 ? Double.parseDouble(args[4]) : 2.0;

		CuratorFramework client = CuratorFrameworkFactory.newClient(
				hosts, 30000, 15000, new RetryOneTime(100));
		client.start();
		if (!client.blockUntilConnected(30, TimeUnit.SECONDS))
			throw new IllegalStateException("could not connect to " + hosts);

		InterProcessLock lock;
		if (mode.equals("mutex"))
			lock = new InterProcessMutex(client, "/bench/curator_mutex");
		else if (mode.equals("rwwrite"))
			lock = new InterProcessReadWriteLock(client, "/bench/curator_rw").writeLock();
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
			if (!lock.acquire(30, TimeUnit.SECONDS))
				throw new IllegalStateException("acquire timed out");
			lock.release();
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
}
