/** JMH microbenchmarks of doubleface; the packages mirror the production ones. */
package io.doubleface.jmh;
