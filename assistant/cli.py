"""`memory-gate`: the demo, the memory commands and the evaluations, without a checkout.

memory-gate demo [--port 8501]     start the chat on http://127.0.0.1:8501 [--talk FILE]
memory-gate memory --help          add, search, list, delete, seed-demo, import, export,
                                   corrections
memory-gate eval --help            recall@k and gate accuracy on labelled data
memory-gate talk check [FILE]      rehearse a talk: does every beat get the decision it expects?
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

DEFAULT_PORT = 8501
DEFAULT_ADDRESS = "127.0.0.1"  # a memory assistant holds private facts: this machine only


def app_path() -> Path:
    """app.py, found beside the assistant package (a checkout, or site-packages) unimported."""
    return Path(__file__).resolve().parent.parent / "app.py"


def streamlit_command(port: int = DEFAULT_PORT, address: str = DEFAULT_ADDRESS) -> list[str]:
    """The `streamlit run app.py` command line of the demo.

    The settings that matter are flags, not .streamlit/config.toml: an installed copy
    runs from any folder, where Streamlit would not find the checkout's config file.
    """
    return [
        sys.executable, "-m", "streamlit", "run", str(app_path()),
        "--server.address", address,
        "--server.port", str(port),
        "--server.headless", "true",  # no browser popped open, no e-mail prompt on first run
        "--browser.gatherUsageStats", "false",
        # No reload-on-save in a demo. The watcher also walks every imported module on the
        # server's event loop after each run (about half a second with Chroma loaded), and
        # messages sent meanwhile arrive together: Streamlit then drops all but the last.
        "--server.fileWatcherType", "none",
    ]  # fmt: skip


def _demo(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="memory-gate demo", description="Start the Streamlit demo (no API key needed)."
    )
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument(
        "--address",
        default=DEFAULT_ADDRESS,
        help="where to listen (default 127.0.0.1; 0.0.0.0 shows it to your network)",
    )
    parser.add_argument(
        "--talk", type=Path, help="a talk file to start with loaded (memory-gate talk check)"
    )
    args = parser.parse_args(argv)
    if args.talk is not None:
        from assistant.talk import TalkError, read_talk

        try:  # a broken talk is said here, once, before the browser opens
            read_talk(args.talk)
        except TalkError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        os.environ["MEMGATE_TALK"] = str(args.talk.resolve())  # read by Settings.from_env
    if not app_path().is_file():
        print(f"error: the demo app is missing ({app_path()}); reinstall", file=sys.stderr)
        return 1
    command = streamlit_command(args.port, args.address)
    sys.stdout.flush()
    if os.name == "posix":  # become Streamlit: Ctrl-C and signals reach it directly
        os.execv(command[0], command)
    return subprocess.call(command)


def _memory(argv: list[str]) -> int:
    from assistant.gates.corrections.cli import main  # the memory CLI, with `corrections`

    return main(argv)


def _eval(argv: list[str]) -> int:
    from assistant.eval.__main__ import main

    return main(argv)


def _talk(argv: list[str]) -> int:
    from assistant.talk import check

    if argv[:1] != ["check"]:
        print("usage: memory-gate talk check [FILE] [--gate MODE]", file=sys.stderr)
        return 2
    return check(argv[1:])


# name -> (what it does, handler of the remaining arguments)
COMMANDS: dict[str, tuple[str, Callable[[list[str]], int]]] = {
    "demo": ("start the Streamlit demo on 127.0.0.1", _demo),
    "memory": ("manage the memory store (python -m memory)", _memory),
    "eval": ("run an evaluation (python -m assistant.eval)", _eval),
    "talk": ("rehearse a talk file (talk check FILE)", _talk),
}


def main(argv: list[str] | None = None) -> int:
    """Run one `memory-gate` command; its own options and --help belong to that command."""
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in COMMANDS:
        return COMMANDS[argv[0]][1](argv[1:])
    parser = argparse.ArgumentParser(
        prog="memory-gate",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("command", choices=list(COMMANDS), help="; ".join(
        f"{name}: {text}" for name, (text, _) in COMMANDS.items()
    ))  # fmt: skip
    parser.parse_args(argv)  # only reached with no or an unknown command: prints the usage
    return 2


if __name__ == "__main__":
    sys.exit(main())
