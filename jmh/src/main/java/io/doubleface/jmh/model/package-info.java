/** Benchmarks of the costs the threading models of {@code io.doubleface.model} pay: thread hand-offs. */
package io.doubleface.jmh.model;
