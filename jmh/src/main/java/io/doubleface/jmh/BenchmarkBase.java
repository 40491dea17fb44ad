package io.doubleface.jmh;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The shared defaults of every doubleface microbenchmark: average time per operation in
 * nanoseconds, one fork, short iterations sized for the project's 2-core shared machines.
 * Command-line options ({@code -f -wi -w -i -r}) override them; results are only compared
 * within one run (see {@code docs/measuring.md}, "Ratios in one run").
 *
 * <p>Build and list: {@code ./mvnw -B -q -pl jmh -am package -DskipTests && java -jar jmh/target/benchmarks.jar -l}
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms512m", "-Xmx512m", "-Dio.netty.leakDetection.level=disabled"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public abstract class BenchmarkBase {
}
