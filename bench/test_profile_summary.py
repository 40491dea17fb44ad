"""bench/profile_summary.py: stacks sorted into the right kind of CPU time, and figures per request."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import profile_summary as ps  # noqa: E402

LOOP = "java/lang/Thread.run;io/netty/channel/SingleThreadIoEventLoop.run"
WRK = """Running 10s test @ http://127.0.0.1:8480/?fanout=5&size=small
  1 threads and 256 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     3.00ms    1.00ms  10.00ms   70.00%%
    Req/Sec    50.00k     1.00k   52.00k    70.00%%
  Latency Distribution
     50%%    3.00ms
     75%%    3.50ms
     90%%    4.00ms
     99%%    8.00ms
  %d requests in 10.00s, 1.00MB read
Requests/sec:  %d
Transfer/sec:      1.00MB
"""


class CategoryTest(unittest.TestCase):
    def test_kernel_time_goes_to_its_system_call(self):
        frames = (LOOP + ";__GI___send;entry_SYSCALL_64_after_hwframe_[k];do_syscall_64_[k];"
                  "__x64_sys_sendto_[k];tcp_sendmsg_[k]").split(";")
        self.assertEqual("kernel: sendto", ps.category(frames))

    def test_a_call_without_its_sys_frame_is_named_by_its_libc_entry(self):
        frames = (LOOP + ";writev;entry_SYSCALL_64_after_hwframe_[k];do_syscall_64_[k];tcp_push_[k]").split(";")
        self.assertEqual("kernel: writev", ps.category(frames))

    def test_user_time_goes_to_the_innermost_framework_package(self):
        frames = (LOOP + ";io/doubleface/redis/RespReplyDecoder.decode;io/netty/buffer/AbstractByteBuf.getByte;"
                  "jdk/internal/misc/ScopedMemoryAccess.getByte").split(";")
        self.assertEqual("user: Netty buffers", ps.category(frames))
        self.assertEqual("user: doubleface: Redis driver",
                         ps.category((LOOP + ";io/doubleface/redis/RespReplyDecoder.decode").split(";")))

    def test_compiler_threads_are_the_jit(self):
        frames = "thread_native_entry;CompileBroker::compiler_thread_loop;C2Compiler::compile_method".split(";")
        self.assertEqual("JIT compiler", ps.category(frames))


class SummaryTest(unittest.TestCase):
    def test_ns_per_request_from_samples_and_requests(self):
        with tempfile.TemporaryDirectory() as out:
            os.makedirs(os.path.join(out, "runs"))
            tag = os.path.join(out, "runs", "r1-5-small-256-ceiling")
            with open(tag + ".wrk.txt", "w") as f:
                f.write(WRK % (997_000, 99_700))
            with open(tag + ".collapsed", "w") as f:  # 1,000 samples of 997 µs over 997,000 requests: 1,000 ns each
                f.write(LOOP + ";writev;entry_SYSCALL_64_after_hwframe_[k];__x64_sys_writev_[k] 600\n")
                f.write(LOOP + ";peers/ceiling/Shard.channelRead 400\n")
            argv, sys.argv = sys.argv, ["profile_summary.py", out]
            try:
                ps.main()
            finally:
                sys.argv = argv
            text = open(os.path.join(out, "profile.md")).read()
        self.assertIn("| **total** | **1,000** |", text)
        self.assertIn("| kernel: writev | 600 |", text)
        self.assertIn("| user: the peer's own code | 400 |", text)


if __name__ == "__main__":
    unittest.main()
