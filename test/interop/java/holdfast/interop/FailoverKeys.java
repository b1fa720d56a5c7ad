package holdfast.interop;

import java.lang.reflect.Array;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.stream.Collectors;

/**
 * Failover keys as Société Générale's failover library builds them: layer 1 is its
 * DefaultKeyGenerator (no arguments {@code NO-ARG}; null {@code ""}; String, Number, Boolean
 * through {@code String.valueOf}; collections and arrays element by element joined with
 * {@code ,}; an object whose class overrides {@code toString()} by that; arguments joined with
 * {@code :}), layer 2 its FailoverKeyGenerator: {@code UUID.nameUUIDFromBytes(UTF-8(name + ":" +
 * rawKey))}.
 *
 * <p>Prints one line per vector: {@code vector TAB failoverName TAB rawKey TAB uuid}, the raw key
 * with backslash, tab and newline escaped.
 */
public final class FailoverKeys {
  private FailoverKeys() {}

  /** A value object as users write them: a record, whose toString() is its key. */
  record Country(String code, int population) {}

  private static final String ONE = "interop-one";
  private static final String NONE = "interop-none";
  private static final String MANY = "interop-many";

  private record Vector(String name, String failover, List<Object> args) {}

  private static List<Vector> vectors() {
    String thousandAscii = "x".repeat(1000);
    // 250 x (u-umlaut, euro sign, an emoji of two UTF-16 units) = 1,000 Java chars.
    String thousandUnicode = "\u00fc\u20ac\ud83d\ude00".repeat(250);
    List<Vector> v = new ArrayList<>();
    v.add(new Vector("no-args", NONE, List.of()));
    v.add(new Vector("empty-string", ONE, List.of("")));
    v.add(new Vector("ascii", ONE, List.of("FR")));
    v.add(new Vector("unicode", ONE, List.of("Z\u00fcrich \u2013 \u6771\u4eac \u2013 \ud83d\ude80")));
    v.add(new Vector("combining", ONE, List.of("e\u0301t\u00e9")));
    v.add(new Vector("separators", ONE, List.of("a:b,c")));
    v.add(new Vector("int", ONE, List.of(42)));
    v.add(new Vector("negative", ONE, List.of(-7)));
    v.add(new Vector("zero", ONE, List.of(0)));
    v.add(new Vector("max-safe-long", ONE, List.of(9007199254740991L)));
    v.add(new Vector("fraction", ONE, List.of(3.25d)));
    v.add(new Vector("small-fraction", ONE, List.of(0.1d)));
    v.add(new Vector("big-integer", ONE, List.of(new BigInteger("123456789012345678901234567890"))));
    v.add(new Vector("true", ONE, List.of(true)));
    v.add(new Vector("false", ONE, List.of(false)));
    v.add(new Vector("null", ONE, Arrays.asList((Object) null)));
    v.add(new Vector("string-array", ONE, List.of((Object) new String[] {"a", "b", "c"})));
    v.add(new Vector("number-list", ONE, List.of(List.of(1, 2.5d, -3))));
    v.add(new Vector("nested-arrays", ONE, List.of(List.of(List.of(1, 2), List.of(3)))));
    v.add(new Vector("empty-array", ONE, List.of(List.of())));
    v.add(new Vector("array-with-null", ONE, List.of(Arrays.asList("a", null, "b"))));
    v.add(new Vector("value-object", ONE, List.of(new Country("FR", 68000000))));
    v.add(new Vector("thousand-ascii", ONE, List.of(thousandAscii)));
    v.add(new Vector("thousand-unicode", ONE, List.of(thousandUnicode)));
    v.add(new Vector("several-args", MANY, List.of("FR", 42, true)));
    v.add(new Vector("several-with-array", MANY, List.of(List.of("a", "b"), "", 1.5d)));
    return v;
  }

  /** Layer 1: DefaultKeyGenerator.key. */
  static String rawKey(List<Object> args) {
    if (args == null || args.isEmpty()) return "NO-ARG";
    return args.stream().map(FailoverKeys::part).collect(Collectors.joining(":"));
  }

  private static String part(Object item) {
    if (Objects.isNull(item)) return "";
    if (item instanceof Number || item instanceof String || item instanceof Boolean) return String.valueOf(item);
    if (item instanceof Collection<?> collection) {
      return collection.stream().map(FailoverKeys::part).collect(Collectors.joining(","));
    }
    if (item.getClass().isArray()) {
      List<Object> list = new ArrayList<>();
      for (int i = 0; i < Array.getLength(item); i++) list.add(Array.get(item, i));
      return list.stream().map(FailoverKeys::part).collect(Collectors.joining(","));
    }
    if (overridesToString(item.getClass())) return String.valueOf(item);
    return item.getClass().getName() + "@" + Integer.toHexString(item.hashCode());
  }

  private static boolean overridesToString(Class<?> type) {
    try {
      return type.getMethod("toString").getDeclaringClass() != Object.class;
    } catch (NoSuchMethodException e) {
      return false;
    }
  }

  /** Layer 2: FailoverKeyGenerator.generateFinalKey. */
  static String finalKey(String failoverName, String rawKey) {
    return UUID.nameUUIDFromBytes((failoverName + ":" + rawKey).getBytes(StandardCharsets.UTF_8)).toString();
  }

  private static String escape(String s) {
    return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n");
  }

  public static void main(String[] args) {
    StringBuilder out = new StringBuilder();
    for (Vector vector : vectors()) {
      String raw = rawKey(vector.args());
      out.append(vector.name()).append('\t').append(vector.failover()).append('\t').append(escape(raw)).append('\t')
          .append(finalKey(vector.failover(), raw)).append('\n');
    }
    System.out.write(out.toString().getBytes(StandardCharsets.UTF_8), 0, out.toString().getBytes(StandardCharsets.UTF_8).length);
    System.out.flush();
  }
}
