package holdfast.interop;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLIntegrityConstraintViolationException;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A Simba JDBC contender in plain JDBC: the statements of Simba's JdbcMutexOwnerRepository
 * (init row with explicit values, the conditional acquire UPDATE on {@code transition_at} and the
 * owner, the version as optimistic lock, the release) and the scheduling of its
 * JdbcMutexContendService / ContendPeriod (the owner renews at {@code ttl_at}, others try at
 * {@code transition_at} plus a random -200..1000 ms).
 *
 * <p>One addition to Simba's client: the owner stops believing it owns at a local monotonic
 * deadline ({@code ttl + transition - guard} after it sent its last successful acquire), as
 * Holdfast's contender does, so that a late JVM thread on a loaded machine is not counted against
 * the shared SQL.
 *
 * <p>args: jdbcUrl table mutex ttlMs transitionMs historyFile proc. stdout: {@code ready},
 * {@code acquired <token>}, {@code released}. stdin: {@code pause}, {@code resume}; end of input
 * exits.
 */
public final class SimbaContender {
  private final String url;
  private final String table;
  private final String mutex;
  private final long ttl;
  private final long transition;
  private final long guard;
  private final Jdbc.History history;
  private final String proc;
  /** Simba's UUIDContenderIdGenerator: 32 hex characters, the width of owner_id CHAR(32). */
  private final String contenderId = UUID.randomUUID().toString().replace("-", "");

  private final ScheduledExecutorService contendThread = Executors.newSingleThreadScheduledExecutor();
  private final ScheduledExecutorService deadlineThread = Executors.newSingleThreadScheduledExecutor();
  private Connection connection;
  private ScheduledFuture<?> next;

  // Guarded by this.
  private boolean paused;
  private boolean owning;
  private long ownedUntilNanos;
  private Row lastRow;
  private long lastReadNanos;

  /** A row of simba_mutex and the database clock read with it. */
  record Row(long acquiredAt, long ttlAt, long transitionAt, String ownerId, long version, long currentAt) {
    /** Simba's MutexOwner.hasOwner(): the transition has not ended. */
    boolean hasOwner() {
      return transitionAt >= currentAt;
    }
  }

  SimbaContender(String[] args) throws Exception {
    url = args[0];
    table = args[1];
    mutex = args[2];
    ttl = Long.parseLong(args[3]);
    transition = Long.parseLong(args[4]);
    guard = transition / 3;
    history = new Jdbc.History(args[5]);
    proc = args[6];
  }

  public static void main(String[] args) throws Exception {
    SimbaContender contender = new SimbaContender(args);
    contender.start();
    System.out.println("ready " + contender.contenderId);
    System.out.flush();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      if (line.equals("pause")) contender.pause();
      if (line.equals("resume")) contender.resume();
    }
    System.exit(0);
  }

  void start() {
    deadlineThread.scheduleWithFixedDelay(this::checkDeadline, 5, 5, TimeUnit.MILLISECONDS);
    schedule(0);
  }

  private synchronized void schedule(long delayMs) {
    if (paused) return;
    next = contendThread.schedule(this::contendSafely, Math.max(0, delayMs), TimeUnit.MILLISECONDS);
  }

  synchronized void pause() {
    paused = true;
    if (next != null) next.cancel(false);
    contendThread.execute(this::releaseIfOwner);
  }

  synchronized void resume() {
    if (!paused) return;
    paused = false;
    schedule(0);
  }

  // ---- Simba's SQL -------------------------------------------------------------------------

  private Connection connection() throws SQLException {
    if (connection == null || connection.isClosed()) connection = Jdbc.connect(url);
    return connection;
  }

  /** SQL_INIT_MUTEX: every column given explicitly, owner_id '' (free). */
  private void initMutex(Connection c) throws SQLException {
    String sql =
        "insert into " + table + " (mutex, acquired_at, ttl_at, transition_at, owner_id, version) values (?, 0, 0, 0, '', 0)";
    try (PreparedStatement s = c.prepareStatement(sql)) {
      s.setString(1, mutex);
      s.executeUpdate();
    }
  }

  /** SQL_ACQUIRE: free once transition_at has passed, or renewal by the owner during its transition. */
  private boolean acquire(Connection c) throws SQLException {
    String now = Jdbc.nowMillis(url);
    String cmp = Jdbc.nowMillisCompare(url);
    String sql =
        "update " + table + " set acquired_at=" + now + ", ttl_at=(" + now + " + ?), transition_at=(" + now + " + ?), "
            + "owner_id=?, version=version + 1 where mutex = ? and ((transition_at < " + cmp + ") or "
            + "(owner_id = ? and transition_at > " + cmp + "))";
    try (PreparedStatement s = c.prepareStatement(sql)) {
      s.setLong(1, ttl);
      s.setLong(2, ttl + transition);
      s.setString(3, contenderId);
      s.setString(4, mutex);
      s.setString(5, contenderId);
      return s.executeUpdate() > 0;
    }
  }

  /** SQL_GET; null when the row does not exist. owner_id is trimmed: PostgreSQL pads CHAR(32). */
  private Row get(Connection c) throws SQLException {
    String sql =
        "select acquired_at, ttl_at, transition_at, owner_id, version, " + Jdbc.nowMillis(url) + " as current_at from "
            + table + " where mutex = ?";
    try (PreparedStatement s = c.prepareStatement(sql)) {
      s.setString(1, mutex);
      try (ResultSet r = s.executeQuery()) {
        if (!r.next()) return null;
        String owner = r.getString(4);
        return new Row(r.getLong(1), r.getLong(2), r.getLong(3), owner == null ? "" : owner.trim(), r.getLong(5), r.getLong(6));
      }
    }
  }

  /** ensureOwner: read the row, creating it first when missing (a concurrent creator is fine). */
  private Row ensureOwner(Connection c) throws SQLException {
    Row row = get(c);
    if (row != null) return row;
    try {
      initMutex(c);
    } catch (SQLIntegrityConstraintViolationException e) {
      // The unique-key race of concurrent initialization.
    } catch (SQLException e) {
      if (!"23505".equals(e.getSQLState())) throw e; // PostgreSQL unique_violation
    }
    return get(c);
  }

  /** SQL_RELEASE: zero times, no owner, version + 1. */
  private boolean release(Connection c) throws SQLException {
    String sql =
        "update " + table + " set acquired_at=0, ttl_at=0, transition_at=0, owner_id='', version=version + 1 "
            + "where mutex = ? and owner_id = ?";
    try (PreparedStatement s = c.prepareStatement(sql)) {
      s.setString(1, mutex);
      s.setString(2, contenderId);
      return s.executeUpdate() > 0;
    }
  }

  /**
   * acquireAndGetOwner: acquire then read in one transaction, once more when nobody owns. A
   * missing row is created first in a transaction of its own (Simba creates it inside; on
   * PostgreSQL the expected duplicate key of a concurrent creator would abort the transaction).
   */
  private Row acquireAndGetOwner() throws SQLException {
    Connection c = connection();
    c.setAutoCommit(false);
    try {
      boolean acquired = acquire(c);
      Row row = get(c);
      if (row == null) {
        c.commit();
        c.setAutoCommit(true);
        ensureOwner(c);
        c.setAutoCommit(false);
        acquired = acquire(c);
        row = get(c);
      } else if (!acquired && !row.hasOwner()) {
        acquired = acquire(c);
        row = get(c);
      }
      if (acquired && !row.ownerId().equals(contenderId)) {
        throw new IllegalStateException("acquired but the row names " + row.ownerId());
      }
      c.commit();
      return row;
    } catch (SQLException | RuntimeException e) {
      try {
        c.rollback();
      } catch (SQLException ignored) {
        // the connection is replaced by the caller
      }
      throw e;
    } finally {
      if (!c.isClosed()) c.setAutoCommit(true);
    }
  }

  // ---- Scheduling (JdbcMutexContendService + ContendPeriod) --------------------------------

  private void contendSafely() {
    long sent = System.nanoTime();
    Row row;
    try {
      row = acquireAndGetOwner();
    } catch (Exception e) {
      System.err.println("simba contender " + proc + ": " + e);
      try {
        if (connection != null) connection.close();
      } catch (SQLException ignored) {
        // replaced on the next attempt
      }
      connection = null;
      synchronized (this) {
        if (owning) stepDown("failure");
      }
      schedule(ttl);
      return;
    }
    long read = System.nanoTime();
    long delay;
    synchronized (this) {
      if (paused) {
        if (row.ownerId().equals(contenderId)) contendThread.execute(this::releaseIfOwner);
        return;
      }
      if (row.ownerId().equals(contenderId) && row.hasOwner()) {
        long until = sent + TimeUnit.MILLISECONDS.toNanos(row.transitionAt() - row.acquiredAt() - guard);
        lastRow = row;
        lastReadNanos = read;
        if (until <= System.nanoTime()) {
          // The answer came too late to be sure of anything.
          if (owning) stepDown("late");
          delay = 0;
        } else {
          String op = owning ? "renew" : "acquire";
          owning = true;
          ownedUntilNanos = until;
          // The token a Java owner presents to a resource shared with Holdfast is Holdfast's: the
          // row's acquired_at. version is Simba's optimistic lock, checked on its own.
          history.append(Jdbc.json("kind", "simba", "op", op, "proc", proc, "mutex", mutex, "token", row.acquiredAt(),
              "version", row.version(), "at", row.acquiredAt(), "acquiredAt", row.acquiredAt(), "ttlAt", row.ttlAt(),
              "transitionAt", row.transitionAt(), "src", "java"));
          if (op.equals("acquire")) System.out.println("acquired " + row.acquiredAt());
          System.out.flush();
          delay = row.ttlAt() - row.currentAt();
        }
      } else {
        if (owning) stepDown("taken");
        lastRow = row;
        lastReadNanos = read;
        long window = row.transitionAt() - row.ttlAt();
        long random = ThreadLocalRandom.current().nextLong(window == 0 ? 0 : -200, 1000);
        delay = row.transitionAt() - row.currentAt() + random;
      }
    }
    schedule(delay);
  }

  private synchronized void checkDeadline() {
    if (owning && System.nanoTime() >= ownedUntilNanos) stepDown("deadline");
  }

  /** Stops believing it owns; the history gets the database time of that moment (estimated). */
  private void stepDown(String reason) {
    owning = false;
    long at = lastRow.currentAt() + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - lastReadNanos);
    history.append(Jdbc.json("kind", "simba", "op", "release", "proc", proc, "mutex", mutex, "token", lastRow.acquiredAt(),
        "at", at, "reason", reason, "src", "java"));
    System.out.println("released");
    System.out.flush();
  }

  private void releaseIfOwner() {
    synchronized (this) {
      if (owning) stepDown("paused");
    }
    try {
      release(connection());
    } catch (SQLException e) {
      System.err.println("simba contender " + proc + ": release failed: " + e);
    }
  }
}
