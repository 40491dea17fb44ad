package io.doubleface.sched;

import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.List;

/** A request as the scheduler sees it: a name, a settable outstanding count, and a log of processed calls. */
class TestOwner extends ReplyOwner {

    final String name;
    int outstanding;
    final List<Integer> processed = new ArrayList<>();
    final List<Thread> threads = new ArrayList<>();

    TestOwner(String name, int outstanding) {
        this.name = name;
        this.outstanding = outstanding;
    }

    @Override
    public int outstanding() {
        return outstanding;
    }

    @Override
    protected void processScheduled(int call, Object payload) {
        processed.add(call);
        threads.add(Thread.currentThread());
        outstanding--;
        if (payload != null) {
            ((ByteBuf) payload).release();
        }
    }

    @Override
    public String toString() {
        return name;
    }
}
