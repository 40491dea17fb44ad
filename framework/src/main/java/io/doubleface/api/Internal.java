package io.doubleface.api;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a public type or member of an API package that is not API: doubleface's own plumbing that
 * must stay beside API types (it uses their package-private state), or a member for doubleface's
 * own tools. It may change or go in any release, is left out of the compatibility check, and no API
 * signature names it.
 *
 * <p>Everything else that is not API lives in a package with an {@code internal} segment
 * ({@code io.doubleface.internal.*}, {@code io.doubleface.server.internal}). Both rules are checked
 * by the build: docs/api.md, "Stability".
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.METHOD, ElementType.CONSTRUCTOR, ElementType.FIELD})
public @interface Internal {
}
