package holdfast.interop;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.lang.reflect.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.Collection;

/**
 * Reads FAILOVER_STORE rows the way Société Générale's failover library does
 * (ReferentialPayloadRowMapper + JsonSerializer): {@code Class.forName(PAYLOAD_CLASS)}, then
 * Jackson's {@code readValue(PAYLOAD, thatClass)}. Prints one line per row of the failover name:
 * key, PAYLOAD_CLASS, the class Jackson built, and what it holds (elements with their classes).
 * Usage: FailoverReader <jdbcUrl> <table> <failoverName>
 */
public final class FailoverReader {
  /** A payload class of the Java service, as a Java record (Jackson 2.12+ builds records). */
  public record Country(String code, long population) {}

  private FailoverReader() {}

  public static void main(String[] args) throws Exception {
    String url = args[0];
    String table = args[1];
    String name = args[2];
    ObjectMapper mapper = new ObjectMapper();
    try (Connection connection = Jdbc.connect(url);
        PreparedStatement statement =
            connection.prepareStatement(
                "SELECT FAILOVER_KEY, PAYLOAD, PAYLOAD_CLASS FROM " + table + " WHERE FAILOVER_NAME = ? ORDER BY FAILOVER_KEY")) {
      statement.setString(1, name);
      try (ResultSet rows = statement.executeQuery()) {
        while (rows.next()) {
          String payloadClass = rows.getString(3);
          String line;
          try {
            Class<?> type = Class.forName(payloadClass);
            Object value = mapper.readValue(rows.getString(2), type);
            line = value.getClass().getName() + "\t" + describe(value);
          } catch (ClassNotFoundException e) {
            line = "ClassNotFoundException\t" + e.getMessage();
          }
          System.out.println(rows.getString(1) + "\t" + payloadClass + "\t" + line);
        }
      }
    }
  }

  private static String describe(Object value) {
    if (value instanceof Collection<?> items) {
      StringBuilder out = new StringBuilder("[");
      for (Object item : items) out.append(out.length() > 1 ? ", " : "").append(element(item));
      return out.append("]").toString();
    }
    if (value.getClass().isArray()) {
      StringBuilder out = new StringBuilder("[");
      for (int i = 0; i < Array.getLength(value); i++) {
        out.append(i > 0 ? ", " : "").append(element(Array.get(value, i)));
      }
      return out.append("]").toString();
    }
    return String.valueOf(value);
  }

  private static String element(Object item) {
    return item.getClass().getSimpleName() + ":" + item;
  }
}
