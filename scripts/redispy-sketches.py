#!/usr/bin/python3
"""Drives redis-py's sketch APIs (r.cms(), r.tdigest(); r.topk() is driven
from internal/command/topk's Go tests) against a probly server, one check
per method.

    scripts/redispy-sketches.py [host:port]

Without an address it builds probly (go build ./cmd/probly), starts
`probly serve` on a free loopback port with a temporary data directory,
runs the checks and stops the server. Needs Debian's python3-redis (4.3.x:
RESP2 only). Exit status 0 when every check passed.
"""
import math
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import redis


def check_cms(r):
    """Every method of redis-py's CMSCommands, with spec §4.2 vectors."""
    cms = r.cms()
    assert cms.initbydim("dim", 1000, 5)
    assert cms.initbyprob("prob", 0.001, 0.01)
    assert cms.incrby("dim", ["foo"], [5]) == [5]
    assert cms.query("dim", "notexist") == [0]
    assert cms.query("dim", "foo") == [5]
    assert cms.incrby("dim", ["foo", "bar"], [5, 15]) == [10, 15]
    assert cms.query("dim", "foo", "bar") == [10, 15]
    info = cms.info("dim")
    assert (info.width, info.depth, info.count) == (1000, 5, 25), vars(info)
    info = cms.info("prob")
    assert (info.width, info.depth, info.count) == (2000, 7, 0), vars(info)
    # P:test_cms_merge
    for k in ("A", "B", "C"):
        assert cms.initbydim(k, 1000, 5)
    cms.incrby("A", ["foo", "bar", "baz"], [5, 3, 9])
    cms.incrby("B", ["foo", "bar", "baz"], [2, 3, 1])
    assert cms.merge("C", 2, ["A", "B"])
    assert cms.query("C", "foo", "bar", "baz") == [7, 6, 10]
    assert cms.merge("C", 2, ["A", "B"], ["1", "2"])
    assert cms.query("C", "foo", "bar", "baz") == [9, 9, 11]
    assert cms.merge("C", 2, ["A", "B"], ["2", "3"])
    assert cms.query("C", "foo", "bar", "baz") == [16, 15, 21]
    # Errors reach the client as ResponseError with RedisBloom's text.
    for call, text in ((lambda: cms.query("missing", "x"), "CMS: key does not exist"),
                       (lambda: cms.initbydim("dim", 10, 10), "CMS: key already exists"),
                       (lambda: cms.incrby("dim", ["x"], [-1]), "CMS: Number cannot be negative")):
        try:
            call()
        except redis.ResponseError as e:
            assert str(e) == text, str(e)
        else:
            raise AssertionError("no error, want " + text)
    assert r.type("dim") == b"CMSk-TYPE"


def check_tdigest(r):
    """Every method of redis-py 4.3's TDigestCommands.

    Debian's redis-py 4.3.4 predates RedisBloom 2.4's t-digest syntax: its
    create(key, compression) sends TDIGEST.CREATE key N (RedisBloom 8 wants
    COMPRESSION N), merge(to, from) sends TDIGEST.MERGE to from (RedisBloom 8
    wants numkeys), and add(key, values, weights) sends values and weights
    interleaved, which RedisBloom 8 adds as values. probly answers as
    RedisBloom 8 does, so those calls get RedisBloom 8's replies here.
    """
    td = r.tdigest()
    arity = "wrong number of arguments for 'tdigest.create' command"
    try:
        td.create("old", 100)
    except redis.ResponseError as e:
        assert arity in str(e), str(e)
    else:
        raise AssertionError("TDIGEST.CREATE key 100 accepted; RedisBloom 8 refuses it")
    assert r.execute_command("TDIGEST.CREATE", "t", "COMPRESSION", "100") in (b"OK", "OK", True)
    # add sends 1 1 2 1 3 1 ...: values 1..5 and five more 1s.
    assert td.add("t", [1, 2, 3, 4, 5], [1, 1, 1, 1, 1])
    assert float(td.min("t")) == 1.0
    assert float(td.max("t")) == 5.0
    # redis-py 4.3 parses QUANTILE and CDF as the single double of the
    # pre-2.4 API; RedisBloom 8 (and probly) answer an array, which that
    # parser refuses with a TypeError. The same commands through a client
    # without the t-digest callbacks give the values.
    for call in (lambda: td.quantile("t", 0.5), lambda: td.cdf("t", 5)):
        try:
            call()
        except TypeError:
            pass
        else:
            raise AssertionError("a single double where RedisBloom 8 answers an array")
    raw = redis.Redis(connection_pool=r.connection_pool)
    assert [float(x) for x in raw.execute_command("TDIGEST.QUANTILE", "t", 0.5, 1)] == [1.0, 5.0]
    assert [float(x) for x in raw.execute_command("TDIGEST.CDF", "t", 5, 0)] == [0.95, 0.0]  # the last value counts half (t-digest cdf)
    info = td.info("t")
    assert info.compression == 100, vars(info)
    assert info.capacity == 610, vars(info)  # 6·100 + 10
    try:
        td.merge("t2", "t")
    except redis.ResponseError as e:
        assert "wrong number of arguments for 'tdigest.merge' command" in str(e), str(e)
    else:
        raise AssertionError("TDIGEST.MERGE to from accepted; RedisBloom 8 refuses it")
    assert td.reset("t")
    assert math.isnan(float(td.min("t")))  # an empty digest: nan
    assert r.type("t") == b"TDIS-TYPE"


CHECKS = [check_cms, check_tdigest]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    work, proc = None, None
    try:
        if len(sys.argv) > 1:
            host, port = sys.argv[1].rsplit(":", 1)
        else:
            work = tempfile.mkdtemp()
            root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
            binary = os.path.join(work, "probly")
            subprocess.run(["go", "build", "-o", binary, "./cmd/probly"], cwd=root, check=True)
            host, port = "127.0.0.1", free_port()
            proc = subprocess.Popen([binary, "serve", "--addr", f"{host}:{port}", "--dir", os.path.join(work, "data"),
                                     "--metrics-addr", "off"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        r = redis.Redis(host=host, port=int(port))
        for _ in range(100):
            try:
                r.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.1)
        failed = 0
        for check in CHECKS:
            r.flushall()
            try:
                check(r)
                print("ok  ", check.__name__)
            except Exception as e:  # report every check, then fail
                failed += 1
                print("FAIL", check.__name__, repr(e))
        return 1 if failed else 0
    finally:
        if proc:
            proc.terminate()
            proc.wait()
        if work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
