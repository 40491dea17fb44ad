package io.doubleface.testing;

import io.doubleface.api.Internal;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.lang.reflect.AnnotatedElement;
import java.lang.reflect.Executable;
import java.lang.reflect.Field;
import java.lang.reflect.GenericArrayType;
import java.lang.reflect.Member;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.lang.reflect.TypeVariable;
import java.lang.reflect.WildcardType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.spi.ToolProvider;
import java.util.stream.Stream;

/**
 * The API boundary as a rule, checked on a module's compiled classes (docs/api.md, "Stability").
 *
 * <ul>
 *   <li>Every package is either API — matched by an {@code <include>} of the japicmp configuration in
 *       the root {@code pom.xml}, the same list that decides what the compatibility check covers — or
 *       internal (a package name with an {@code internal} segment).
 *   <li>No public or protected signature of an API type (supertypes, constructors, methods, fields,
 *       type arguments and bounds) names a doubleface type that is not API: one in an internal
 *       package or marked {@link Internal}. Members marked {@code @Internal} are not API themselves.
 *   <li>{@link #internalDependencies}: what a module's code uses of the framework's internals
 *       (read with the JDK's {@code jdeps}); drivers and examples must use none.
 * </ul>
 */
public final class ApiBoundary {

    private static final Pattern INCLUDE = Pattern.compile("<include>(io\\.doubleface[\\w.]*)</include>");
    private static final Pattern EDGE = Pattern.compile("^\\s+([\\w.$]+)\\s+->\\s+([\\w.$]+)\\s");

    private ApiBoundary() {
    }

    /** {@return the API packages (or single types) named by japicmp's includes in the root pom} */
    public static List<String> apiIncludes() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null) {
            Path pom = dir.resolve("pom.xml");
            try {
                if (Files.isRegularFile(pom)) {
                    String text = Files.readString(pom);
                    int at = text.indexOf("<artifactId>japicmp-maven-plugin</artifactId>");
                    int configured = at < 0 ? -1 : text.indexOf("<includes>", at);
                    if (configured >= 0) {
                        String block = text.substring(configured, text.indexOf("</includes>", configured));
                        List<String> out = new ArrayList<>();
                        Matcher m = INCLUDE.matcher(block);
                        while (m.find()) {
                            out.add(m.group(1));
                        }
                        return out;
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            dir = dir.getParent();
        }
        throw new AssertionError("no pom.xml with japicmp's <includes> above " + Path.of("").toAbsolutePath());
    }

    /** {@return whether {@code className} is in an internal package or marked {@link Internal} (itself or an enclosing type)} */
    public static boolean isInternal(Class<?> c) {
        if (internalPackage(c.getPackageName())) {
            return true;
        }
        for (Class<?> k = c; k != null; k = k.getEnclosingClass()) {
            if (k.isAnnotationPresent(Internal.class)) {
                return true;
            }
        }
        return false;
    }

    private static boolean internalPackage(String pkg) {
        return pkg.equals("io.doubleface.internal") || pkg.startsWith("io.doubleface.internal.") || pkg.contains(".internal.")
                || pkg.endsWith(".internal");
    }

    private static boolean covered(String name, List<String> includes) {
        for (String inc : includes) {
            if (name.equals(inc) || name.startsWith(inc + ".") || name.startsWith(inc + "$")) {
                return true;
            }
        }
        return false;
    }

    /**
     * Checks the classes under {@code classes} (a module's {@code target/classes}).
     *
     * @return one line per violation; empty when the module keeps the rule
     */
    public static List<String> violations(Path classes) {
        List<String> includes = apiIncludes();
        Set<String> out = new TreeSet<>();
        for (String name : classNames(classes)) {
            String pkg = name.substring(0, Math.max(0, name.lastIndexOf('.')));
            if (!pkg.startsWith("io.doubleface")) {
                continue;
            }
            if (!internalPackage(pkg) && !covered(pkg, includes) && !covered(name, includes)) {
                out.add("package " + pkg + " is neither API (a japicmp <include> in pom.xml) nor internal (an 'internal' segment): " + name);
                continue;
            }
            Class<?> c;
            try {
                c = Class.forName(name, false, ApiBoundary.class.getClassLoader());
            } catch (ClassNotFoundException | LinkageError e) {
                out.add("cannot load " + name + ": " + e);
                continue;
            }
            if (!isApi(c, includes)) {
                continue;
            }
            String where = c.getName();
            check(c.getGenericSuperclass(), where + " extends", includes, out);
            for (Type t : c.getGenericInterfaces()) {
                check(t, where + " implements", includes, out);
            }
            for (TypeVariable<?> v : c.getTypeParameters()) {
                for (Type b : v.getBounds()) {
                    check(b, where + "<" + v.getName() + ">", includes, out);
                }
            }
            boolean extendable = !Modifier.isFinal(c.getModifiers());
            for (Executable e : members(c)) {
                if (!exposed(e, extendable) || e.isSynthetic() || (e instanceof Method m && m.isBridge())) {
                    continue;
                }
                String at = where + "." + (e instanceof Method ? e.getName() : "<init>");
                if (e instanceof Method m) {
                    check(m.getGenericReturnType(), at + " returns", includes, out);
                }
                for (Type p : e.getGenericParameterTypes()) {
                    check(p, at + " takes", includes, out);
                }
                for (Type x : e.getGenericExceptionTypes()) {
                    check(x, at + " throws", includes, out);
                }
                for (TypeVariable<?> v : e.getTypeParameters()) {
                    for (Type b : v.getBounds()) {
                        check(b, at + "<" + v.getName() + ">", includes, out);
                    }
                }
            }
            for (Field f : c.getDeclaredFields()) {
                if (exposed(f, extendable) && !f.isSynthetic()) {
                    check(f.getGenericType(), where + "." + f.getName() + " is", includes, out);
                }
            }
        }
        return new ArrayList<>(out);
    }

    private static boolean isApi(Class<?> c, List<String> includes) {
        if (isInternal(c) || c.isSynthetic() || c.isAnonymousClass() || c.isLocalClass()) {
            return false;
        }
        for (Class<?> k = c; k != null; k = k.getEnclosingClass()) {
            if (!Modifier.isPublic(k.getModifiers())) {
                return false;
            }
        }
        return covered(c.getPackageName(), includes) || covered(c.getName(), includes);
    }

    private static List<Executable> members(Class<?> c) {
        List<Executable> all = new ArrayList<>(List.of(c.getDeclaredConstructors()));
        all.addAll(List.of(c.getDeclaredMethods()));
        return all;
    }

    private static boolean exposed(Member m, boolean extendable) {
        int mod = m.getModifiers();
        boolean visible = Modifier.isPublic(mod) || (extendable && Modifier.isProtected(mod));
        return visible && !((AnnotatedElement) m).isAnnotationPresent(Internal.class);
    }

    private static void check(Type t, String where, List<String> includes, Set<String> out) {
        if (t == null) {
            return;
        }
        if (t instanceof Class<?> k) {
            while (k.isArray()) {
                k = k.getComponentType();
            }
            if (k.getName().startsWith("io.doubleface") && !isApi(k, includes)) {
                out.add(where + " " + k.getName() + ", which is not API");
            }
        } else if (t instanceof ParameterizedType p) {
            check(p.getRawType(), where, includes, out);
            check(p.getOwnerType(), where, includes, out);
            for (Type a : p.getActualTypeArguments()) {
                check(a, where, includes, out);
            }
        } else if (t instanceof WildcardType w) {
            for (Type b : w.getUpperBounds()) {
                check(b, where, includes, out);
            }
            for (Type b : w.getLowerBounds()) {
                check(b, where, includes, out);
            }
        } else if (t instanceof GenericArrayType g) {
            check(g.getGenericComponentType(), where, includes, out);
        }
        // type variables are checked where they are declared
    }

    /**
     * What the classes under {@code classes} use of doubleface's internals: one line per
     * dependency, {@code user -> internal type}, read from the bytecode with {@code jdeps}.
     */
    public static List<String> internalDependencies(Path classes) {
        ToolProvider jdeps = ToolProvider.findFirst("jdeps").orElseThrow(() -> new AssertionError("no jdeps in this JDK"));
        StringWriter text = new StringWriter();
        int rc = jdeps.run(new PrintWriter(text), new PrintWriter(text), "-verbose:class", "-filter:none", classes.toString());
        if (rc != 0) {
            throw new AssertionError("jdeps failed (" + rc + "):\n" + text);
        }
        Set<String> out = new TreeSet<>();
        int edges = 0;
        for (String line : text.toString().split("\n")) {
            Matcher m = EDGE.matcher(line);
            if (!m.find()) {
                continue;
            }
            edges++;
            String target = m.group(2);
            if (!target.startsWith("io.doubleface")) {
                continue;
            }
            Class<?> c;
            try {
                c = Class.forName(target, false, ApiBoundary.class.getClassLoader());
            } catch (ClassNotFoundException | LinkageError e) {
                continue; // the module's own classes not on this loader's path cannot be framework internals
            }
            if (c.getName().startsWith("io.doubleface") && isInternal(c) && !sameModule(classes, c)) {
                out.add(m.group(1) + " -> " + target);
            }
        }
        if (edges == 0) {
            throw new AssertionError("jdeps printed no dependency of " + classes + ":\n" + text);
        }
        return new ArrayList<>(out);
    }

    private static boolean sameModule(Path classes, Class<?> c) {
        return Files.exists(classes.resolve(c.getName().replace('.', '/') + ".class"));
    }

    private static List<String> classNames(Path classes) {
        if (!Files.isDirectory(classes)) {
            throw new AssertionError("no compiled classes at " + classes.toAbsolutePath());
        }
        try (Stream<Path> files = Files.walk(classes)) {
            return files.filter(p -> p.toString().endsWith(".class") && !p.getFileName().toString().equals("module-info.class")
                            && !p.getFileName().toString().equals("package-info.class"))
                    .map(p -> classes.relativize(p).toString().replace('/', '.').replaceAll("\\.class$", ""))
                    .sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
