/**
 * Helpers shared by doubleface's own modules (framework, drivers, load generator, CLI): not API,
 * may change in any release (see docs/api.md, "Stability").
 */
package io.doubleface.internal;
