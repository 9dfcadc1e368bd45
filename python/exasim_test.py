#!/usr/bin/env python3
"""The exasim module against the exasim command it wraps (ctest python:module, docs/python.md).

Run from the repository root with PYTHONPATH=build/python and EXASIM_BINARY=build/exasim; exits 77
(ctest's skip) when the module cannot be imported.
"""
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import threading
import time
import unittest

try:
    import exasim
except ImportError as e:
    print(f"exasim module not importable ({e}): skipped")
    sys.exit(77)

DEFAULT = "configs/scenarios/default.json"
BINARY = os.environ.get("EXASIM_BINARY", "build/exasim")
# Small enough to simulate in about a second: 16 GPUs, one layer (as the command's own tests use).
BATCH = {"gpus": 16, "parallel.gdata": 2, "training.global_batch": 16}
SMALL = {**BATCH, "model.layers": 1}


def command_json(*args):
    done = subprocess.run([BINARY, *args, "--json"], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


class Simulate(unittest.TestCase):
    def test_same_time_as_the_command(self):
        # The module and the command run the same library call: the same double, not a close one.
        expected = command_json("simulate", DEFAULT)
        got = exasim.simulate(DEFAULT)
        self.assertEqual(got["iteration_time_s"], expected["iteration_time_s"])
        self.assertEqual(got, expected)

    def test_path_like_and_dict_give_the_file_result(self):
        from_file = exasim.simulate(pathlib.Path(DEFAULT), sets=SMALL)
        with open(DEFAULT) as f:
            doc = json.load(f)
        from_dict = exasim.simulate(doc, sets=SMALL)
        self.assertEqual(from_dict, from_file)

    def test_sets_override_as_dict_or_list(self):
        as_list = [f"{k}={v}" for k, v in SMALL.items()]
        as_dict = exasim.simulate(DEFAULT, sets=SMALL)
        self.assertEqual(as_dict, exasim.simulate(DEFAULT, sets=as_list))
        self.assertEqual(as_dict["gpus"], 16)
        self.assertEqual(as_dict, command_json("simulate", DEFAULT, *[a for s in as_list for a in ("--set", s)]))
        # Twice the layers take longer.
        two_layers = exasim.simulate(DEFAULT, sets={**SMALL, "model.layers": 2})
        self.assertLess(as_dict["iteration_time_s"], two_layers["iteration_time_s"])

    def test_bad_field_raises_input_error_naming_it(self):
        with self.assertRaises(exasim.InputError) as caught:
            exasim.simulate(DEFAULT, sets={"parallel.gx": 3})
        self.assertIn("parallel.gdata: gx*gy*gz*gdata = 3*2*2*8", str(caught.exception))
        self.assertTrue(issubclass(exasim.InputError, ValueError))
        with open(DEFAULT) as f:
            doc = json.load(f)
        doc["no_such_field"] = 1
        with self.assertRaises(exasim.InputError) as caught:
            exasim.simulate(doc)
        self.assertTrue(str(caught.exception).startswith("<dict>"), str(caught.exception))
        self.assertIn("no_such_field", str(caught.exception))

    def test_missing_file_raises_the_commands_message(self):
        done = subprocess.run([BINARY, "simulate", "no-such.json"], capture_output=True, text=True)
        self.assertEqual(done.returncode, 2)
        message = done.stderr.strip().removeprefix("exasim: error: ")
        with self.assertRaises(exasim.InputError) as caught:
            exasim.simulate("no-such.json")
        self.assertEqual(str(caught.exception), message)

    def test_bad_backend_and_sample_layers(self):
        with self.assertRaises(exasim.InputError):
            exasim.simulate(DEFAULT, backend="slow")
        sampled = exasim.simulate(DEFAULT, sets={**SMALL, "model.layers": 8}, sample_layers=2)
        self.assertGreater(sampled["iteration_time_s"], 0)

    def test_releases_the_gil(self):
        # The main thread keeps running while another simulates: with the GIL held it would stall for
        # the whole simulation (about 0.1 s at 512 GPUs), released its longest pause is the interpreter's
        # switch interval (5 ms).
        sets = {"gpus": 512, "parallel.gdata": 64, "training.global_batch": 4096}
        start = time.monotonic()
        exasim.simulate(DEFAULT, sets=sets)
        alone_s = time.monotonic() - start
        worker = threading.Thread(target=exasim.simulate, args=(DEFAULT,), kwargs={"sets": sets})
        last, longest = time.monotonic(), 0.0
        worker.start()
        while worker.is_alive():
            now = time.monotonic()
            longest, last = max(longest, now - last), now
        worker.join()
        self.assertLess(longest, alone_s / 2, f"main thread stalled {longest:.3f} s of a {alone_s:.3f} s run")

    def test_deterministic(self):
        self.assertEqual(exasim.simulate(DEFAULT, sets=SMALL), exasim.simulate(DEFAULT, sets=SMALL))


class Job(unittest.TestCase):
    # One GPU of the 16 straggles, twice as slow (docs/job.md).
    JOB = {"steps": 1000, "failures": {"restart_s": 600}, "checkpoint": {"write_Bps": 1e11},
           "stragglers": {"fraction": 0.0625, "slowdown": 2}}

    def doc(self):
        with open(DEFAULT) as f:
            doc = json.load(f)
        doc["job"] = self.JOB
        return doc

    def test_same_object_as_the_command(self):
        got = exasim.job(self.doc(), sets=SMALL)
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "job.json")
            with open(path, "w") as f:
                json.dump(self.doc(), f)
            expected = command_json("job", path, *[a for k, v in SMALL.items() for a in ("--set", f"{k}={v}")])
        self.assertEqual(got, expected)
        self.assertGreater(got["straggler_iteration_s"], got["iteration_s"])
        self.assertLess(got["goodput"], 1)
        self.assertEqual([w["name"] for w in got["what_if"]][0], "with everything")

    def test_bad_job_key_raises_input_error_naming_it(self):
        with self.assertRaises(exasim.InputError) as caught:
            exasim.job(self.doc(), sets={**SMALL, "job.stragglers.fraction": 2})
        self.assertIn("job.stragglers.fraction", str(caught.exception))


class Commands(unittest.TestCase):
    def test_tune(self):
        t = exasim.tune(DEFAULT, sets={"gpus": 16, "model.layers": 1, "training.global_batch": 16}, top=2)
        for key in ("scenario", "scheme", "gpus", "configs_fitting", "simulated", "best"):
            self.assertIn(key, t)
        self.assertEqual(t["gpus"], 16)
        self.assertLessEqual(len(t["simulated"]), 2)

    def test_sweep(self):
        s = exasim.sweep(DEFAULT, vary={"model.layers": [1, 2]}, sets=BATCH)
        for key in ("scenario", "zip", "tuned", "rows"):
            self.assertIn(key, s)
        self.assertEqual(len(s["rows"]), 2)
        self.assertEqual([r["point"]["model.layers"] for r in s["rows"]], [1, 2])
        self.assertEqual(s["rows"][0]["iteration_time_s"], exasim.simulate(DEFAULT, sets=SMALL)["iteration_time_s"])
        self.assertEqual(s, exasim.sweep(DEFAULT, vary={"model.layers": [1, 2]}, sets=BATCH))

    def test_place(self):
        sets = {"gpus": 64, "parallel": {"scheme": "axonn4d", "gx": 4, "gy": 2, "gz": 2, "gdata": 4},
                "model": "gpt-5b", "model.layers": 2, "training.global_batch": 64}
        p = exasim.place("configs/scenarios/frontier-gpt-40b-4096.json", sets=sets, top=1, budget_s=5)
        for key in ("scenario", "gpus", "baselines", "planned", "planned_iteration_s"):
            self.assertIn(key, p)
        self.assertEqual(p["gpus"], 64)

    def test_place_dict_error_names_dict(self):
        with open(DEFAULT) as f:
            doc = json.load(f)
        doc["gpus"] = "many"
        with self.assertRaises(exasim.InputError) as caught:
            exasim.place(doc)
        self.assertTrue(str(caught.exception).startswith("<dict>"), str(caught.exception))

    def test_topology_and_presets(self):
        t = exasim.topology("frontier")
        self.assertEqual(t["machine"], "frontier")
        self.assertEqual(t, command_json("topo", "frontier"))
        p = exasim.presets()
        for key in ("machines", "models", "gpus"):
            self.assertIn(key, p)
        self.assertIn("frontier", [m["name"] for m in p["machines"]])
        with self.assertRaises(exasim.InputError):
            exasim.topology("no-such-machine")

    def test_version(self):
        done = subprocess.run([BINARY, "--version"], capture_output=True, text=True, check=True)
        self.assertEqual(done.stdout.split()[-1], exasim.__version__)


if __name__ == "__main__":
    unittest.main()
