/** Benchmarks of {@code io.doubleface.tune}: the load detectors of the load adapter. */
package io.doubleface.jmh.tune;
