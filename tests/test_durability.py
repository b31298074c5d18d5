"""Durability: a SIGKILL mid-write loses no acknowledged memory; threads lose nothing."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from memory.store import MemoryStore

ROOT = Path(__file__).resolve().parent.parent

WORDS = (
    "apple river violin tax harbor glacier kitten museum rocket pepper lantern orbit cactus "
    "ledger falcon meadow quartz tundra velvet walrus yacht zephyr anchor bramble copper "
    "dune ember fjord grotto hazel igloo jasmine kelp lagoon marble nectar oasis pylon "
    "quiver raven saffron thistle umber vortex willow xylophone yarrow zinnia"
).split()

WRITER = textwrap.dedent(
    """
    import random, sys
    from memory.store import MemoryStore
    store = MemoryStore.persistent(sys.argv[1], "durable")
    i = 0
    while True:
        words = random.Random(i).sample(sys.argv[2:], 9)
        added = store.remember(f"durable note {i}: " + " ".join(words))
        assert not added.merged
        print(added.id, flush=True)  # acknowledged: remember() returned
        i += 1
    """
)


def _sentence(rng: random.Random, tag: str) -> str:
    return f"{tag}: " + " ".join(rng.sample(WORDS, 9))


@pytest.mark.timeout(300)
def test_sigkill_mid_write_keeps_every_acknowledged_memory(tmp_path):
    folder = tmp_path / "mem"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(folder), *WORDS],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )
    acknowledged: list[str] = []
    try:
        while len(acknowledged) < 40:
            line = proc.stdout.readline()
            assert line, f"writer died early with code {proc.poll()}"
            acknowledged.append(line.strip())
        proc.send_signal(signal.SIGKILL)  # mid-stream: it is writing the next one now
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    # Read it back in a fresh process, as the next app start would.
    check = textwrap.dedent(
        """
        import sys
        from memory.store import MemoryStore
        store = MemoryStore.persistent(sys.argv[1], "durable")
        ids = sys.argv[2:]
        missing = [i for i in ids if store.get(i) is None]
        print(len(missing), store.count())
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", check, str(folder), *acknowledged],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        check=True,
    )
    missing, count = map(int, out.stdout.split())
    assert missing == 0
    assert len(set(acknowledged)) == len(acknowledged)
    assert count >= len(acknowledged)


@pytest.mark.timeout(600)
def test_eight_threads_writing_and_searching_lose_nothing(tmp_path):
    store = MemoryStore.persistent(tmp_path / "mem", "threads")
    store.warm()
    errors: list[BaseException] = []
    written: dict[int, list[str]] = {}
    start = threading.Barrier(8)
    per_thread = 75  # 600 writes: enough to interleave every thread many times over

    def worker(n: int) -> None:
        rng = random.Random(n)
        ids = []
        try:
            start.wait()
            for i in range(per_thread):
                added = store.remember(_sentence(rng, f"thread {n} note {i}"))
                assert not added.merged, "distinct texts must not merge"
                ids.append(added.id)
                if i % 10 == 0:
                    store.search(_sentence(rng, "query"), k=5)
        except BaseException as exc:  # collected and asserted below
            errors.append(exc)
        written[n] = ids

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    all_ids = [i for ids in written.values() for i in ids]
    assert len(all_ids) == len(set(all_ids)) == 8 * per_thread
    assert store.count() == 8 * per_thread
    assert all(store.get(i) is not None for i in all_ids[::37])
    # The lexical half of the hybrid index saw every write too.
    assert len(store.keywords) == store.collection.count() == 8 * per_thread
    probe = store.get(all_ids[-1])
    assert store.search(probe.text, k=1)[0].id == probe.id
