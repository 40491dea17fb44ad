local fanout, size = os.getenv("FANOUT"), os.getenv("SIZE")
request = function() return wrk.format("GET", "/query?fanout=" .. fanout .. "&size=" .. size .. "&key=" .. math.random(0, 999)) end
done = function(summary, latency, requests)
  io.write(string.format("RESULT %.1f %.3f %.3f %d\n", summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
