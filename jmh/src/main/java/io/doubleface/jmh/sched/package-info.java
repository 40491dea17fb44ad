/** Benchmarks of {@code io.doubleface.sched}: the DoubleFace reply scheduler and its policies. */
package io.doubleface.jmh.sched;
