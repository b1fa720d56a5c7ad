package holdfast.interop;

import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;

/** What the interop programs share: connections, the database clock, the history file, JSON text. */
final class Jdbc {
  private Jdbc() {}

  static Connection connect(String url) throws SQLException {
    return DriverManager.getConnection(url);
  }

  static boolean isPostgres(String url) {
    return url.startsWith("jdbc:postgresql:");
  }

  /**
   * The database clock in epoch milliseconds as Simba's SQL writes it on MySQL/MariaDB
   * ({@code cast(unix_timestamp(current_timestamp(3)) * 1000 as unsigned)}), and its PostgreSQL
   * equivalent.
   */
  static String nowMillis(String url) {
    return isPostgres(url)
        ? "CAST(FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000) AS BIGINT)"
        : "cast(unix_timestamp(current_timestamp(3)) * 1000 as unsigned)";
  }

  /** The same clock without the cast, as Simba's WHERE clauses compare it. */
  static String nowMillisCompare(String url) {
    return isPostgres(url) ? nowMillis(url) : "(unix_timestamp(current_timestamp(3)) * 1000)";
  }

  /** Appends JSON lines to the shared history: one write per line, so writers never interleave. */
  static final class History {
    private final FileOutputStream out;

    History(String file) throws IOException {
      out = file.equals("-") ? null : new FileOutputStream(file, true);
    }

    synchronized void append(String jsonLine) {
      if (out == null) return;
      try {
        out.write((jsonLine + "\n").getBytes(StandardCharsets.UTF_8));
      } catch (IOException e) {
        throw new IllegalStateException("cannot append to the history", e);
      }
    }
  }

  /** A JSON object from alternating keys and values (String, Number, Boolean or null). */
  static String json(Object... keysAndValues) {
    StringBuilder b = new StringBuilder("{");
    for (int i = 0; i < keysAndValues.length; i += 2) {
      if (i > 0) b.append(',');
      b.append(quote(String.valueOf(keysAndValues[i]))).append(':');
      Object v = keysAndValues[i + 1];
      if (v == null) b.append("null");
      else if (v instanceof Number || v instanceof Boolean) b.append(v);
      else b.append(quote(v.toString()));
    }
    return b.append('}').toString();
  }

  static String quote(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        default -> {
          if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
          else b.append(c);
        }
      }
    }
    return b.append('"').toString();
  }
}
