package holdfast.interop;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;

/**
 * Writes and reads {@code COR_MESSAGE} rows the way camunda-bpm-correlate does: its MyBatis
 * mapper's INSERT of all twelve columns and its {@code SELECT *}, instants bound and read as JDBC
 * timestamps (MyBatis' InstantTypeHandler: {@code setTimestamp(Timestamp.from(instant))},
 * {@code getTimestamp(..).toInstant()}), JSON payloads encoded as {@code jackson}, and its
 * MessageEntity.status(maxRetries) with {@code FAR_FUTURE} for a paused message. Run with
 * {@code -Duser.timezone=UTC}: MySQL/MariaDB DATETIME columns hold the JVM's local time.
 *
 * <pre>
 * insert jdbcUrl table id namespace name encoding payloadJson [ttl]
 * read   jdbcUrl table id maxRetries     (prints the row as JSON, or "null")
 * pause  jdbcUrl table id                (MessageManagementService.pauseMessageProcessing)
 * resume jdbcUrl table id                (MessageManagementService.resumeMessageProcessing)
 * </pre>
 */
public final class CorrelateMessages {
  private CorrelateMessages() {}

  /** MessageEntity.FAR_FUTURE: the NEXT_RETRY of a paused message. */
  static final Instant FAR_FUTURE = Instant.parse("4999-12-03T10:15:30Z");

  public static void main(String[] args) throws Exception {
    String url = args[1];
    String table = args[2];
    try (Connection c = Jdbc.connect(url)) {
      switch (args[0]) {
        case "insert" -> insert(c, table, args);
        case "read" -> System.out.println(read(c, table, args[3], Integer.parseInt(args[4])));
        case "pause" -> save(c, table, find(c, table, args[3]).withNextRetry(FAR_FUTURE));
        case "resume" -> {
          Entity e = find(c, table, args[3]);
          save(c, table, e.withNextRetry(e.retries() == 0 ? null : Instant.now()));
        }
        default -> throw new IllegalArgumentException("unknown command " + args[0]);
      }
    }
  }

  /** MyBatisMessageMapper.insert of a new MessageEntity (inserted = now, retries 0, no error). */
  private static void insert(Connection c, String table, String[] args) throws Exception {
    Instant inserted = Instant.now();
    String ttl = args.length > 8 ? args[8] : null;
    Instant expiration = ttl == null ? null : inserted.plus(Duration.parse(ttl));
    String sql =
        "INSERT INTO " + table + "(ID, PAYLOAD_ENCODING, PAYLOAD_TYPE_NAMESPACE, PAYLOAD_TYPE_NAME, "
            + "PAYLOAD_TYPE_REVISION, PAYLOAD, INSERTED, TTL_DURATION, EXPIRATION, RETRIES, NEXT_RETRY, ERROR) "
            + "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
    try (PreparedStatement s = c.prepareStatement(sql)) {
      s.setString(1, args[3]);
      s.setString(2, args[6]);
      s.setString(3, args[4]);
      s.setString(4, args[5]);
      s.setNull(5, Types.VARCHAR);
      s.setBytes(6, args[7].getBytes(StandardCharsets.UTF_8));
      s.setTimestamp(7, Timestamp.from(inserted));
      if (ttl == null) s.setNull(8, Types.VARCHAR);
      else s.setString(8, ttl);
      if (expiration == null) s.setNull(9, Types.TIMESTAMP);
      else s.setTimestamp(9, Timestamp.from(expiration));
      s.setInt(10, 0);
      s.setNull(11, Types.TIMESTAMP);
      s.setNull(12, Types.VARCHAR);
      s.executeUpdate();
    }
    System.out.println(Jdbc.json("id", args[3], "inserted", inserted.toString()));
  }

  /** MyBatisMessageMapper.findById, printed as JSON with MessageEntity.status(maxRetries). */
  private static String read(Connection c, String table, String id, int maxRetries) throws Exception {
    try (PreparedStatement s = c.prepareStatement("SELECT * from " + table + " M WHERE M.ID=? ORDER BY M.INSERTED ASC")) {
      s.setString(1, id);
      try (ResultSet r = s.executeQuery()) {
        if (!r.next()) return "null";
        Instant inserted = instant(r.getTimestamp("INSERTED"));
        Instant expiration = instant(r.getTimestamp("EXPIRATION"));
        Instant nextRetry = instant(r.getTimestamp("NEXT_RETRY"));
        int retries = r.getInt("RETRIES");
        String error = r.getString("ERROR");
        byte[] payload = r.getBytes("PAYLOAD");
        return Jdbc.json(
            "id", r.getString("ID"),
            "payloadEncoding", r.getString("PAYLOAD_ENCODING"),
            "payloadTypeNamespace", r.getString("PAYLOAD_TYPE_NAMESPACE"),
            "payloadTypeName", r.getString("PAYLOAD_TYPE_NAME"),
            "payloadTypeRevision", r.getString("PAYLOAD_TYPE_REVISION"),
            "payload", payload == null ? null : new String(payload, StandardCharsets.UTF_8),
            "inserted", text(inserted),
            "timeToLiveDuration", r.getString("TTL_DURATION"),
            "expiration", text(expiration),
            "retries", retries,
            "nextRetry", text(nextRetry),
            "error", error,
            "status", status(error, retries, nextRetry, maxRetries));
      }
    }
  }

  /** A MessageEntity as the mapper loads it (every column). */
  record Entity(
      String id,
      String payloadEncoding,
      String payloadTypeNamespace,
      String payloadTypeName,
      String payloadTypeRevision,
      byte[] payload,
      Instant inserted,
      String timeToLiveDuration,
      Instant expiration,
      int retries,
      Instant nextRetry,
      String error) {
    Entity withNextRetry(Instant next) {
      return new Entity(id, payloadEncoding, payloadTypeNamespace, payloadTypeName, payloadTypeRevision, payload,
          inserted, timeToLiveDuration, expiration, retries, next, error);
    }
  }

  private static Entity find(Connection c, String table, String id) throws Exception {
    try (PreparedStatement s = c.prepareStatement("SELECT * from " + table + " M WHERE M.ID=? ORDER BY M.INSERTED ASC")) {
      s.setString(1, id);
      try (ResultSet r = s.executeQuery()) {
        if (!r.next()) throw new IllegalArgumentException("Could not find message with id " + id);
        return new Entity(r.getString("ID"), r.getString("PAYLOAD_ENCODING"), r.getString("PAYLOAD_TYPE_NAMESPACE"),
            r.getString("PAYLOAD_TYPE_NAME"), r.getString("PAYLOAD_TYPE_REVISION"), r.getBytes("PAYLOAD"),
            instant(r.getTimestamp("INSERTED")), r.getString("TTL_DURATION"), instant(r.getTimestamp("EXPIRATION")),
            r.getInt("RETRIES"), instant(r.getTimestamp("NEXT_RETRY")), r.getString("ERROR"));
      }
    }
  }

  /** MyBatisMessageMapper.update: every column written back from the entity. */
  private static void save(Connection c, String table, Entity e) throws Exception {
    String sql =
        "UPDATE " + table + " SET PAYLOAD_ENCODING=?, PAYLOAD_TYPE_NAMESPACE=?, PAYLOAD_TYPE_NAME=?, "
            + "PAYLOAD_TYPE_REVISION=?, PAYLOAD=?, INSERTED=?, TTL_DURATION=?, EXPIRATION=?, RETRIES=?, NEXT_RETRY=?, "
            + "ERROR=? WHERE ID=?";
    try (PreparedStatement s = c.prepareStatement(sql)) {
      s.setString(1, e.payloadEncoding());
      s.setString(2, e.payloadTypeNamespace());
      s.setString(3, e.payloadTypeName());
      s.setString(4, e.payloadTypeRevision());
      s.setBytes(5, e.payload());
      s.setTimestamp(6, Timestamp.from(e.inserted()));
      s.setString(7, e.timeToLiveDuration());
      setInstant(s, 8, e.expiration());
      s.setInt(9, e.retries());
      setInstant(s, 10, e.nextRetry());
      s.setString(11, e.error());
      s.setString(12, e.id());
      s.executeUpdate();
    }
  }

  private static void setInstant(PreparedStatement s, int index, Instant value) throws Exception {
    if (value == null) s.setNull(index, Types.TIMESTAMP);
    else s.setTimestamp(index, Timestamp.from(value));
  }

  /** MessageEntity.status(maxRetries). */
  static String status(String error, int retries, Instant nextRetry, int maxRetries) {
    if (error == null && retries == 0) return FAR_FUTURE.equals(nextRetry) ? "PAUSED" : "IN_PROGRESS";
    if (retries == maxRetries) return "MAX_RETRIES_REACHED";
    return FAR_FUTURE.equals(nextRetry) ? "PAUSED" : "RETRYING";
  }

  private static Instant instant(Timestamp t) {
    return t == null ? null : t.toInstant();
  }

  private static String text(Instant i) {
    return i == null ? null : i.toString();
  }
}
