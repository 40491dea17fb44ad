package io.doubleface.server.internal;

import java.time.Duration;

/**
 * The limits one upstream HTTP connection enforces: the part of
 * {@link io.doubleface.server.HttpLimits} its handler reads, as a value of this package so that
 * the handlers do not depend on the public {@code server} package that starts them.
 *
 * @param maxInitialLineLength longest request line, bytes
 * @param maxHeaderSize largest header block, bytes
 * @param maxBodySize largest request body, bytes
 * @param maxPipelined requests read ahead of their answers before reading pauses
 * @param maxQueuedBytes response bytes a client may leave unread before it is closed as a slow reader
 * @param slowReaderTimeout how long a client may read nothing while answers wait
 * @param requestReadTimeout how long a request's head and body may take to arrive
 */
public record ConnectionLimits(int maxInitialLineLength, int maxHeaderSize, int maxBodySize, int maxPipelined,
        long maxQueuedBytes, Duration slowReaderTimeout, Duration requestReadTimeout) {}
