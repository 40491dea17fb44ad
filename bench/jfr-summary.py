#!/usr/bin/env python3
"""Summarises the execution samples of a JFR recording: inclusive share of named frames and
packages, and the top self frames.

  python3 bench/jfr-summary.py RECORDING.jfr [JFR_TOOL]   (JFR_TOOL default: $JAVA_HOME/bin/jfr)

Recordings as docs/benchmarks.md took them: JAVA_OPTS="-XX:StartFlightRecording:jdk.ExecutionSample#period=1ms,
filename=F.jfr,settings=profile,delay=10s,duration=25s" bash bench/peers.sh --systems doubleface ...
"""
import collections, os, re, subprocess, sys

KEYS = ['io.lettuce', 'io.netty.handler.codec.http', 'HttpObjectDecoder', 'HttpObjectEncoder',
        'RedisLoopClient.send', 'StatefulRedisConnectionImpl.dispatch', 'CommandHandler.decode', 'flushDirty',
        'PipelinedConnection.send', 'RespProtocol.encode', 'RespProtocol.reply', 'RedisStateMachine',
        'RespReplyDecoder', 'FanoutExchange.mergeRound', 'ReplyScheduler', 'QueryStringDecoder',
        'scheduleFromEventLoop', 'SharedLock', 'HashIndexedQueue', 'DefaultPromise.notifyListener',
        'checkValidStateRaw', 'isLiveNonVolatile', 'IntObjectHashMap.remove']

def main():
    rec = sys.argv[1]
    tool = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.environ.get('JAVA_HOME', '/usr'), 'bin', 'jfr')
    txt = subprocess.run([tool, 'print', '--events', 'jdk.ExecutionSample', '--stack-depth', '128', rec],
                         capture_output=True, text=True, check=True).stdout
    n, incl, top = 0, collections.Counter(), collections.Counter()
    for e in txt.split('jdk.ExecutionSample {')[1:]:
        frames = re.findall(r'^\s+([\w.$<>]+)\(', e, re.M)
        if not frames:
            continue
        n += 1
        top[frames[0]] += 1
        for k in KEYS:
            if any(k in f for f in frames):
                incl[k] += 1
    print(f'{rec}: {n} execution samples')
    print('\ninclusive (a frame containing the name anywhere on the stack):')
    for k in KEYS:
        print(f'  {100 * incl[k] / n:5.1f}%  {k}')
    print('\ntop self frames:')
    for k, v in top.most_common(30):
        print(f'  {100 * v / n:5.1f}%  {k}')

if __name__ == '__main__':
    main()
