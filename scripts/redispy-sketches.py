#!/usr/bin/python3
"""Drives redis-py's sketch APIs (r.cms(); r.topk() and r.tdigest() to be
added by their families) against a probly server, one check per method.

    scripts/redispy-sketches.py [host:port]

Without an address it builds probly (go build ./cmd/probly), starts
`probly serve` on a free loopback port with a temporary data directory,
runs the checks and stops the server. Needs Debian's python3-redis (4.3.x:
RESP2 only). Exit status 0 when every check passed.
"""
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


CHECKS = [check_cms]


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
