#!/usr/bin/env python3
"""Transactions through redis-py (Debian python3-redis) against probly serve.

Usage: redis_py_tx.py HOST PORT. Exits 0 and prints "ok" when every check
passes; otherwise prints what failed and exits 1. Run by
internal/app/txclients_test.go (issue 15.1).
"""
import sys

import redis


def check(cond, what):
    if not cond:
        print("FAIL:", what)
        sys.exit(1)


def main():
    r = redis.Redis(host=sys.argv[1], port=int(sys.argv[2]))
    r.flushall()

    # The default pipeline is a transaction: MULTI ... EXEC.
    pipe = r.pipeline()
    pipe.set("py:a", "1")
    pipe.execute_command("BF.ADD", "py:f", "x")
    pipe.pfadd("py:h", "a", "b")
    pipe.get("py:a")
    res = pipe.execute()
    check(res == [True, 1, 1, b"1"], "pipeline() replies %r" % (res,))
    check(r.execute_command("BF.EXISTS", "py:f", "x") == 1, "BF.ADD of the transaction applied")

    # A command refused while queuing: EXECABORT, nothing applied.
    pipe = r.pipeline()
    pipe.set("py:q", "1")
    pipe.execute_command("BF.ADD", "py:qf")  # wrong number of arguments
    try:
        pipe.execute()
        check(False, "a transaction with a queued error succeeded")
    except redis.exceptions.ExecAbortError:
        pass
    except redis.exceptions.ResponseError as e:
        # Older redis-py raise the queued command's error itself.
        check("wrong number of arguments" in str(e), "unexpected error %r" % (e,))
    check(r.exists("py:q", "py:qf") == 0, "a transaction with a queued error applied something")

    # A runtime error inside EXEC is that command's reply; the rest runs.
    pipe = r.pipeline()
    pipe.set("py:r1", "1")
    pipe.execute_command("BF.ADD", "py:a", "x")  # WRONGTYPE: py:a is a string
    pipe.set("py:r2", "2")
    res = pipe.execute(raise_on_error=False)
    check(res[0] is True and res[2] is True, "replies around a runtime error %r" % (res,))
    check(isinstance(res[1], redis.exceptions.ResponseError) and "WRONGTYPE" in str(res[1]),
          "runtime error reply %r" % (res[1],))

    # WATCH: optimistic locking, and a conflicting write makes EXEC fail.
    for _ in range(20):
        with r.pipeline() as pipe:
            while True:
                try:
                    pipe.watch("py:cnt")
                    n = int(pipe.get("py:cnt") or 0)
                    pipe.multi()
                    pipe.set("py:cnt", n + 1)
                    pipe.execute()
                    break
                except redis.WatchError:
                    continue
    check(int(r.get("py:cnt")) == 20, "counter after 20 watched increments: %r" % (r.get("py:cnt"),))
    other = redis.Redis(host=sys.argv[1], port=int(sys.argv[2]))
    with r.pipeline() as pipe:
        pipe.watch("py:cnt")
        other.set("py:cnt", "100")
        pipe.multi()
        pipe.set("py:cnt", "0")
        try:
            pipe.execute()
            check(False, "EXEC succeeded although a watched key changed")
        except redis.WatchError:
            pass
    check(r.get("py:cnt") == b"100", "the failed transaction changed the key")
    print("ok")


if __name__ == "__main__":
    main()
