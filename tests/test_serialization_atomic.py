"""wg.save to a path is atomic: a process killed mid-save leaves the previous checkpoint whole, and
a save that fails leaves it untouched with no temporary file behind."""
import io
import os
import random
import stat
import subprocess
import sys
import time

import pytest

import webgrad as wg
import webgrad.serialization as serialization

# The child saves checkpoints over one path in a loop, printing each number once it is saved.
# With "stall", its second save stops inside fsync (data written, rename not yet done).
CHILD = r"""
import os, sys, time
import webgrad as wg
path, mode = sys.argv[1], sys.argv[2]

def stalled(fd):
    print("stalled", flush=True)
    time.sleep(60)

block = wg.zeros(1 << 21, device="cpu")
i = 0
while True:
    i += 1
    wg.save({"i": i, "x": block + i, "rest": [block - i, {"i": i}]}, path)
    print(i, flush=True)
    if mode == "stall":
        os.fsync = stalled
"""


def killed_mid_save(path, mode: str, delay: float) -> int:
    """Start the child, let it save at least once, kill it (after ``delay`` s, or in its stalled
    fsync) and return the last number it reported saved."""
    env = dict(os.environ, WEBGRAD_BACKEND="cpu")
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(path), mode], stdout=subprocess.PIPE, env=env)
    try:
        assert proc.stdout.readline() == b"1\n"
        if mode == "stall":
            assert proc.stdout.readline() == b"stalled\n"
        else:
            time.sleep(delay)
    finally:
        proc.kill()
        proc.wait()
    said = [int(line) for line in [b"1"] + proc.stdout.read().split() if line.isdigit()]
    proc.stdout.close()
    return max(said)


def assert_whole(path, saved: int) -> None:
    ck = wg.load(path, map_location="cpu")
    assert ck["i"] in (saved, saved + 1)        # saved + 1: renamed, killed before it said so
    i = ck["i"]
    assert ck["x"].min().item() == ck["x"].max().item() == i
    assert ck["rest"][0].min().item() == ck["rest"][0].max().item() == -i and ck["rest"][1] == {"i": i}


def temporaries(folder):
    return [p for p in os.listdir(folder) if p.endswith(".tmp")]


def test_a_kill_during_the_final_sync_leaves_the_previous_checkpoint(tmp_path):
    path = tmp_path / "ckpt.pt"
    assert killed_mid_save(path, "stall", 0) == 1
    assert temporaries(tmp_path), "the kill should have come mid-save, with the new file not yet renamed"
    assert wg.load(path)["i"] == 1


def test_kills_at_random_moments_never_leave_a_broken_checkpoint(tmp_path):
    path = tmp_path / "ckpt.pt"
    rng = random.Random(1234)
    for _ in range(4):
        saved = killed_mid_save(path, "loop", rng.uniform(0.0, 0.3))
        assert_whole(path, saved)


def test_a_failed_save_leaves_the_previous_file_and_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.pt"
    wg.save({"w": wg.ones(3)}, path)
    before = path.read_bytes()
    with pytest.raises(TypeError, match="cannot store a object"):
        wg.save({"w": wg.zeros(3), "bad": object()}, path)
    calls = []

    def fail_on_second(t):
        calls.append(t)
        if len(calls) == 2:
            raise OSError("disk full")
        return real(t)
    real = serialization.tensor_bytes
    monkeypatch.setattr(serialization, "tensor_bytes", fail_on_second)
    with pytest.raises(OSError, match="disk full"):
        wg.save({"a": wg.zeros(3), "b": wg.zeros(3)}, path)
    assert len(calls) == 2 and path.read_bytes() == before and not temporaries(tmp_path)


def test_an_overwritten_file_keeps_its_mode_and_a_link_writes_through(tmp_path):
    path = tmp_path / "ckpt.pt"
    wg.save({"w": wg.ones(1)}, path)
    os.chmod(path, 0o600)
    wg.save({"w": wg.zeros(1)}, path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600 and wg.load(path)["w"].tolist() == [0.0]
    link = tmp_path / "latest.pt"
    link.symlink_to(path)
    wg.save({"w": wg.full((1,), 2.0)}, link)
    assert link.is_symlink() and wg.load(path)["w"].tolist() == [2.0]


def test_a_file_object_is_written_where_it_stands(tmp_path):
    buf = io.BytesIO()
    wg.save({"w": wg.ones(1)}, buf)
    first = buf.getvalue()
    wg.save({"w": wg.ones(1)}, buf)
    assert buf.getvalue() == first * 2
