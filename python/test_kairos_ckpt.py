"""Tests of kairos_ckpt: run with /usr/bin/python3 -m unittest python/test_kairos_ckpt.py
(the Java test PythonCheckpointHelperTest runs them in the build)."""

import http.server
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kairos_ckpt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def ck(directory, **kw):
    env = {"RANK": str(kw.pop("rank", 0)), "WORLD_SIZE": str(kw.pop("world", 1))}
    env.update(kw.pop("env", {}))
    return kairos_ckpt.Checkpointer(directory=directory, env=env, **kw)


class ProtocolTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def test_restore_takes_the_newest_complete_checkpoint(self):
        c = ck(self.dir, keep=5)
        self.assertIsNone(c.restore())
        c.save(10, {"w": [1, 2, 3], "step": 10})
        c.save(20, {"w": [4, 5, 6], "step": 20})
        step, state = ck(self.dir).restore()
        self.assertEqual(20, step)
        self.assertEqual([4, 5, 6], state["w"])
        with open(os.path.join(self.dir, "step-0000000020", "MANIFEST.json")) as f:
            manifest = json.load(f)
        self.assertEqual(20, manifest["step"])
        self.assertEqual(["step-0000000020/shard-00000-of-00001." + ("pt" if kairos_ckpt._torch else "pkl")],
                         [s["path"] for s in manifest["shards"]])
        leftovers = [n for d, _, names in os.walk(self.dir) for n in names if ".tmp-" in n]
        self.assertEqual([], leftovers, "no temporary file stays behind")

    def test_a_checkpoint_without_its_manifest_does_not_exist(self):
        c = ck(self.dir, keep=5)
        c.save(10, {"step": 10})
        os.makedirs(os.path.join(self.dir, "step-0000000030"))
        with open(os.path.join(self.dir, "step-0000000030", "shard-00000-of-00001.pkl"), "wb") as f:
            f.write(b"half a shard")
        with open(os.path.join(self.dir, "step-0000000030", "MANIFEST.json.tmp-1"), "w") as f:
            f.write('{"step": 30, "sha')
        self.assertEqual(10, ck(self.dir).restore()[0])

    def test_a_manifest_whose_shard_is_missing_or_short_is_not_complete(self):
        c = ck(self.dir, keep=5)
        c.save(10, {"step": 10})
        c.save(20, {"step": 20})
        shard = [n for n in os.listdir(os.path.join(self.dir, "step-0000000020")) if n.startswith("shard")][0]
        with open(os.path.join(self.dir, "step-0000000020", shard), "ab") as f:
            f.write(b"x")
        self.assertEqual(10, ck(self.dir).restore()[0])

    def test_a_manifest_naming_a_path_outside_the_directory_is_refused(self):
        c = ck(self.dir, keep=5)
        c.save(10, {"step": 10})
        outside = tempfile.NamedTemporaryFile(delete=False)
        outside.write(b"not yours")
        outside.close()
        for bad in ["/etc/passwd", "../" + os.path.basename(outside.name), "step-0000000040/../../x",
                    outside.name]:
            os.makedirs(os.path.join(self.dir, "step-0000000040"), exist_ok=True)
            with open(os.path.join(self.dir, "step-0000000040", "MANIFEST.json"), "w") as f:
                json.dump({"version": 1, "step": 40, "shards": [{"path": bad, "bytes": 9}]}, f)
            with self.assertRaises(kairos_ckpt.CheckpointError):
                kairos_ckpt.read_manifest(self.dir, "step-0000000040")
            self.assertEqual(10, ck(self.dir).restore()[0], bad)
        link = os.path.join(self.dir, "step-0000000040", "shard-00000-of-00001.pkl")
        os.symlink(outside.name, link)
        with open(os.path.join(self.dir, "step-0000000040", "MANIFEST.json"), "w") as f:
            json.dump({"version": 1, "step": 40,
                       "shards": [{"path": "step-0000000040/shard-00000-of-00001.pkl", "bytes": 9}]}, f)
        with self.assertRaises(kairos_ckpt.CheckpointError, msg="a link out of the directory"):
            kairos_ckpt.read_manifest(self.dir, "step-0000000040")
        os.unlink(outside.name)

    def test_every_rank_writes_its_shard_and_rank_0_writes_the_manifest_last(self):
        ranks = [ck(self.dir, rank=r, world=3, keep=5) for r in range(3)]
        done = []
        t = threading.Thread(target=lambda: done.append(ranks[0].save(7, {"rank": 0})))
        t.start()
        time.sleep(0.3)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "step-0000000007", "MANIFEST.json")),
                         "rank 0 waits for every shard")
        ranks[2].save(7, {"rank": 2})
        ranks[1].save(7, {"rank": 1})
        t.join(10)
        self.assertEqual(3, len(done[0]["shards"]))
        for r in range(3):
            step, state = ck(self.dir, rank=r, world=3).restore()
            self.assertEqual((7, r), (step, state["rank"]))

    def test_keeps_the_newest_and_deletes_older_ones(self):
        c = ck(self.dir, keep=2)
        for step in (1, 2, 3, 4):
            c.save(step, {"step": step})
        self.assertEqual(["step-0000000003", "step-0000000004"], sorted(os.listdir(self.dir)))

    def test_the_signal_asks_for_a_checkpoint(self):
        c = ck(self.dir, env={"KAIROS_CHECKPOINT_SIGNAL": "USR2"})
        self.assertFalse(c.due())
        os.kill(os.getpid(), signal.SIGUSR2)
        time.sleep(0.05)
        self.assertTrue(c.due())
        c.save(1, {})
        self.assertFalse(c.due(), "a save answers the request")


class KillDuringManifestTest(unittest.TestCase):
    """kill -9 of rank 0 while it writes the manifest: the previous checkpoint stays the newest."""

    def test_kill_9_while_writing_the_manifest(self):
        with tempfile.TemporaryDirectory() as d:
            ck(d).save(5, {"step": 5})
            code = ("import sys; sys.path.insert(0, %r); import kairos_ckpt;"
                    "kairos_ckpt.Checkpointer(directory=%r).save(6, {'step': 6})" % (HERE, d))
            env = dict(os.environ, RANK="0", WORLD_SIZE="1",
                       KAIROS_CKPT_TEST_PAUSE_BEFORE_MANIFEST="60")
            p = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                                 text=True)
            line = p.stdout.readline()
            self.assertIn("writing manifest of step 6", line)
            p.send_signal(signal.SIGKILL)
            p.wait(10)
            p.stdout.close()
            self.assertTrue(os.path.exists(os.path.join(d, "step-0000000006")))
            self.assertTrue(any(n.startswith("MANIFEST.json.tmp-")
                                for n in os.listdir(os.path.join(d, "step-0000000006"))),
                            "killed with its manifest half written")
            self.assertEqual(5, ck(d).restore()[0])
            # and the next save carries on past it
            c = ck(d, keep=1)
            c.restore()
            c.save(7, {"step": 7})
            self.assertEqual(["step-0000000007"], sorted(os.listdir(d)))


S3_ENDPOINT = os.environ.get("KAIROS_TEST_S3_ENDPOINT")


@unittest.skipUnless(S3_ENDPOINT, "KAIROS_TEST_S3_ENDPOINT names no S3 server (the Java test"
                                  " S3CheckpointTest starts S3Proxy and sets it)")
class S3ProtocolTest(unittest.TestCase):
    """The same protocol in object storage (a real S3-compatible server: S3Proxy)."""

    env = {"KAIROS_S3_ENDPOINT": S3_ENDPOINT or "",
           "AWS_ACCESS_KEY_ID": os.environ.get("AWS_ACCESS_KEY_ID", ""),
           "AWS_SECRET_ACCESS_KEY": os.environ.get("AWS_SECRET_ACCESS_KEY", ""),
           "AWS_DEFAULT_REGION": "us-east-1"}

    def setUp(self):
        self.bucket = os.environ["KAIROS_TEST_S3_BUCKET"]
        self.url = "s3://%s/%s-%d" % (self.bucket, self.id().rsplit(".", 1)[-1], time.time_ns())

    def s3(self, rank=0, world=1, **kw):
        env = dict(self.env, RANK=str(rank), WORLD_SIZE=str(world))
        env.update(kw.pop("env", {}))
        return kairos_ckpt.Checkpointer(url=kw.pop("url", self.url), env=env, **kw)

    def test_restore_takes_the_newest_complete_checkpoint(self):
        c = self.s3(keep=5)
        self.assertIsNone(c.restore())
        c.save(10, {"w": [1, 2, 3]})
        c.save(20, {"w": [4, 5, 6]})
        step, state = self.s3().restore()
        self.assertEqual((20, [4, 5, 6]), (step, state["w"]))
        self.assertEqual(["step-0000000010", "step-0000000020"], sorted(c.store.steps()))

    def test_every_rank_writes_its_shard_and_rank_0_writes_the_manifest_last(self):
        ranks = [self.s3(rank=r, world=3, keep=5) for r in range(3)]
        done = []
        t = threading.Thread(target=lambda: done.append(ranks[0].save(7, {"rank": 0})))
        t.start()
        time.sleep(0.5)
        self.assertIsNone(ranks[0].store.size("step-0000000007/MANIFEST.json"),
                          "rank 0 waits for every shard")
        ranks[2].save(7, {"rank": 2})
        ranks[1].save(7, {"rank": 1})
        t.join(30)
        self.assertEqual(3, len(done[0]["shards"]))
        for r in range(3):
            step, state = self.s3(rank=r, world=3).restore()
            self.assertEqual((7, r), (step, state["rank"]))

    def test_a_shard_without_manifest_or_a_changed_shard_does_not_count(self):
        c = self.s3(keep=5)
        c.save(10, {"step": 10})
        c.store.put("step-0000000030/shard-00000-of-00001.pkl", b"half a shard")
        self.assertEqual(10, self.s3().restore()[0])
        c.save(40, {"step": 40})
        shard = [n for n in c.store.names("step-0000000040") if n.startswith("shard")][0]
        c.store.put("step-0000000040/" + shard, b"x" * 3)
        self.assertEqual(10, self.s3().restore()[0], "a shard of another size: incomplete")

    def test_a_manifest_naming_a_key_outside_the_prefix_is_refused(self):
        c = self.s3(keep=5)
        c.save(10, {"step": 10})
        for bad in ["/etc/passwd", "../other-job/step-0000000001/shard-00000-of-00001.pkl",
                    "step-0000000040/../../x"]:
            c.store.put("step-0000000040/MANIFEST.json", json.dumps(
                {"version": 1, "step": 40, "shards": [{"path": bad, "bytes": 9}]}).encode())
            with self.assertRaises(kairos_ckpt.CheckpointError):
                kairos_ckpt.read_manifest(c.store, "step-0000000040")
            self.assertEqual(10, self.s3().restore()[0], bad)

    def test_keeps_the_newest_and_deletes_older_ones(self):
        c = self.s3(keep=2)
        for step in (1, 2, 3, 4):
            c.save(step, {"step": step})
        self.assertEqual(["step-0000000003", "step-0000000004"], sorted(c.store.steps()))

    def test_kill_9_while_writing_the_manifest(self):
        self.s3().save(5, {"step": 5})
        code = ("import sys; sys.path.insert(0, %r); import kairos_ckpt;"
                "kairos_ckpt.Checkpointer(url=%r).save(6, {'step': 6})" % (HERE, self.url))
        env = dict(os.environ, RANK="0", WORLD_SIZE="1", KAIROS_CKPT_TEST_PAUSE_BEFORE_MANIFEST="60",
                   **{k: v for k, v in self.env.items() if v})
        p = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, text=True)
        line = p.stdout.readline()
        self.assertIn("writing manifest of step 6", line)
        p.send_signal(signal.SIGKILL)
        p.wait(10)
        p.stdout.close()
        c = self.s3(keep=1)
        self.assertTrue(c.store.names("step-0000000006"), "step 6's shard is there")
        self.assertEqual(5, c.restore()[0], "killed with its manifest in flight: step 5 is newest")
        c.save(7, {"step": 7})
        self.assertEqual(["step-0000000007"], sorted(c.store.steps()))


class ReportTest(unittest.TestCase):
    """Rank 0 reports each checkpoint with the job's credential and deletes what Kairos prunes."""

    def test_reports_and_deletes_the_pruned(self):
        seen = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                seen.append((self.path, self.headers["Authorization"], body))
                pruned = [{"step": 1}] if body["step"] == 2 else []
                reply = json.dumps({"job": 9, "checkpoints": [], "pruned": pruned}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args):
                pass

        server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            with tempfile.TemporaryDirectory() as d:
                env = {"KAIROS_SERVER": "http://127.0.0.1:%d" % server.server_port,
                       "KAIROS_JOB_ID": "9", "KAIROS_JOB_TOKEN": "kstep-secret",
                       "KAIROS_ATTEMPT": "1"}
                c = ck(d, keep=5, env=env)
                c.save(1, {"a": 1})
                c.save(2, {"a": 2})
                self.assertEqual(["step-0000000002"], sorted(os.listdir(d)))
        finally:
            server.shutdown()
            server.server_close()
        self.assertEqual(2, len(seen))
        path, auth, body = seen[1]
        self.assertEqual("/api/v1/jobs/9/checkpoints", path)
        self.assertEqual("Bearer kstep-secret", auth)
        self.assertEqual(2, body["step"])
        self.assertEqual("step-0000000002/MANIFEST.json", body["manifest"])
        self.assertEqual(1, len(body["files"]))
        self.assertGreater(body["sizeBytes"], 0)


if __name__ == "__main__":
    unittest.main()
