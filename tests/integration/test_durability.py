"""Durability: a SIGKILL mid-write or mid-import loses and doubles nothing; nor do threads."""

from __future__ import annotations

import json
import random
import re
import signal
import subprocess
import textwrap
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from memory.store import MemoryStore, release_folder
from tests.processes import run_python, start_python

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
    proc = start_python("-c", WRITER, str(folder), *WORDS, stdout=subprocess.PIPE)
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
    out = run_python("-c", check, str(folder), *acknowledged, check=True)
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
    # 160 writes (a search every 5th): enough to interleave every thread many times over;
    # the count of writes does not change what a lost or doubled write would show.
    per_thread = 20

    def worker(n: int) -> None:
        rng = random.Random(n)
        ids = []
        try:
            start.wait()
            for i in range(per_thread):
                added = store.remember(_sentence(rng, f"thread {n} note {i}"))
                assert not added.merged, "distinct texts must not merge"
                ids.append(added.id)
                if i % 5 == 0:
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
    assert all(store.get(i) is not None for i in all_ids[::19])
    # The lexical half of the hybrid index saw every write too.
    assert len(store.keywords) == store.collection.count() == 8 * per_thread
    probe = store.get(all_ids[-1])
    assert store.search(probe.text, k=1)[0].id == probe.id


# ---- an import killed at any moment, then run again -------------------------------------------

_CLI = ("-m", "memory", "--user", "durable", "--dir")
# Permutations of the words of lines 125 and 250 (the old rule merged such pairs), and a
# fact of another kind: none of them may be touched by the import.
ORIGINALS = (
    "Fact number 125: my locker 875 holds item 125.",
    "Fact number 250: my locker 750 holds item 250.",
    "Alex owes Sam 50 euros.",
)
# Where each run is killed: once it reports this many lines done (None: 1.5 s after it
# starts, while it loads), plus a pause, so the kill lands inside a chunk's embedding or
# its Chroma write. Every killed run starts over from the top of the file. After each
# pause at least a whole chunk is still to come, so every run is killed, never finished.
KILLS = ((None, 0.0), (256, 0.0), (512, 0.6), (768, 0.2), (1024, 0.05))
LINES = 1280  # five chunks of 256: kills land early, mid-way and in the last chunk


def _cli(folder: Path, *args: str) -> str:
    done = run_python(*_CLI, str(folder), *args, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _killed_import(folder: Path, path: Path, after: int | None, pause: float) -> None:
    proc = start_python(
        *_CLI, str(folder), "import", str(path), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        if after is None:
            time.sleep(1.5)
        else:
            for line in proc.stderr:  # "256/2000" after each chunk is committed
                if int(line.split("/")[0]) >= after:
                    break
            else:
                raise AssertionError(f"the import ended before line {after}: {proc.wait()}")
            time.sleep(pause)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == -signal.SIGKILL  # it was killed, not finished


@pytest.mark.timeout(900)
def test_an_import_killed_five_times_ends_with_every_line_once_and_the_originals_kept(tmp_path):
    folder, path = tmp_path / "mem", tmp_path / "lockers.jsonl"
    lines = [f"Fact number {i}: my locker {i} holds item {i * 7 % 1000}." for i in range(LINES)]
    path.write_text("".join(json.dumps({"text": t}) + "\n" for t in lines))
    # The originals are written, and everything is read back, by a store in this process
    # (a fresh open of the folder, as the next app start would read it): the CLI is started
    # only for the imports under test, each CLI start costing ~1 s of the run.
    store = MemoryStore.persistent(folder, "durable")
    store.remember(ORIGINALS[0], {"shelf": "top"})
    for text in ORIGINALS[1:]:
        store.remember(text)
    before = store.export()
    assert {"shelf": "top"} in [m.metadata for m in before] and len(before) == len(ORIGINALS)
    store.close()
    release_folder(folder)  # free for the CLI's processes
    for after, pause in KILLS:
        _killed_import(folder, path, after, pause)
    summary = _cli(folder, "import", str(path))
    store = MemoryStore.persistent(folder, "durable")
    try:
        exported = store.export()
        # Search finds a line written by a killed run, by its words and by its vector.
        top = store.search(lines[700], k=1)
    finally:
        store.close()
        release_folder(folder)
    texts = Counter(m.text for m in exported)
    assert [t for t in lines if texts[t] != 1] == []  # every line, exactly once
    kept = [m for m in exported if m.text in ORIGINALS]
    assert kept == before  # ids, dates, sources, metadata
    assert len(exported) == LINES + len(ORIGINALS)
    assert [m.text for m in top] == [lines[700]]
    # The summary of the last run adds up, and names what the store really holds.
    added, present = (int(n) for n in re.findall(r"imported (\d+),.* skipped (\d+)", summary)[0])
    assert added + present == LINES and added > 0 and present > 0
    assert "merged 0 into memories already there, 0 the same fact" in summary
    assert summary.endswith(f"; {LINES + len(ORIGINALS)} memories in the store\n")
