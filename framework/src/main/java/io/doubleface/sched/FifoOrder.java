package io.doubleface.sched;

/** The baseline: replies in the order they were decoded. */
public final class FifoOrder implements ReplyOrder {

    @Override
    public String name() {
        return "fifo";
    }

    @Override
    public void order(PendingReply[] batch, int size, PendingReply[] out) {
        System.arraycopy(batch, 0, out, 0, size);
    }
}
