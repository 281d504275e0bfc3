"""Drives every method of redis-py's topk() API against a server.

Usage: python3 redispy_topk.py HOST:PORT PROTOCOL
Exits 0 when every check holds; prints the failing check otherwise.
Values are the spec's §4.3 vectors (redis-py's own test_topk and the
RedisBloom flow tests).
"""
import sys

import redis

host, port = sys.argv[1].rsplit(":", 1)
kw = {}
if sys.argv[2] == "3":
    kw["protocol"] = 3
try:
    r = redis.Redis(host=host, port=int(port), decode_responses=True, **kw)
except TypeError:  # redis-py < 5 has no protocol argument
    print("resp3 unsupported by this redis-py")
    sys.exit(3)
tk = r.topk()


def check(name, got, want):
    if got != want:
        print(f"{name}: got {got!r}, want {want!r}")
        sys.exit(1)


check("reserve", tk.reserve("topk", 3, 50, 4, 0.9), True)
check("add", tk.add("topk", "A", "B", "C", "D", "E", "A", "A", "B", "C", "G", "D", "B", "D", "A", "E", "E", 1),
      [None, None, None, "A", "C", "D", None, None, "E", None, "B", "C", None, None, None, "D", None])
check("query", tk.query("topk", "A", "B", "C", "D", "E", "F", "G"), [1, 1, 0, 0, 1, 0, 0])
check("count", tk.count("topk", "A", "B", "C", "D", "E", "F", "G"), [4, 3, 2, 3, 3, 0, 1])

check("reserve list", tk.reserve("topklist", 3, 50, 3, 0.9), True)
tk.add("topklist", "A", "B", "C", "D", "E", "A", "A", "B", "C", "G", "D", "B", "D", "A", "E", "E")
check("list", tk.list("topklist"), ["A", "B", "E"])
check("list withcount", tk.list("topklist", withcount=True), ["A", 4, "B", 3, "E", 3])
info = tk.info("topklist")
check("info", (info.k, info.width, info.depth, float(info.decay)), (3, 50, 3, 0.9))

check("reserve incrby", tk.reserve("inc", 3, 10, 3, 1), True)
check("incrby", tk.incrby("inc", ["bar", "baz", "42"], [3, 6, 2]), [None, None, None])
check("incrby 2", tk.incrby("inc", ["42", "xyzzy"], [8, 4]), [None, "bar"])
check("count incrby", tk.count("inc", "bar", "baz", "42", "xyzzy", 4), [3, 6, 10, 4, 0])

try:
    tk.add("missing", "x")
    print("add on a missing key did not fail")
    sys.exit(1)
except redis.ResponseError as e:
    check("missing key", str(e), "TopK: key does not exist")
print("ok")
