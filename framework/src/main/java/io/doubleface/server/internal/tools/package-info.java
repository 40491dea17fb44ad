/**
 * Access to a server's internal parts for doubleface's own tools and tests ({@link
 * io.doubleface.server.internal.tools.ServerInternals}): not API, may change in any release (see
 * docs/api.md, "Stability").
 */
package io.doubleface.server.internal.tools;
